"""The three TextRL trainers; each validates, builds the TRL config with the generated builder, and hands off to TRL.

Which trainer trains which algorithm family is the spec's `Family.trainer`; `trainer_for` reads it.
"""

from ..spec import Family
from .base import TextRLTrainer
from .online import OnlineTrainer
from .preference import PreferenceTrainer
from .reward_model import RewardModelTrainer

TRAINERS: dict[str, type[TextRLTrainer]] = {
    cls.__name__: cls for cls in (OnlineTrainer, PreferenceTrainer, RewardModelTrainer)
}


def trainer_for(family: Family) -> type[TextRLTrainer]:
    """The TextRL trainer class for an algorithm family (`TextRLConfig.algorithm().family`)."""
    return TRAINERS[family.trainer]


__all__ = ["TRAINERS", "OnlineTrainer", "PreferenceTrainer", "RewardModelTrainer", "TextRLTrainer", "trainer_for"]
