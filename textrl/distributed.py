"""`distributed:` in the config, turned into what the engines take: TRL/transformers arguments (a DeepSpeed config
dict, FSDP options) and an accelerate config file for `accelerate launch`. TextRL writes settings; accelerate,
DeepSpeed and FSDP do the work. Imports nothing heavy (the dry run and the config writer use it without torch).

DeepSpeed values left as "auto" are filled by transformers from the training arguments (batch sizes, gradient
accumulation and clipping, precision), so the two can never disagree.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from .errors import ConfigError, Problem

DEEPSPEED_DEFAULT_STAGE = 2
FSDP_DEFAULT_VERSION = 2


def deepspeed_config(section: Any) -> dict[str, Any]:
    """The DeepSpeed JSON config (as a dict) for a `distributed: {strategy: deepspeed, ...}` section."""
    stage = section.zero_stage or DEEPSPEED_DEFAULT_STAGE
    zero: dict[str, Any] = {"stage": stage, "overlap_comm": True, "contiguous_gradients": True,
                            "reduce_bucket_size": "auto"}  # fmt: skip
    if stage == 3:
        zero |= {
            "stage3_prefetch_bucket_size": "auto",
            "stage3_param_persistence_threshold": "auto",
            "stage3_gather_16bit_weights_on_model_save": True,  # a checkpoint a single process can load
        }
    config: dict[str, Any] = {
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "bf16": {"enabled": "auto"},
        "fp16": {"enabled": "auto"},
        "zero_optimization": zero,
    }
    if section.offload in ("optimizer", "optimizer_and_parameters"):
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        # ZeRO-Offload refuses a torch optimizer (ZeRORuntimeException): DeepSpeed's CPU AdamW takes over, its
        # hyperparameters filled by transformers from learning_rate, adam_beta1/2, adam_epsilon and weight_decay
        config["optimizer"] = {
            "type": "AdamW",
            "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"},
        }
    if section.offload == "optimizer_and_parameters":
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    return config


def fsdp_config(section: Any, *, gradient_checkpointing: bool) -> dict[str, Any]:
    """transformers' `fsdp_config` for a `distributed: {strategy: fsdp, ...}` section.

    Activation checkpointing moves into FSDP (transformers warns that its own adds a redundant all-gather).
    """
    version = section.fsdp_version or FSDP_DEFAULT_VERSION
    return {
        "version": version,
        "auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
        "cpu_offload": section.offload != "none",  # FSDP offloads parameters, gradients and optimizer state together
        "reshard_after_forward": True if version == 2 else "full_shard",
        "cpu_ram_efficient_loading": True,
        "state_dict_type": "FULL_STATE_DICT",
        "activation_checkpointing": gradient_checkpointing,
    }


def trl_arguments(cfg: Any) -> dict[str, Any]:
    """The TRL config arguments for `cfg.distributed` ({} for ddp or none: `accelerate launch` sets that up)."""
    section = getattr(cfg, "distributed", None)
    if section is None or section.strategy == "ddp":
        return {}
    if section.strategy == "deepspeed":
        return {"deepspeed": deepspeed_config(section)}
    checkpointing = bool(getattr(cfg, "gradient_checkpointing", False))
    return {
        "fsdp": True,
        "fsdp_config": fsdp_config(section, gradient_checkpointing=checkpointing),
        "activation_checkpointing": False,
    }


def check_engines(cfg: Any) -> None:
    """The engines the config asks for are installed (DeepSpeed, vLLM, bitsandbytes): a ConfigError naming the extra
    if not. Imports none of them; whether bitsandbytes runs here is `quantization.check_runs` (it imports torch)."""
    from .quantization import check_installed

    model = getattr(cfg, "model", None)
    check_installed(getattr(model, "quantization", None), "model.quantization")
    section = getattr(cfg, "distributed", None)
    if section is not None and section.strategy == "deepspeed":
        require("deepspeed", "distributed.strategy", "strategy deepspeed", "deepspeed")
    if getattr(cfg, "use_vllm", False):
        require("vllm", "use_vllm", "use_vllm=True (vLLM rollout)", "vllm")


def require(module: str, field: str, what: str, extra: str) -> None:
    """A ConfigError naming `field` and the pip extra when `module` is not installed (checked without importing)."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{what} needs the {module} package, which is not installed here. "
                    f"Fix: pip install 'textrl[{extra}]' (on the machine that trains), or choose another setting.",
                )
            ]
        )


# transformers' fsdp_config keys -> the keys of an accelerate config file's fsdp_config
_ACCELERATE_FSDP_KEYS = {
    "version": "fsdp_version",
    "auto_wrap_policy": "fsdp_auto_wrap_policy",
    "cpu_offload": "fsdp_offload_params",
    "reshard_after_forward": "fsdp_reshard_after_forward",
    "cpu_ram_efficient_loading": "fsdp_cpu_ram_efficient_loading",
    "state_dict_type": "fsdp_state_dict_type",
    "activation_checkpointing": "fsdp_activation_checkpointing",
}


def accelerate_config(
    cfg: Any, *, num_processes: int, mixed_precision: str, deepspeed_file: str | None = None
) -> dict[str, Any]:
    """An accelerate config (the YAML `accelerate config` writes) that launches `cfg` on one machine."""
    section = getattr(cfg, "distributed", None)
    strategy = section.strategy if section is not None else "ddp"
    base: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "machine_rank": 0,
        "main_training_function": "main",
        "mixed_precision": mixed_precision,
        "num_machines": 1,
        "num_processes": num_processes,
        "rdzv_backend": "static",
        "same_network": True,
        "use_cpu": False,
    }
    if section is not None and strategy == "deepspeed":
        stage = section.zero_stage or DEEPSPEED_DEFAULT_STAGE
        return base | {
            "mixed_precision": None,  # the DeepSpeed JSON decides ("auto"); accelerate refuses both being set
            "distributed_type": "DEEPSPEED",
            "deepspeed_config": {"deepspeed_config_file": deepspeed_file, "zero3_init_flag": stage == 3},
        }
    if section is not None and strategy == "fsdp":
        options = fsdp_config(section, gradient_checkpointing=bool(getattr(cfg, "gradient_checkpointing", False)))
        return base | {
            "distributed_type": "FSDP",
            "fsdp_config": {_ACCELERATE_FSDP_KEYS[k]: v for k, v in options.items()},
        }
    return base | {"distributed_type": "MULTI_GPU" if num_processes > 1 else "NO"}


def write_accelerate_config(cfg: Any, path: Path, *, num_processes: int, mixed_precision: str) -> list[Path]:
    """Write the accelerate config to `path` (and, for DeepSpeed, its JSON beside it); returns the files written."""
    import yaml

    section = getattr(cfg, "distributed", None)
    written = []
    deepspeed_file = None
    if section is not None and section.strategy == "deepspeed":
        ds_path = path.with_name(path.stem + ".deepspeed.json")
        ds_path.write_text(json.dumps(deepspeed_config(section), indent=2) + "\n", encoding="utf-8")
        deepspeed_file = str(ds_path.resolve())
        written.append(ds_path)
    body = accelerate_config(cfg, num_processes=num_processes, mixed_precision=mixed_precision,
                             deepspeed_file=deepspeed_file)  # fmt: skip
    path.write_text(
        "# Written by textrl-train --write-accelerate-config from the config's distributed: section.\n"
        + yaml.safe_dump(body, sort_keys=True),
        encoding="utf-8",
    )
    return [path, *written]
