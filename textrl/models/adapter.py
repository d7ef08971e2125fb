"""A run's output as the next run's model: a LoRA adapter folder (adapter_config.json, no config.json) is loaded on
the base it names, then merged into it (the default: the next run trains the fine-tuned model as a model of its own,
with a new LoRA or in full) or continued (the same adapter keeps training)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError, Problem
from .source import TOKENIZER_FILES, adapter_base

AdapterMode = Literal["merge", "continue"]


def adapter_task(folder: str | Path) -> str | None:
    """'reward' for an adapter trained on a sequence classifier (PEFT's SEQ_CLS), 'causal-lm' otherwise."""
    try:
        config = json.loads((Path(folder) / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return "reward" if isinstance(config, dict) and config.get("task_type") == "SEQ_CLS" else "causal-lm"


def check_mode(folder: str, mode: str, *, new_peft: bool, quantization: str | None, field: str = "model") -> None:
    """Refuse what an adapter's mode cannot do: a second adapter on a continued one, a merge into 4/8-bit weights."""
    if mode not in ("merge", "continue"):
        name = field if field.endswith("adapter") else f"{field}.adapter"
        raise ConfigError([Problem(name, f"got {mode!r}; allowed: merge, continue. Fix: use one.")])
    if mode == "continue" and new_peft:
        raise ConfigError(
            [
                Problem(
                    f"{field}.peft",
                    f"{folder} is a LoRA adapter to continue (adapter: continue), and peft asks for a new one: a model "
                    "trains one adapter. Fix: drop peft to keep training this adapter, or adapter: merge to merge it "
                    "and train a new one on top.",
                )
            ]
        )
    if mode == "merge" and quantization:
        raise ConfigError(
            [
                Problem(
                    f"{field}.adapter",
                    f"{folder} is a LoRA adapter, merged by default, and quantization={quantization!r}: merging into "
                    "4-bit or 8-bit weights rounds the adapter away. Fix: adapter: continue (keep training this "
                    "adapter on the quantized base), or merge it first (textrl-merge --adapter ...) and quantize the "
                    "merged model.",
                )
            ]
        )


def tokenizer_source(folder: str, base: str) -> str:
    """Where the tokenizer loads from: the adapter's folder when the run saved it there (TRL does), else the base."""
    return folder if any((Path(folder) / name).is_file() for name in TOKENIZER_FILES) else base


def with_adapter(model: Any, folder: str, mode: AdapterMode) -> Any:
    """The base model with the adapter of `folder`: merged into its weights, or as a trainable PEFT adapter.

    A merged model is named after the adapter's folder (absolute), so that a new LoRA trained on it records that
    folder as its base: loading the new adapter later rebuilds the whole chain (`load_base`), not the first base
    with the last adapter alone."""
    from peft import PeftModel

    if mode == "continue":
        return PeftModel.from_pretrained(model, folder, is_trainable=True)
    merged = PeftModel.from_pretrained(model, folder).merge_and_unload()
    merged.name_or_path = merged.config._name_or_path = str(Path(folder).resolve())
    # PEFT, saving an adapter, looks for config.json at its base to see whether the vocabulary grew; an adapter
    # folder has none, and merging an adapter never resizes the embeddings, so its warning says nothing here
    warnings.filterwarnings("ignore", r"Could not find a config file in .* will assume that the vocabulary")
    return merged


def load_base(auto: Any, name_or_path: str, kwargs: dict[str, Any]) -> Any:
    """`auto.from_pretrained`, or for an adapter folder (a LoRA run trained on a merged adapter: a chain) its own
    base loaded the same way with its adapter merged in, down to the first full model."""
    parent = adapter_base(name_or_path)
    if parent is None:
        return auto.from_pretrained(name_or_path, **kwargs)
    from . import builtin_model

    return with_adapter(load_base(auto, builtin_model(parent), kwargs), name_or_path, "merge")


__all__ = ["AdapterMode", "adapter_base", "adapter_task", "check_mode", "load_base", "tokenizer_source", "with_adapter"]
