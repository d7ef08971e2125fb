"""4-bit and 8-bit base weights through bitsandbytes (QLoRA), wherever bitsandbytes runs: on a CUDA GPU, and on a CPU
(bitsandbytes >= 0.45 ships CPU kernels and falls back to torch ops). What the machine cannot do is found by trying
it on one small layer, so the refusal names bitsandbytes' own reason instead of guessing from the hardware.

`check_installed` imports nothing (the dry run's first look); `check_runs` imports torch and bitsandbytes.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from typing import Any

from ..errors import ConfigError, Problem

MODES = ("4bit", "8bit")


def _refuse(field: str, message: str) -> ConfigError:
    return ConfigError([Problem(field, message)])


def check_mode(quantization: str | None, field: str = "quantization") -> None:
    if quantization is not None and quantization not in MODES:
        raise _refuse(field, f"got {quantization!r}; allowed: '4bit', '8bit' or None. Fix: use one of these.")


def check_installed(quantization: str | None, field: str = "quantization") -> None:
    """bitsandbytes is importable when `quantization` asks for it (no import)."""
    check_mode(quantization, field)
    if quantization is not None and importlib.util.find_spec("bitsandbytes") is None:
        raise _refuse(
            field,
            f"got {quantization!r}, which needs bitsandbytes, and it is not installed. "
            "Fix: pip install 'textrl[quant]' (CUDA GPUs and x86-64/ARM CPUs), or drop quantization.",
        )


def device() -> str:
    """Where quantized weights live: this process's GPU under `accelerate launch`, else the CPU."""
    import torch

    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    return "cpu"


@functools.cache
def _trial(quantization: str, where: str) -> str | None:
    """Quantize one 64x64 layer on `where` and run it forward; None when the output is right, else the reason."""
    import torch

    try:
        import bitsandbytes as bnb

        dense = torch.nn.Linear(64, 64, bias=False)
        if quantization == "4bit":
            layer: Any = bnb.nn.Linear4bit(64, 64, bias=False, compute_dtype=torch.float32, quant_type="nf4")
            layer.weight = bnb.nn.Params4bit(dense.weight.data.clone(), requires_grad=False, quant_type="nf4")
        else:
            layer = bnb.nn.Linear8bitLt(64, 64, bias=False, has_fp16_weights=False)
            layer.weight = bnb.nn.Int8Params(dense.weight.data.clone(), requires_grad=False, has_fp16_weights=False)
        layer = layer.to(where)
        x = torch.randn(4, 64, device=where)
        got = layer(x).float().cpu()
        want = dense(x.cpu()).detach()
        error = float((got - want).abs().max() / want.abs().max())
    except Exception as exc:  # bitsandbytes' own reason, whatever its type
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else 'no message'}"
    if not error < 0.5:  # nf4 of a random layer is off by about 0.1 at most; this catches garbage, not rounding
        return f"a quantized test layer computed garbage on {where} (relative error {error:.2f})"
    return None


def check_runs(quantization: str | None, field: str = "quantization") -> None:
    """bitsandbytes can load and run `quantization` on this machine: a ConfigError with its reason if not."""
    check_installed(quantization, field)
    if quantization is None:
        return
    where = device()
    reason = _trial(quantization, where)
    if reason is not None:
        import bitsandbytes

        raise _refuse(
            field,
            f"got {quantization!r}, but bitsandbytes {bitsandbytes.__version__} cannot run {quantization} layers on "
            f"this machine's {where}: {reason}. Fix: run where bitsandbytes supports it (a CUDA GPU, or an x86-64 "
            "CPU with AVX2), or drop quantization.",
        )


def quantization_config(quantization: str | None, dtype: Any) -> Any:
    """transformers' BitsAndBytesConfig for `quantization` (None for None): nf4 with double quantization computing
    in `dtype` (QLoRA's settings), or LLM.int8."""
    if quantization is None:
        return None
    from transformers import BitsAndBytesConfig

    if quantization == "8bit":
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=dtype
    )


def of_model(model: Any) -> str | None:
    """'4bit' or '8bit' when `model` (or the model under its adapter) holds bitsandbytes weights, else None."""
    if getattr(model, "is_loaded_in_4bit", False):
        return "4bit"
    if getattr(model, "is_loaded_in_8bit", False):
        return "8bit"
    return None


FLASH_PACKAGES = {"flash_attention_2": "flash_attn", "flash_attention_3": "flash_attn_interface"}


def check_attention(attn_implementation: str | None, field: str = "attn_implementation") -> None:
    """FlashAttention 2/3 need their package and a CUDA GPU: named here instead of transformers' ImportError."""
    package = FLASH_PACKAGES.get(attn_implementation or "")
    if package is None:
        return
    import torch

    missing = [what for what, ok in (("the " + package + " package", importlib.util.find_spec(package) is not None),
                                     ("a CUDA GPU", torch.cuda.is_available())) if not ok]  # fmt: skip
    if missing:
        raise _refuse(
            field,
            f"got {attn_implementation!r}, which needs {' and '.join(missing)}, missing here. Fix: use 'sdpa' "
            "(torch's attention, on any device) or leave it unset; install flash-attn on the CUDA machine that trains.",
        )
