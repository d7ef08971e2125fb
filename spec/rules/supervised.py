"""Rules of supervised fine-tuning: packing and padding-free settings that TRL refuses only once the model has
loaded, or that it runs as something else without a word."""

from collections.abc import Mapping
from typing import Any

from ..model import rule

FLASH_HINTS = ("flash",)
"""Attention implementations that keep padding-free rows apart by their position ids: transformers' flash attention
kernels (flash_attention_2, flash_attention_3, kernels-community/flash-attn*). sdpa and eager ignore position ids
when no attention mask is given, so packed rows attend to each other (measured by
tests/integration/test_supervised.py, test_packed_rows_see_each_other_without_flash_attention)."""


def padding_free_in_effect(cfg: Mapping[str, Any]) -> bool:
    """Whether TRL's SFTTrainer trains padding-free: padding_free, or packing with a best-fit strategy (TRL turns it
    on for bfd and bfd_split)."""
    return bool(cfg.get("padding_free")) or (
        bool(cfg.get("packing")) and cfg.get("packing_strategy") in ("bfd", "bfd_split")
    )


@rule("packing", "max_length", description="packing needs a max_length: the length of each packed sequence.")
def packing_needs_length(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("packing") and cfg.get("max_length") is None:
        return (
            "packing=True with max_length=None: packing fills sequences of max_length tokens, and TRL refuses it "
            "only after the model has loaded. Fix: set max_length (e.g. 1024), or packing: false."
        )
    return None


@rule(
    "padding_free",
    "packing",
    "max_length",
    description="padding_free without packing does not truncate, so it needs max_length: null.",
)
def padding_free_without_truncation(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("padding_free") and not cfg.get("packing") and cfg.get("max_length") is not None:
        return (
            f"padding_free=True without packing, with max_length={cfg.get('max_length')}: padding-free batches are "
            "not truncated, and TRL refuses this only after the model has loaded. Fix: packing: true (rows packed "
            "into max_length), or max_length: null with rows already short enough."
        )
    return None


@rule(
    "packing",
    "padding_free",
    "packing_strategy",
    "model",
    description="Padding-free training (padding_free, or packing with bfd or bfd_split) needs a flash attention "
    "kernel (model.attn_implementation): sdpa and eager let packed rows attend to each other.",
)
def padding_free_needs_flash_attention(cfg: Mapping[str, Any]) -> str | None:
    model = cfg.get("model")
    if model is None or not padding_free_in_effect(cfg):  # no model section (Python API): the trainer checks
        return None
    kernel = getattr(model, "attn_implementation", None)
    if kernel is not None and any(h in str(kernel) for h in FLASH_HINTS):
        return None
    setting = (
        "padding_free=True"
        if cfg.get("padding_free")
        else f"packing=True with packing_strategy={cfg.get('packing_strategy')!r}"
    )
    return (
        f"{setting} trains padding-free, which keeps rows apart only under a flash attention kernel; "
        f"model.attn_implementation is {kernel!r}, under which TRL would train each packed row attending to the "
        "rows beside it, without a word. Fix: model: {attn_implementation: flash_attention_2} on a GPU that has "
        "it, or packing_strategy: wrapped (rows concatenated on purpose), or packing: false."
    )
