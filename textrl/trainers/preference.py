"""PreferenceTrainer: the DPO loss family (TRL's DPOTrainer) and KTO (TRL's KTOTrainer), chosen by config.algo."""

from __future__ import annotations

from typing import Any

from .base import TextRLTrainer


class PreferenceTrainer(TextRLTrainer):
    """Offline preference training. Pass `ref_model=None` with a LoRA policy (TRL disables the adapter for the
    reference pass); without LoRA and without ref_model TRL loads the reference from the policy's checkpoint."""

    def __init__(self, *, model: Any, ref_model: Any = None, **kwargs: Any) -> None:
        self.ref_model = ref_model
        super().__init__(model=model, **kwargs)

    def _trl_arguments(self) -> dict[str, Any]:
        return {"ref_model": self.ref_model}
