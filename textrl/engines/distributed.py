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
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, Problem
from ..validation.view import online, options

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

DEEPSPEED_DEFAULT_STAGE = 2
FSDP_DEFAULT_VERSION = 2


def deepspeed_config(section: Any, *, cpu_only: bool = False) -> dict[str, Any]:
    """The DeepSpeed JSON config (as a dict) for a `distributed: {strategy: deepspeed, ...}` section; `cpu_only` for a
    run on a machine without a GPU (DeepSpeed's CPU accelerator, over gloo).

    No `train_batch_size`: DeepSpeed derives it from the micro batch, the accumulation and the world size it sees.
    transformers would fill it from its own world size, but ZeRO-3's `zero.Init` checks it while DeepSpeed's comm
    layer is not yet up on a CPU launch (accelerate's MULTI_CPU state starts gloo without it), so DeepSpeed counts
    one process and refuses "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size".
    """
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
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
        "bf16": {"enabled": "auto"},
        "fp16": {"enabled": "auto"},
        "zero_optimization": zero,
    }
    if section.offload in ("optimizer", "optimizer_and_parameters"):
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": not cpu_only}
        # ZeRO-Offload refuses a torch optimizer (ZeRORuntimeException): DeepSpeed's CPU AdamW takes over, its
        # hyperparameters filled by transformers from learning_rate, adam_beta1/2, adam_epsilon and weight_decay.
        # Without a GPU everything already is on the CPU: torch's AdamW does the same sums without compiling
        # DeepSpeedCPUAdam's C++ (about 4 minutes on 2 cores), once DeepSpeed is told to accept it.
        params: dict[str, Any] = {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}
        config["optimizer"] = {"type": "AdamW", "params": params | ({"torch_adam": True} if cpu_only else {})}
        if cpu_only:
            config["zero_force_ds_cpu_optimizer"] = False
    if section.offload == "optimizer_and_parameters":
        zero["offload_param"] = {"device": "cpu", "pin_memory": not cpu_only}
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


def trl_arguments(cfg: TextRLConfig) -> dict[str, Any]:
    """The TRL config arguments for `cfg.distributed` ({} for ddp or none: `accelerate launch` sets that up)."""
    section = options(cfg).distributed
    if section is None or section.strategy == "ddp":
        return {}
    if section.strategy == "deepspeed":
        if section.offload in ("optimizer", "optimizer_and_parameters"):
            from .hardware import has_accelerator

            return {"deepspeed": deepspeed_config(section, cpu_only=not has_accelerator())}
        return {"deepspeed": deepspeed_config(section)}
    checkpointing = options(cfg).gradient_checkpointing
    return {
        "fsdp": True,
        "fsdp_config": fsdp_config(section, gradient_checkpointing=checkpointing),
        "activation_checkpointing": False,
    }


def fsdp_refusal(cfg: TextRLConfig, *, accelerator: bool) -> Problem | None:
    """`strategy: fsdp` on a machine without a GPU-class device (`accelerator` False): accelerate 1.16 shards with
    FSDP only for its CUDA/XPU/NPU/HPU/MLU-class distributed types (accelerate/state.py); on CPUs it wraps the model
    in DDP instead, so every process would hold the whole model under an FSDP name (one process: transformers'
    "Using fsdp only works in distributed training"; FSDP1: a RuntimeError about sync_module_states)."""
    section = options(cfg).distributed
    if section is None or section.strategy != "fsdp" or accelerator:
        return None
    return Problem(
        "distributed.strategy",
        "got 'fsdp' on a machine without a GPU: accelerate shards with FSDP only on GPU-class devices (CUDA, XPU, "
        "NPU, HPU) and runs CPU processes as plain DDP, each holding the whole model. Fix: strategy deepspeed with "
        "zero_stage 3 (shards on CPUs too), strategy ddp, or run on GPUs.",
    )


EXPECTED_TYPE = {"deepspeed": "DEEPSPEED", "fsdp": "FSDP"}
"""accelerate's distributed type (DistributedType.value) that each sharding strategy must run as."""


def describe_engine(cfg: TextRLConfig, distributed_type: str, processes: int, machines: int = 1) -> str:
    """One line naming what this run really runs as, e.g. 'DeepSpeed ZeRO-3 (optimizer offloaded), 2 processes'.
    A strategy running as anything else is a ConfigError: TextRL never trains DDP under a DeepSpeed or FSDP name."""
    section = options(cfg).distributed
    strategy = section.strategy if section is not None else "ddp"
    want = EXPECTED_TYPE.get(strategy)
    if want is not None and distributed_type != want:
        raise ConfigError(
            [
                Problem(
                    "distributed.strategy",
                    f"got {strategy!r}, but this process runs as accelerate's {distributed_type} with {processes} "
                    f"process(es), not {want}: the run would not be what it names. Fix: start it with the config "
                    "`textrl-train --write-accelerate-config acc.yaml --num-processes N` writes: "
                    "`accelerate launch --config_file acc.yaml -m textrl.cli train ...`.",
                )
            ]
        )
    count = f"{processes} process{'es' if processes != 1 else ''}"
    count += f" on {machines} machines" if machines > 1 else ""
    if section is not None and strategy == "deepspeed":
        offload = "" if section.offload == "none" else f" ({section.offload.replace('_', ' ')} offloaded)"
        return f"DeepSpeed ZeRO-{section.zero_stage or DEEPSPEED_DEFAULT_STAGE}{offload}, {count}"
    if section is not None and strategy == "fsdp":
        return f"FSDP{section.fsdp_version or FSDP_DEFAULT_VERSION}, {count}"
    return f"DDP, {count}" if processes > 1 else "one process"


def check_engines(cfg: TextRLConfig) -> None:
    """The engines the config asks for are installed (DeepSpeed, vLLM, bitsandbytes): a ConfigError naming the extra
    if not. Imports none of them; whether bitsandbytes runs here is `quantization.check_runs` (it imports torch)."""
    from .quantization import check_installed

    model = options(cfg).model
    check_installed(model.quantization if model is not None else None, "model.quantization")
    section = options(cfg).distributed
    if section is not None and section.strategy == "deepspeed":
        require("deepspeed", "distributed.strategy", "strategy deepspeed", "deepspeed")
    if (rollout := online(cfg)) is not None and rollout.use_vllm:
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
    cfg: TextRLConfig,
    *,
    num_processes: int,
    mixed_precision: str,
    deepspeed_file: str | None = None,
    num_machines: int = 1,
    main_process_ip: str | None = None,
    main_process_port: int | None = None,
) -> dict[str, Any]:
    """An accelerate config (the YAML `accelerate config` writes) that launches `cfg`: `num_processes` in all, spread
    over `num_machines` (machine 0 at `main_process_ip`:`main_process_port`; each machine overrides machine_rank with
    `accelerate launch --machine_rank R`)."""
    section = options(cfg).distributed
    strategy = section.strategy if section is not None else "ddp"
    base: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "machine_rank": 0,
        "main_training_function": "main",
        "mixed_precision": mixed_precision,
        "num_machines": num_machines,
        "num_processes": num_processes,
        "rdzv_backend": "static",
        "same_network": True,
        "use_cpu": False,
    }
    if num_machines > 1:
        base |= {"main_process_ip": main_process_ip, "main_process_port": main_process_port or 29500}
    else:  # accelerate picks a free port: two runs on one machine (two experiments, two GPUs) do not collide on 29500
        base["main_process_port"] = 0
    if section is not None and strategy == "deepspeed":
        stage = section.zero_stage or DEEPSPEED_DEFAULT_STAGE
        return base | {
            "mixed_precision": None,  # the DeepSpeed JSON decides ("auto"); accelerate refuses both being set
            "distributed_type": "DEEPSPEED",
            "deepspeed_config": {"deepspeed_config_file": deepspeed_file, "zero3_init_flag": stage == 3},
        }
    if section is not None and strategy == "fsdp":
        fsdp = fsdp_config(section, gradient_checkpointing=options(cfg).gradient_checkpointing)
        return base | {
            "distributed_type": "FSDP",
            "fsdp_config": {_ACCELERATE_FSDP_KEYS[k]: v for k, v in fsdp.items()},
        }
    return base | {"distributed_type": "MULTI_GPU" if num_processes > 1 or num_machines > 1 else "NO"}


def write_accelerate_config(cfg: TextRLConfig, path: Path, *, num_processes: int, mixed_precision: str,
                            **machines: Any) -> list[Path]:  # fmt: skip
    """Write the accelerate config to `path` (and, for DeepSpeed, its JSON beside it); returns the files written.
    `machines`: accelerate_config's num_machines, main_process_ip and main_process_port."""
    import yaml

    section = options(cfg).distributed
    written = []
    deepspeed_file = None
    if section is not None and section.strategy == "deepspeed":
        ds_path = path.with_name(path.stem + ".deepspeed.json")
        ds_path.write_text(json.dumps(deepspeed_config(section), indent=2) + "\n", encoding="utf-8")
        deepspeed_file = str(ds_path.resolve())
        written.append(ds_path)
    body = accelerate_config(cfg, num_processes=num_processes, mixed_precision=mixed_precision,
                             deepspeed_file=deepspeed_file, **machines)  # fmt: skip
    path.write_text(
        "# Written by textrl-train --write-accelerate-config from the config's distributed: section.\n"
        + yaml.safe_dump(body, sort_keys=True),
        encoding="utf-8",
    )
    return [path, *written]
