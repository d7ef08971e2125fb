"""Scaling on the tiny model: GRPO time per optimizer step as num_generations and completion length grow.

Runs bench/training.py (through TextRL) for each point in a fresh process; used by bench/run.py, which also
draws bench/scaling.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from common import run_training

GENERATIONS = (2, 4, 8, 16)
LENGTHS = (8, 16, 32, 64)


def step_time(tiny: str, *options: str, steps: int = 8) -> dict[str, Any]:
    result = run_training(tiny, "textrl", "grpo", "--steps", str(steps), "--warmup", "2", *options)
    lengths = [h["completions/mean_length"] for h in result["history"] if "completions/mean_length" in h]
    result["mean_length"] = sum(lengths) / len(lengths)
    return result


def series(tiny: str) -> dict[str, list[dict[str, float]]]:
    """{"num_generations": [...], "completion_length": [...]}: x, seconds per step, mean completion length."""
    by_g = []
    for g in GENERATIONS:  # 2 prompts per step, so the batch is 2 x num_generations completions
        r = step_time(tiny, "--num-generations", str(g), "--completion-length", "16")
        by_g.append({"x": g, "per_step_s": r["per_step_s"], "mean_length": r["mean_length"]})
    by_len = []
    for length in LENGTHS:
        r = step_time(tiny, "--num-generations", "4", "--completion-length", str(length))
        by_len.append({"x": length, "per_step_s": r["per_step_s"], "mean_length": r["mean_length"]})
    return {"num_generations": by_g, "completion_length": by_len}


def plot(data: dict[str, list[dict[str, float]]], path: Path, where: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    labels = {"num_generations": "num_generations (completion length 16, 2 prompts/step)",
              "completion_length": "max_completion_length (num_generations 4, 2 prompts/step)"}  # fmt: skip
    for ax, (name, points) in zip(axes, data.items(), strict=True):
        ax.plot([p["x"] for p in points], [p["per_step_s"] * 1000 for p in points], marker="o")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(labels[name])
        ax.set_ylabel("ms per optimizer step")
        ax.grid(alpha=0.3)
    fig.suptitle(f"GRPO on the tiny model through TextRL — {where}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
