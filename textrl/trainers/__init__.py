"""The TextRL trainers; each validates, builds the TRL config with the generated builder, and hands off to TRL.

Which trainer trains which algorithm family is the spec's `Family.trainer`; `trainer_for` reads it. Each trainer's
module is imported when first asked for, so a DPO run does not import the online trainer's reward machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..spec import Family
from ..validation.lazy import lazy_attribute

if TYPE_CHECKING:
    from .base import TextRLTrainer
    from .online import OnlineTrainer
    from .preference import PreferenceTrainer
    from .reward_model import RewardModelTrainer
    from .supervised import SupervisedTrainer

_MODULES = {
    "TextRLTrainer": ".base",
    "OnlineTrainer": ".online",
    "PreferenceTrainer": ".preference",
    "RewardModelTrainer": ".reward_model",
    "SupervisedTrainer": ".supervised",
}


def __getattr__(name: str) -> Any:
    if name == "TRAINERS":  # every trainer a family names, in the spec's order
        return {n: __getattr__(n) for n in dict.fromkeys(f.trainer for f in Family)}
    return lazy_attribute(__name__, _MODULES, name, __package__)


def trainer_for(family: Family) -> type[TextRLTrainer]:
    """The TextRL trainer class for an algorithm family (`TextRLConfig.algorithm().family`)."""
    cls: type[TextRLTrainer] = __getattr__(family.trainer)
    return cls


__all__ = [
    "TRAINERS",
    "OnlineTrainer",
    "PreferenceTrainer",
    "RewardModelTrainer",
    "SupervisedTrainer",
    "TextRLTrainer",
    "trainer_for",
]
