"""The three TextRL trainers; each validates, builds the TRL config with the generated builder, and hands off to TRL."""

from .online import OnlineTrainer
from .preference import PreferenceTrainer
from .reward_model import RewardModelTrainer

__all__ = ["OnlineTrainer", "PreferenceTrainer", "RewardModelTrainer"]
