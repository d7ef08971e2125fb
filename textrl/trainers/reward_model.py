"""RewardModelTrainer: a sequence classifier trained on preference pairs (TRL's RewardTrainer)."""

from __future__ import annotations

from typing import ClassVar

from ..spec import Family
from .base import TextRLTrainer


class RewardModelTrainer(TextRLTrainer):
    """Trains a reward model; load it with `load_model(path)` (a classifier head is loaded for classifiers)."""

    families: ClassVar[tuple[Family, ...]] = (Family.REWARD_MODEL,)
