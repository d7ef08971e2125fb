"""The engines section of results.md: QLoRA and 8-bit LoRA against full-precision LoRA on SmolLM2-135M-Instruct,
and the dry run's memory plan against what the runs measured.

Each run is bench/training.py in a fresh process (TextRL, GRPO, 6 steps of which the first 2 are left out of the
step time, one torch thread), alternating the modes. bitsandbytes runs its 4-bit and 8-bit layers on this CPU
(TRL-NOTES.md, "Engines on CPU"); on a GPU the same rows come from `bench/run.py --engines` there.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from common import Row, run_training

MODES = {"LoRA r=16, float32 base": [], "QLoRA r=16, 4-bit nf4 base": ["--quantization", "4bit"],
         "LoRA r=16, 8-bit base": ["--quantization", "8bit"]}  # fmt: skip
HEADING = "## Engines"


def plan_mb(model_dir: str, quantization: str | None) -> tuple[float, float]:
    """(policy weights, weights + optimizer state) in MB as the dry run plans them for this run."""
    from textrl import TextRLConfig
    from textrl.memory import GIB, count_parameters, embedding_parameters, plan

    params, _ = count_parameters(model_dir, Path("."))
    model: dict[str, Any] = {"name": model_dir, "peft": {"type": "lora", "r": 16}, "quantization": quantization}
    cfg = TextRLConfig(algo="grpo", output_dir="unused", model=model, bf16=False)
    p = plan(cfg, int(params or 0), None, embedding_parameters(Path(model_dir)))
    return p.policy / GIB * 1024, p.total / GIB * 1024


def rows(model_dir: str, reps: int) -> tuple[list[Row], list[str]]:
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for rep in range(reps):
        for mode in MODES if rep % 2 == 0 else reversed(MODES):
            runs[mode].append(run_training(model_dir, "textrl", "grpo", "--steps", "6", "--warmup", "2",
                                           "--lora", "16", *MODES[mode]))  # fmt: skip

    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[mode])

    base = "LoRA r=16, float32 base"
    note = f"GRPO, 6 steps, median of {reps} runs each, 1 torch thread"
    out: list[Row] = []
    lines: list[str] = []
    for mode in list(MODES)[1:]:
        out += [
            Row(f"engines: {mode} vs {base}, time per optimizer step (SmolLM2-135M)", med(mode, "per_step_s") * 1000,
                med(base, "per_step_s") * 1000, "ms", note),
            Row(f"engines: {mode} vs {base}, peak memory (max RSS, loading included)", med(mode, "peak_mb"),
                med(base, "peak_mb"), "MB", note + "; transformers reads the float32 checkpoint before quantizing"),
            Row(f"engines: {mode} vs {base}, peak memory while training (RSS high-water mark after loading)",
                med(mode, "training_peak_mb"), med(base, "training_peak_mb"), "MB", note),
            Row(f"engines: {mode} vs {base}, the policy's weights in memory (get_memory_footprint)",
                med(mode, "footprint_mb"), med(base, "footprint_mb"), "MB", "parameters and buffers as loaded"),
        ]  # fmt: skip
    for mode, options in MODES.items():
        quantization = options[1] if options else None
        weights, total = plan_mb(model_dir, quantization)
        grown = med(mode, "training_peak_mb") - med(mode, "before_load_mb")
        lines.append(
            f"- {mode}: the dry run plans {weights:.0f} MB of weights ({total:.0f} MB with LoRA's optimizer state); "
            f"loaded, the weights take {med(mode, 'footprint_mb'):.0f} MB "
            f"({med(mode, 'footprint_mb') / weights:.2f}x the plan); while training the process peaked {grown:.0f} MB "
            "above where it was before the model loaded (weights, activations, logits over the 49k-token vocabulary, "
            "generation caches, allocator slack)"
        )
    return out, lines


def section(model_dir: str, reps: int, where: str) -> str:
    from common import table

    found, lines = rows(model_dir, reps)
    return "\n".join([
        HEADING,
        "",
        __doc__.split("\n\n", 1)[1].strip().replace("\n", " "),
        "`.venv/bin/python bench/run.py --engines` rewrites this section alone.",
        "",
        table(found, where),
        "",
        "The dry run's memory plan (`textrl-train --dry-run`) against the same runs:",
        "",
        *lines,
        "",
    ])  # fmt: skip
