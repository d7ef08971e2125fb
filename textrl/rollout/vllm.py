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

from typing import Any, Literal

from ..distributed import require
from ..errors import ConfigError, Problem

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
