"""The tables a TRL recipe is read with: its trainers, ModelConfig and ScriptArguments keys, TRL's reward names,
keys TRL renamed or dropped, and keys whose meaning TextRL cannot keep."""

from __future__ import annotations

from typing import Any

from .. import spec

TRAINERS = {"grpo": "grpo", "rloo": "rloo", "dpo": "dpo", "kto": "kto", "reward": "reward_model", "sft": "sft"}
"""TRL's CLI commands and the TextRL algorithm each runs."""

MODEL_KEYS = (
    "model_name_or_path", "model_revision", "dtype", "torch_dtype", "attn_implementation", "use_peft", "lora_r",
    "lora_alpha", "lora_dropout", "lora_target_modules", "lora_target_parameters", "lora_modules_to_save",
    "lora_task_type", "use_rslora", "use_dora", "load_in_8bit", "load_in_4bit", "bnb_4bit_quant_type",
    "use_bnb_nested_quant", "bnb_4bit_quant_storage",
)  # fmt: skip
"""ModelConfig's fields (and its old torch_dtype), which become the model section."""

DATA_KEYS = (
    "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming", "datasets",
    "streaming", "test_split_size", "dataset_mixture",
)  # fmt: skip
"""ScriptArguments' and DatasetMixtureConfig's dataset keys, and the recipe collections' dataset_mixture."""

TRL_REWARDS = {
    "accuracy_reward": "trl.rewards:accuracy_reward",
    "reasoning_accuracy_reward": "trl.rewards:reasoning_accuracy_reward",
    "think_format_reward": "trl.rewards:think_format_reward",
    "get_soft_overlong_punishment": "textrl.rewards.from_trl:soft_overlong_punishment",
}
"""The reward names of TRL's GRPO and RLOO scripts, as references TextRL resolves."""

OPEN_R1_REWARDS = {
    "accuracy": "accuracy_reward", "format": "format_reward", "reasoning_steps": "reasoning_steps_reward",
    "length": "len_reward", "tag_count": "tag_count_reward",
}  # fmt: skip
"""open-r1's reward names that are plain functions of open_r1.rewards (its others are built from script settings)."""

RENAMED = {r.old: (r.new_name, r.what_happened) for r in spec.RENAMED if r.new_name} | {
    "hub_model_revision": ("hub_revision", "the recipe collections' name for the branch pushed to"),
}
"""Keys recipes still carry whose meaning a field of today's TRL keeps under another name: the spec's one-to-one
renames, and the recipe collections' own name for one."""

RENAMED_VALUES = {
    "packing_strategy": {
        "ffd": ("bfd", "TRL 0.20 renamed it: the same packing, first misnamed first-fit decreasing (it picks the "
                "best-fitting sequence)"),
    },
}  # fmt: skip
"""Values recipes still carry that TRL renamed, by key: the value today's TRL gives the same meaning, and why."""

DROPPED = {
    "overwrite_output_dir": "transformers 5 removed it; textrl-train refuses a non-empty output_dir unless you pass "
    "--overwrite (start over) or --resume (continue)",
    "benchmarks": "the recipe collection's evaluation jobs after a push; they do not change training",
    "callbacks": "the recipe collection's push-to-hub callbacks; they do not change training",
    "ignore_bias_buffers": "a work-around of TRL's DPO script for DDP and boolean buffers, off",
}
"""Keys with no effect on the training run, dropped with a note (ignore_bias_buffers only when false)."""

WANDB_ENV = {"wandb_entity": "WANDB_ENTITY", "wandb_project": "WANDB_PROJECT", "wandb_run_group": "WANDB_RUN_GROUP"}
"""The recipe collections set these environment variables from their own keys."""

CODE_REWARDS = (
    "open-r1's setting of its own code rewards. Fix: drop it, and configure the reward function you point "
    "reward_funcs at"
)

CANNOT_KEEP = {
    "system_prompt": "the recipe collection's script adds it to every prompt as a system message; TRL's trainers "
    "do not. Fix: add the system message to the dataset's prompts, then drop the key",
    "dataset_prompt_column": "the recipe collection's script builds prompts from this column. Fix: rename the "
    "column to prompt in the data, then drop the key",
    "dataset_mixture_seed": "not read by TRL. Fix: write seed inside dataset_mixture",
    "code_eval_scoring_mode": CODE_REWARDS,
    "code_eval_test_batch_size": CODE_REWARDS,
    "code_language": CODE_REWARDS,
    "vllm_device": "TRL 0.16 removed it: vLLM no longer runs on a GPU of its own inside the trainer. Fix: drop it, "
    "and set vllm_mode: server (with a vLLM server on that GPU: VLLM_SERVER_DEV_MODE=1 vllm serve MODEL ..., see "
    "textrl.rollout.vllm.VLLM_SERVE) or vllm_mode: colocate",
}
"""Keys whose meaning TextRL cannot keep, each refused with its fix: recipe collections' own keys that change what
is trained, and TRL keys removed without a successor."""

ACCELERATE_PROFILES: dict[str, dict[str, Any]] = {
    "zero1": {"strategy": "deepspeed", "zero_stage": 1},
    "zero2": {"strategy": "deepspeed", "zero_stage": 2},
    "zero3": {"strategy": "deepspeed", "zero_stage": 3},
    "fsdp1": {"strategy": "fsdp", "fsdp_version": 1},
    "fsdp2": {"strategy": "fsdp", "fsdp_version": 2},
    "multi_gpu": {"strategy": "ddp"},
}
"""The accelerate profiles TRL's CLI ships (`accelerate_config: zero2`), as the distributed section."""

PROFILE_PROCESSES = 8
"""The num_processes of every profile above as TRL ships it (trl/accelerate_configs/*.yaml): `trl grpo --config
recipe.yaml` with `accelerate_config: zero2` launches 8 processes."""
