"""Cross-field rules: what TRL checks late (inside the loss, at trainer init) or not at all.

Each check receives the validated values of one config and returns None or the whole message. The rules live by
topic: `losses` (pairwise loss options), `batching` (generation and evaluation batches), `training` (options every
algorithm shares), `data` (the data and reward sections) and `effect` (options that would not take effect);
`COMMON_RULES` are the ones every algorithm gets.
"""

from .batching import EVAL_GENERATION_BATCH, GENERATION_BATCH, generation_batch
from .data import COMPOSED_REWARD_WEIGHTS, EVAL_ROWS_NOT_HELD_OUT, MIXTURE_SHARES, ONE_EVAL_SET, TEST_SPLIT_SHARE
from .effect import PADDING_FREE_UNAVAILABLE, REWARD_WEIGHTS_COUNT, TOOL_ITERATIONS_NEED_TOOLS
from .losses import pairwise_rules
from .training import (
    BEST_NEEDS_METRIC,
    NO_LORA_ON_HEAD,
    PLATEAU_NEEDS_EVAL,
    PRECISION,
    QUANTIZED_NEEDS_PEFT,
    REF_SYNC_NOT_PRECOMPUTED,
    REFERENCE_CACHE_WHOLE_WEIGHTS,
    STALL_TIMEOUT_POSITIVE,
    VLLM_NOT_8BIT,
    VLLM_SETTINGS_NEED_VLLM,
    ZERO3_NOT_QUANTIZED,
    whole_steps,
)

COMMON_RULES = (
    PRECISION,
    TEST_SPLIT_SHARE,
    ONE_EVAL_SET,
    MIXTURE_SHARES,
    EVAL_ROWS_NOT_HELD_OUT,
    ZERO3_NOT_QUANTIZED,
    QUANTIZED_NEEDS_PEFT,
    BEST_NEEDS_METRIC,
    PLATEAU_NEEDS_EVAL,
    STALL_TIMEOUT_POSITIVE,
    *(whole_steps(n) for n in ("logging_steps", "save_steps", "eval_steps")),
)
"""Rules about the training options every algorithm shares."""

__all__ = [
    "BEST_NEEDS_METRIC",
    "COMMON_RULES",
    "COMPOSED_REWARD_WEIGHTS",
    "EVAL_GENERATION_BATCH",
    "EVAL_ROWS_NOT_HELD_OUT",
    "GENERATION_BATCH",
    "MIXTURE_SHARES",
    "NO_LORA_ON_HEAD",
    "ONE_EVAL_SET",
    "PADDING_FREE_UNAVAILABLE",
    "PLATEAU_NEEDS_EVAL",
    "PRECISION",
    "QUANTIZED_NEEDS_PEFT",
    "REFERENCE_CACHE_WHOLE_WEIGHTS",
    "REF_SYNC_NOT_PRECOMPUTED",
    "REWARD_WEIGHTS_COUNT",
    "STALL_TIMEOUT_POSITIVE",
    "TEST_SPLIT_SHARE",
    "TOOL_ITERATIONS_NEED_TOOLS",
    "VLLM_NOT_8BIT",
    "VLLM_SETTINGS_NEED_VLLM",
    "ZERO3_NOT_QUANTIZED",
    "generation_batch",
    "pairwise_rules",
]
