"""RewardModelTrainer: a sequence classifier trained on preference pairs (TRL's RewardTrainer)."""

from __future__ import annotations

from typing import Any, ClassVar

from ..spec import Family
from .base import TextRLTrainer


class RewardModelTrainer(TextRLTrainer):
    """Trains a reward model; load it with `load_model(path)` (a classifier head is loaded for classifiers)."""

    families: ClassVar[tuple[Family, ...]] = (Family.REWARD_MODEL,)

    def _build(self, model: Any, callbacks: list[Any] | None) -> Any:
        from trl import RewardTrainer

        return RewardTrainer(
            model=model,
            args=self.trl_config,
            train_dataset=self.train_dataset,
            eval_dataset=self.eval_dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
        )
