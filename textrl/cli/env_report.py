"""`textrl-train --env`: the versions, the machine and TextRL's model cache, for bug reports."""

from __future__ import annotations

import platform

from ..trl_support.env import PACKAGES, trl_range_problem, version


def environment() -> dict[str, str]:
    """Versions of Python, the platform, every package in PACKAGES (or 'not installed'), CUDA and the GPUs."""
    info = {"python": platform.python_version(), "platform": platform.platform()}
    info |= {p: version(p) or "not installed" for p in PACKAGES}
    try:
        import torch

        info["cuda"] = torch.version.cuda or "none (CPU build)"
        info["gpus"] = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())) or "none"
    except ImportError:
        info["cuda"] = "unknown (torch not installed)"
    from ..models.gguf import cache_report

    info["cache"] = cache_report()  # $TEXTRL_HOME and the built-in models it holds
    problem = trl_range_problem()
    from ..spec.trl_releases import window_text

    info["trl check"] = problem or f"trl {version('trl')} is in the tested window, {window_text()}"
    return info


def env_report() -> str:
    info = environment()
    width = max(map(len, info))
    return "\n".join(f"{name:<{width}}  {value}" for name, value in info.items())
