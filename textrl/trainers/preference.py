"""PreferenceTrainer: the DPO loss family (TRL's DPOTrainer) and KTO (TRL's KTOTrainer), chosen by config.algo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..reference_cache.plan import Decision, decide, write_forecast
from ..reference_cache.store import agreed, with_reference_cache
from .base import TextRLTrainer


class PreferenceTrainer(TextRLTrainer):
    """Offline preference training. Pass `ref_model=None` with a LoRA policy (TRL disables the adapter for the
    reference pass); without LoRA and without ref_model TRL loads the reference from the policy's checkpoint.

    With the reference cache in use (option `reference_cache`, see `reference_cache` below) TRL precomputes the
    reference log-probabilities, or TextRL reads them from the cache, before training; then no reference copy is
    needed: pass `ref_model=None` to keep it out of memory (textrl-train does not load one)."""

    reference_cache: Decision
    """Whether this run uses the reference cache, why, and the forecast; `reference_cache_used` says what happened."""

    def __init__(
        self, *, model: Any, ref_model: Any = None, reference_cache: Decision | None = None, **kwargs: Any
    ) -> None:
        """`reference_cache`: the decision textrl-train took before loading the model (whether a reference copy was
        needed hung on it); by default the trainer takes it here, the same way."""
        self.ref_model = ref_model
        self._decided = reference_cache
        super().__init__(model=model, **kwargs)

    def _trainer_class(self) -> type:
        trl_config = self.trl_config
        if self._decided is not None:
            self.reference_cache = self._decided
        else:
            decision = decide(self.config, self.train_dataset, self.eval_dataset, trl_config.world_size)
            self.reference_cache = agreed(decision, trl_config.world_size)
        trainer_class = super()._trainer_class()
        if trl_config.process_index == 0:
            print(f"textrl: {self.reference_cache.line()}", file=sys.stderr)
        if self.reference_cache.active:
            trl_config.precompute_ref_log_probs = True
            assert self.reference_cache.folder is not None
            return with_reference_cache(trainer_class, self.reference_cache.folder)
        if trl_config.precompute_ref_log_probs:  # TRL's own precompute, kept for this run only
            return with_reference_cache(trainer_class, Path(trl_config.output_dir), persist=False)
        return trainer_class

    def _build(self, model: Any, callbacks: list[Any] | None) -> Any:
        trainer = super()._build(model, callbacks)
        decision = self.reference_cache
        used = getattr(trainer, "textrl_cache_used", {})
        if decision.active and decision.folder and decision.forecast and used and trainer.accelerator.is_main_process:
            write_forecast(decision.folder, decision.forecast, {name: key for name, (key, _) in used.items()})
        return trainer

    @property
    def reference_cache_used(self) -> dict[str, bool]:
        """For each dataset (train, eval) whose reference log-probs the cache served or stored: True for a hit."""
        return {name: hit for name, (_, hit) in getattr(self.trl_trainer, "textrl_cache_used", {}).items()}

    def _trl_arguments(self) -> dict[str, Any]:
        return {"ref_model": self.ref_model}
