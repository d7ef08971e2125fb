"""RewardModelTrainer: a sequence classifier trained on preference pairs (TRL's RewardTrainer)."""

from __future__ import annotations

from .base import TextRLTrainer


class RewardModelTrainer(TextRLTrainer):
    """Trains a reward model; load it with `load_model(path)` (a classifier head is loaded for classifiers)."""
