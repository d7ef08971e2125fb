"""Cross-field rules: what TRL checks late (inside the loss, at trainer init) or not at all.

Each check receives the validated values of one config and returns None or the whole message. The rules live by
topic: `losses` (pairwise loss options), `batching` (generation and evaluation batches), `training` (options every
algorithm shares), `data` (the data and reward sections), `effect` (options that would not take effect) and `supervised`
(packing and padding-free training);
`COMMON_RULES` are the ones every algorithm gets.
"""

from .batching import eval_generation_batch_divisible, generation_batch, generation_batch_divisible
from .data import composed_reward_weights, eval_rows_not_held_out, mixture_shares, one_eval_set, test_split_share
from .effect import padding_free_unavailable, reward_weights_count, tool_iterations_need_tools
from .losses import pairwise_rules
from .supervised import packing_needs_length, padding_free_needs_flash_attention, padding_free_without_truncation
from .training import (
    best_checkpoint_metric,
    no_lora_on_lm_head,
    one_precision,
    plateau_scheduler_needs_eval,
    quantized_needs_peft,
    ref_sync_not_precomputed,
    reference_cache_whole_weights,
    stall_timeout_positive,
    vllm_not_8bit,
    vllm_settings_need_use_vllm,
    whole_steps,
    zero3_not_quantized,
)

COMMON_RULES = (
    one_precision,
    test_split_share,
    one_eval_set,
    mixture_shares,
    eval_rows_not_held_out,
    zero3_not_quantized,
    quantized_needs_peft,
    best_checkpoint_metric,
    plateau_scheduler_needs_eval,
    stall_timeout_positive,
    *(whole_steps(n) for n in ("logging_steps", "save_steps", "eval_steps")),
)
"""Rules about the training options every algorithm shares."""

__all__ = [
    "COMMON_RULES",
    "best_checkpoint_metric",
    "composed_reward_weights",
    "eval_generation_batch_divisible",
    "eval_rows_not_held_out",
    "generation_batch",
    "generation_batch_divisible",
    "mixture_shares",
    "no_lora_on_lm_head",
    "one_eval_set",
    "one_precision",
    "packing_needs_length",
    "padding_free_needs_flash_attention",
    "padding_free_unavailable",
    "padding_free_without_truncation",
    "pairwise_rules",
    "plateau_scheduler_needs_eval",
    "quantized_needs_peft",
    "ref_sync_not_precomputed",
    "reference_cache_whole_weights",
    "reward_weights_count",
    "stall_timeout_positive",
    "test_split_share",
    "tool_iterations_need_tools",
    "vllm_not_8bit",
    "vllm_settings_need_use_vllm",
    "zero3_not_quantized",
]
