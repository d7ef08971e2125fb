"""Two sections of results.md: the engines (QLoRA and 8-bit LoRA against full-precision LoRA on SmolLM2-135M-Instruct,
the dry run's memory plan against what the runs measured) and DeepSpeed ZeRO-3 against DDP on 2 processes.

Each run is bench/training.py in a fresh process (TextRL, GRPO, 6 steps of which the first 2 are left out of the
step time, one torch thread), alternating the modes. bitsandbytes runs its 4-bit and 8-bit layers on this CPU
(TRL-NOTES.md, "Engines on CPU"); on a GPU the same rows come from `bench/run.py --engines` there.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import Row, run_training

MODES = {"LoRA r=16, float32 base": [], "QLoRA r=16, 4-bit nf4 base": ["--quantization", "4bit"],
         "LoRA r=16, 8-bit base": ["--quantization", "8bit"]}  # fmt: skip
HEADING = "## Engines"


def plan_mb(model_dir: str, quantization: str | None) -> tuple[float, float]:
    """(policy weights, weights + optimizer state) in MB as the dry run plans them for this run."""
    from textrl import TextRLConfig
    from textrl.run.memory import GIB, count_parameters, embedding_parameters, plan

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


ZERO_RUN = """algo: dpo
output_dir: out
per_device_train_batch_size: 2
max_length: 64
learning_rate: 1e-6
max_steps: 3
logging_steps: 1
save_strategy: "no"
reference_cache: "off"
gradient_checkpointing: false
model: {name: "MODEL"}
dataset: {path: pairs.jsonl}
"""
"""Full fine-tuning (every weight, AdamW state for each) of DPO with a reference model in memory: what ZeRO-3 shards."""
ZERO_STAGES = {"DDP": "", "DeepSpeed ZeRO-3": "distributed: {strategy: deepspeed, zero_stage: 3}\n"}


def zero_run(model_dir: str, strategy: str) -> list[dict[str, Any]]:
    """What bench/zero_probe.py recorded in each of the 2 processes of ZERO_RUN under `strategy`, launched with the
    accelerate config textrl-train writes for it."""
    from training import long_pairs

    bin_dir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in long_pairs(32)), encoding="utf-8")
        (folder / "run.yaml").write_text(ZERO_RUN.replace("MODEL", model_dir) + ZERO_STAGES[strategy], encoding="utf-8")
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        subprocess.run([str(bin_dir / "textrl-train"), "--config", "run.yaml", "--write-accelerate-config", "acc.yaml",
                        "--num-processes", "2"], cwd=folder, env=env, check=True, capture_output=True)  # fmt: skip
        probe = Path(__file__).resolve().parent / "zero_probe.py"
        done = subprocess.run([str(bin_dir / "accelerate"), "launch", "--config_file", "acc.yaml", str(probe),
                               "run.yaml", "probe"], cwd=folder, env=env, capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"{strategy} launch failed:\n{done.stderr[-3000:]}")
        return [json.loads((folder / "probe" / f"rank{r}.json").read_text(encoding="utf-8")) for r in range(2)]


ZERO_KEYS = {
    "parameters (policy and reference) held by one process": ("policy_bytes", "reference_bytes"),
    "optimizer state held by one process (AdamW's moments)": ("optimizer_bytes",),
}


def zero_rows(model_dir: str, reps: int) -> tuple[list[Row], list[str]]:
    """ZeRO-3 against DDP on 2 processes, SmolLM2 DPO full fine-tuning (DeepSpeed needed): the bytes each process
    holds, and its resident memory by phase."""
    import importlib.util

    if importlib.util.find_spec("deepspeed") is None:
        raise SystemExit("DeepSpeed is not installed: PYTHONPATH=$(bash scripts/engines.sh) .venv/bin/python ...")
    runs: dict[str, list[list[dict[str, Any]]]] = {s: [] for s in ZERO_STAGES}
    for rep in range(reps):
        for strategy in ZERO_STAGES if rep % 2 == 0 else reversed(ZERO_STAGES):
            runs[strategy].append(zero_run(model_dir, strategy))

    def med(strategy: str, pick: Any) -> float:
        """The median over runs of the larger of the 2 processes' values."""
        return statistics.median(max(pick(process) for process in run) for run in runs[strategy])

    note = f"median of {reps} runs each, the larger process; DPO full fine-tuning, 2 CPU processes"
    out = [
        Row(f"engines: DeepSpeed ZeRO-3 vs DDP, {what} (SmolLM2-135M)",
            med("DeepSpeed ZeRO-3", lambda p, k=keys: sum(p["steps"][-1][key] for key in k)) / 2**20,
            med("DDP", lambda p, k=keys: sum(p["steps"][-1][key] for key in k)) / 2**20, "MB", note)
        for what, keys in ZERO_KEYS.items()
    ]  # fmt: skip
    out.append(Row("engines: DeepSpeed ZeRO-3 vs DDP, peak memory of one process (max RSS; SmolLM2-135M)",
                   med("DeepSpeed ZeRO-3", lambda p: p["peak_mb"]), med("DDP", lambda p: p["peak_mb"]), "MB",
                   note + "; torch, DeepSpeed, activations and logits beside the rows above"))  # fmt: skip
    phases = {"before the model loads": "before_load_mb", "after it loads": "after_load_mb",
              "when training begins": "train_begin_mb"}  # fmt: skip
    lines = []
    for strategy in ZERO_STAGES:
        said = ", ".join(f"{phase} {med(strategy, lambda p, k=key: p[k]):.0f} MB" for phase, key in phases.items())
        last = med(strategy, lambda p: p["steps"][-1]["rss_mb"])
        lines.append(f"- {strategy}: resident memory of one process {said}, after the last step {last:.0f} MB; "
                     f"peak {med(strategy, lambda p: p['peak_mb']):.0f} MB")  # fmt: skip
    return out, lines


def section(model_dir: str, reps: int, where: str) -> str:
    from common import table

    found, lines = rows(model_dir, reps)
    return "\n".join([
        HEADING,
        "",
        __doc__.split("\n\n", 1)[1].strip().replace("\n", " "),
        "`PYTHONPATH=$(bash scripts/engines.sh) .venv/bin/python bench/run.py --engines` rewrites this section alone.",
        "",
        table(found, where),
        "",
        "The dry run's memory plan (`textrl-train --dry-run`) against the same runs:",
        "",
        *lines,
        "",
    ])  # fmt: skip


ZERO_HEADING = "## DeepSpeed ZeRO-3 against DDP"


def zero_section(model_dir: str, reps: int, where: str) -> str:
    from common import table

    zero, phases = zero_rows(model_dir, reps)
    return "\n".join([
        ZERO_HEADING,
        "",
        "bench/zero_probe.py, launched with the accelerate config that `textrl-train --write-accelerate-config "
        "--num-processes 2` writes, builds the run as textrl-train does (SmolLM2-135M-Instruct, DPO full "
        "fine-tuning: every weight trained, the reference model in memory; 3 steps, 2 CPU processes over gloo, one "
        "thread each) and records what each process holds at each step's end, DDP and ZeRO-3 alternating.",
        "`PYTHONPATH=$(bash scripts/engines.sh) .venv/bin/python bench/run.py --zero` rewrites this section alone.",
        "",
        table(zero, where),
        "",
        *phases,
        "- FSDP2 has no row: on a machine without a GPU accelerate 1.16 runs an FSDP configuration as plain DDP, so "
        "TextRL refuses `strategy: fsdp` there before launch (README, engines). Its row needs a GPU machine and has "
        "not been measured.",
        "",
    ])  # fmt: skip
