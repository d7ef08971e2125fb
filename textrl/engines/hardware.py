"""Probes of this machine's accelerator. torch (and transformers) are imported by each probe, never at import time."""

from __future__ import annotations


def bf16_supported() -> bool:
    """Whether this machine's accelerator computes in bfloat16 (False on a CPU-only machine)."""
    from transformers.utils import is_torch_bf16_gpu_available

    return bool(is_torch_bf16_gpu_available())


def has_accelerator() -> bool:
    """Whether torch sees a GPU (CUDA/ROCm), an Apple GPU or an Intel XPU."""
    import torch

    xpu = getattr(torch, "xpu", None)
    return bool(
        torch.cuda.is_available() or torch.backends.mps.is_available() or (xpu is not None and xpu.is_available())
    )
