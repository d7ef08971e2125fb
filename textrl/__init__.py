"""TextRL: one stable, typed surface for RL and preference training of text generators, on HuggingFace TRL.

Importing `textrl` is cheap: torch, transformers and trl are imported only by the functions that need them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "1.0.0"

if TYPE_CHECKING:
    from .errors import ConfigError, DataError, MigrationError, RewardError
    from .models import load_model
    from .rewards import reward_fn
    from .trainers import OnlineTrainer, PreferenceTrainer, RewardModelTrainer, SupervisedTrainer
    from .validation.config import TextRLConfig

_LAZY = {
    "TextRLConfig": "textrl.validation.config",
    "ConfigError": "textrl.errors",
    "MigrationError": "textrl.errors",
    "DataError": "textrl.errors",
    "RewardError": "textrl.errors",
    "load_model": "textrl.models",
    "reward_fn": "textrl.rewards",
    "OnlineTrainer": "textrl.trainers",
    "PreferenceTrainer": "textrl.trainers",
    "RewardModelTrainer": "textrl.trainers",
    "SupervisedTrainer": "textrl.trainers",
}

# Names of the PFRL-based TextRL (< 1.0); importing them explains the move instead of a bare ImportError.
_LEGACY = ("TextRLEnv", "TextRLActor", "train_agent_with_evaluation", "SaveModelOnBestEvaluation")


def __getattr__(name: str) -> Any:
    if name in _LEGACY:
        raise ImportError(
            f"textrl.{name} was part of the PFRL-based TextRL API, removed in TextRL 1.0, which trains with "
            "HuggingFace TRL instead. See docs/migration.md for the TextRL 1.0 equivalent (a reward function "
            "plus TextRLConfig(algo='grpo', ...) and OnlineTrainer)."
        )
    from .validation.lazy import lazy_attribute

    return lazy_attribute(__name__, _LAZY, name)


__all__ = [
    "ConfigError",
    "DataError",
    "MigrationError",
    "OnlineTrainer",
    "PreferenceTrainer",
    "RewardError",
    "RewardModelTrainer",
    "SupervisedTrainer",
    "TextRLConfig",
    "__version__",
    "load_model",
    "reward_fn",
]
