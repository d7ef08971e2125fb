"""SupervisedTrainer: supervised fine-tuning on demonstrations (TRL's SFTTrainer), the warm start before RL."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError, Problem
from ..validation.view import supervised
from .base import TextRLTrainer


class SupervisedTrainer(TextRLTrainer):
    """Trains a causal LM on text, chat messages, or prompt and completion rows; its output (full weights, or a LoRA
    adapter) is a `model:` for the next run (GRPO, DPO, ...)."""

    def _check_data(self, dataset: Any, name: str) -> Any:
        sft = supervised(self.config)
        assert sft is not None  # the trainer trains the supervised family only (TextRLTrainer._config)
        checked = super()._check_data(dataset, name)
        if sft.assistant_only_loss and self.tokenizer is not None and sft.chat_template_path is None:
            from ..data.supervised import check_assistant_template, check_supervised

            check_supervised(checked, completion_only_loss=sft.completion_only_loss, assistant_only_loss=True,
                             text_field=sft.dataset_text_field, name=name)  # fmt: skip
            template = getattr(self.tokenizer, "chat_template", None)
            if isinstance(template, dict):  # named variants: TRL reads the default one
                template = template.get("default")
            check_assistant_template(template, str(getattr(self.tokenizer, "name_or_path", "") or "the tokenizer"))
        return checked

    def _build(self, model: Any, callbacks: list[Any] | None) -> Any:
        """TRL's trainer, once the model has passed `padding_free_needs_flash_attention` as loaded: the config rule
        checks a model: section, and a model passed in Python has none (TRL would train it without a word)."""
        from types import SimpleNamespace

        from ..spec.rules import padding_free_needs_flash_attention as rule

        sft = supervised(self.config)
        assert sft is not None
        kernel = getattr(getattr(model, "config", None), "_attn_implementation", None)
        values = {"padding_free": sft.padding_free, "packing": sft.packing, "packing_strategy": sft.packing_strategy,
                  "model": SimpleNamespace(attn_implementation=kernel)}  # fmt: skip
        message = rule.violation(values) if kernel is not None else None
        if message:
            field = "packing" if sft.packing else "padding_free"
            raise ConfigError([Problem(field, message)], algo=self.config.algo)
        return super()._build(model, callbacks)
