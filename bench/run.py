"""Every benchmark, side by side in one process tree; writes bench/results.md and bench/scaling.png.

    .venv/bin/python bench/run.py            # about 10 minutes on 2 cores
    .venv/bin/python bench/run.py --quick    # fewer repetitions, to check that it runs (about 4 minutes)
    .venv/bin/python bench/run.py --real     # only the real-model section (SmolLM2-135M), rewritten in place
    .venv/bin/python bench/run.py --sweep    # only the reference-cache sweep on SmolLM2-135M (about 20 minutes)

Ratios are TextRL / baseline, so below 1 is faster for time and above 1 is faster for throughput. Benchmarks
are not tests: nothing here fails on a time. Each training run is a fresh process; TextRL and TRL runs alternate
so that background load on a shared machine hits both sides alike.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import engines
import evaluation
import scaling
import startup
import sweep
import vllm_rollout
from common import ROOT, Row, byte_compile, machine, run_training, table

HERE = Path(__file__).resolve().parent


def largest_difference(ours: list[dict[str, float]], theirs: list[dict[str, float]]) -> float:
    """Largest relative difference between two log histories; inf when their steps or keys differ."""
    if len(ours) != len(theirs) or any(set(a) != set(b) for a, b in zip(ours, theirs, strict=True)):
        return math.inf
    worst = 0.0
    for a, b in zip(ours, theirs, strict=True):
        for key, value in a.items():
            if isinstance(value, int | float):
                if math.isnan(value) or math.isnan(b[key]):
                    if not (math.isnan(value) and math.isnan(b[key])):
                        return math.inf
                    continue
                worst = max(worst, abs(value - b[key]) / max(abs(b[key]), 1e-7))
    return worst


def overhead(tiny: str, algo: str, reps: int, steps: int, *options: str, what: str = "training") -> list[Row]:
    runs: dict[str, list[dict[str, Any]]] = {"textrl": [], "trl": []}
    for rep in range(reps):
        for mode in ("textrl", "trl") if rep % 2 == 0 else ("trl", "textrl"):
            runs[mode].append(run_training(tiny, mode, algo, "--steps", str(steps), *options))
    diff = max(largest_difference(a["history"], runs["trl"][0]["history"]) for a in runs["textrl"])
    same = f"logged metrics identical (max rel diff {diff:.1e})" if diff < 1e-5 else f"METRICS DIFFER (rel {diff:.2e})"

    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[mode])

    note = f"{steps} steps, median of {reps} runs each; {same}"
    return [
        Row(f"{what} {algo.upper()}: time per optimizer step vs TRL", med("textrl", "per_step_s") * 1000,
            med("trl", "per_step_s") * 1000, "ms", note + "; target <= 1.02"),
        Row(f"{what} {algo.upper()}: peak memory (max RSS) vs TRL", med("textrl", "peak_mb"), med("trl", "peak_mb"),
            "MB", f"median of {reps} runs each"),
        Row(f"{what} {algo.upper()}: whole process (imports, load, train, TextRL's manifest and report) vs TRL",
            med("textrl", "total_s"), med("trl", "total_s"), "s", "wall time of the run inside the process"),
    ]  # fmt: skip


def composition(tiny: str, step_ms: float, reps: int) -> list[Row]:
    done = subprocess.run([sys.executable, str(HERE / "rewards.py")], capture_output=True, text=True, check=True)
    r = json.loads(done.stdout)
    parts = r["waiting_parts_s"]
    wait = ["--steps", "6", "--warmup", "2", "--rewards", "3", "--wait", "0.1"]
    ours = statistics.median(run_training(tiny, "textrl", "grpo", *wait)["per_step_s"] for _ in range(reps))
    theirs = statistics.median(run_training(tiny, "trl", "grpo", *wait)["per_step_s"] for _ in range(reps))
    overhead_ms = (r["fast_composed_s"] - r["fast_direct_s"]) * 1000
    return [
        Row("rewards: one compose() call of 3 waiting rewards vs the sum of the parts", r["waiting_composed_s"],
            sum(parts), "s", f"parts wait {', '.join(f'{p:.2f}' for p in parts)} s; slowest {max(parts):.2f} s"),
        Row("rewards: GRPO step with 3 rewards waiting 0.1 s each, TextRL compose vs TRL reward_funcs list",
            ours, theirs, "s", f"median of {reps}; TRL calls plain functions one after another (it gathers async "
            "ones; compose does that for plain functions)"),
        Row("rewards: compose() of 2 fast rewards vs calling both directly (64 completions)",
            r["fast_composed_s"] * 1e6, r["fast_direct_s"] * 1e6, "µs",
            f"overhead {overhead_ms:.2f} ms per call = {overhead_ms / step_ms:.1%} of a GRPO step here"),
    ]  # fmt: skip


REAL = "## Real model"
SWEEP = "## Reference cache"


def sweep_section(where: str) -> str:
    """The reference-cache section: a DPO beta sweep on SmolLM2-135M-Instruct through TextRL's cache and raw TRL."""
    from textrl.models import builtin_model

    return "\n".join([
        SWEEP,
        "",
        "A sweep of 4 DPO runs over beta on `textrl:smollm2` (full fine-tuning, float32), each run a fresh process "
        "with 2 torch threads (both cores, as a user's run would use them; the rows above use 1), 64 short chat pairs "
        "(conversations, so SmolLM2's chat template and system prompt apply: about 70 tokens a row) and 8 steps each, "
        "as issue 18 measured raw TRL. See `bench/sweep.py` for the three ways compared. "
        "`.venv/bin/python bench/run.py --sweep` rewrites this section alone (about 20 minutes); a full run keeps it.",
        "",
        table(sweep.rows(builtin_model("textrl:smollm2"), pairs=64, steps=8, threads=2, chat=True), where),
        "",
    ])  # fmt: skip


def real_model(reps: int, where: str) -> str:
    """The real-model section: GRPO and DPO steps on SmolLM2-135M-Instruct (textrl:smollm2, full fine-tuning)."""
    from textrl.models import builtin_model

    smollm2 = builtin_model("textrl:smollm2")
    rows: list[Row] = []
    for algo in ("grpo", "dpo"):
        print(f"real model: {algo}", file=sys.stderr)
        rows += overhead(smollm2, algo, reps, 6, "--warmup", "2", what="SmolLM2-135M (real model)")
    return "\n".join([
        REAL,
        "",
        "`textrl:smollm2` (134.5M parameters, float32, full fine-tuning; DPO with its reference copy), the same text "
        "prompts and pairs as the tiny rows, 6 steps of which the first 2 are left out of the step time. "
        "`.venv/bin/python bench/run.py --real` rewrites this section alone.",
        "",
        table(rows, where),
        "",
    ])  # fmt: skip


def own_section(text: str, heading: str) -> str:
    """The section of `text` that starts at `heading` (up to the next `## ` heading), or "": the sections a full run
    keeps (the sweep takes 20 minutes, the engines need their packages; only --sweep and --engines rewrite them)."""
    start = text.find(heading)
    if start < 0:
        return ""
    end = text.find("\n## ", start + len(heading))
    return text[start : end + 1] if end >= 0 else text[start:]


def replace_section(text: str, heading: str, section: str) -> str:
    """`text` with the section that starts at `heading` (up to the next `## ` heading) replaced, or appended."""
    start = text.find(heading)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + section
    end = text.find("\n## ", start + len(heading))
    return text[:start] + section + (text[end + 1 :] if end >= 0 else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="Fewer repetitions: checks that every benchmark runs.")
    parser.add_argument("--real", action="store_true", help="Only the real-model section, rewritten in --output.")
    parser.add_argument("--sweep", action="store_true", help="Only the reference-cache sweep, rewritten in --output.")
    parser.add_argument("--engines", action="store_true", help="Only the engines section, rewritten in --output.")
    parser.add_argument("--zero", action="store_true", help="Only the ZeRO-3 section (DeepSpeed from engines.sh).")
    parser.add_argument(
        "--vllm",
        action="store_true",
        help="Only the vLLM section, rewritten in --output (run with scripts/vllm_cpu.sh's python).",
    )
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    args = parser.parse_args()
    reps, steps, runs = (1, 8, 2) if args.quick else (9, 20, 5)
    where = machine()
    byte_compile()
    sys.path.insert(0, str(ROOT))
    if args.real or args.sweep or args.engines or args.vllm or args.zero:
        old = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
        if args.engines:
            from textrl.models import builtin_model

            heading, section = engines.HEADING, engines.section(builtin_model("textrl:smollm2"), 1 if args.quick else 2,
                                                                where)  # fmt: skip
        elif args.zero:
            from textrl.models import builtin_model

            heading, section = (
                engines.ZERO_HEADING,
                engines.zero_section(builtin_model("textrl:smollm2"), 1 if args.quick else 2, where),
            )
        elif args.vllm:
            from textrl.models import builtin_model

            heading, section = (
                vllm_rollout.HEADING,
                vllm_rollout.section(builtin_model("textrl:smollm2"), 1 if args.quick else 2, where),
            )
        elif args.sweep:
            heading, section = SWEEP, sweep_section(where)
        else:
            heading, section = REAL, real_model(1 if args.quick else 2, where)
        args.output.write_text(replace_section(old, heading, section), encoding="utf-8")
        print(args.output.read_text(encoding="utf-8"))
        return
    from textrl.tiny import build_tiny_model

    with tempfile.TemporaryDirectory() as home:
        tiny = str(build_tiny_model(Path(home) / "tiny"))
        rows: list[Row] = []
        for algo in ("grpo", "dpo", "sft"):
            print(f"training overhead: {algo}", file=sys.stderr)
            rows += overhead(tiny, algo, reps, steps)
        print("start-up", file=sys.stderr)
        rows += startup.rows(runs)
        print("reward composition", file=sys.stderr)
        rows += composition(tiny, rows[0].ours, reps)
        print("evaluation throughput", file=sys.stderr)
        rows += evaluation.rows(home)
        print("scaling", file=sys.stderr)
        series = scaling.series(tiny)
    real = real_model(1 if args.quick else 2, where)
    scaling.plot(series, HERE / "scaling.png", where)
    old = args.output.read_text(encoding="utf-8") if args.output.is_file() else ""
    kept = "".join(
        "\n" + part
        for part in (own_section(old, h) for h in (SWEEP, engines.HEADING, engines.ZERO_HEADING, vllm_rollout.HEADING))
        if part
    )
    text = report(rows, series, where, quick=args.quick) + "\n" + real + kept
    args.output.write_text(text, encoding="utf-8")
    print(args.output.read_text(encoding="utf-8"))


def report(rows: list[Row], series: dict[str, list[dict[str, float]]], where: str, *, quick: bool) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        "# TextRL benchmarks",
        "",
        f"Written by `.venv/bin/python bench/run.py{' --quick' if quick else ''}` on {today}. "
        "Ratio = TextRL / baseline: for times and memory below 1 is better, for throughput (completions/s) above 1 "
        "is better. Tiny offline model (`textrl:tiny`), one torch thread per process. TextRL's modules are "
        "byte-compiled first, as pip does when it installs a wheel (TRL's already are).",
        "",
        table(rows, where),
        "",
        "## Scaling (GRPO through TextRL, tiny model)",
        "",
        "![scaling](scaling.png)",
        "",
    ]
    for name, points in series.items():
        lines.append(f"- {name}: " + ", ".join(
            f"{p['x']} → {p['per_step_s'] * 1000:.0f} ms/step (mean completion {p['mean_length']:.1f} tokens)"
            for p in points))  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
