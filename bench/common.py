"""What the benchmarks share: the machine line, medians, result rows and the Markdown table."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = Path(sys.executable).parent
TIMING_KEYS = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}


def machine() -> str:
    """CPU model, cores and accelerator, e.g. 'x86_64 Intel Xeon, 2 cores, no GPU, Python 3.11.7'."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = "no GPU"
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
        )
        if done.returncode == 0 and done.stdout.strip():
            gpu = done.stdout.strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return f"{model}, {os.cpu_count()} cores, {gpu}, Python {platform.python_version()}"


@dataclass
class Row:
    """One line of results.md: `ours` and `baseline` in `unit`; ratio = ours / baseline."""

    case: str
    ours: float
    baseline: float
    unit: str
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("nan")


def table(rows: list[Row], where: str) -> str:
    lines = ["| case | TextRL | baseline | ratio | machine | note |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r.case} | {r.ours:.4g} {r.unit} | {r.baseline:.4g} {r.unit} | {r.ratio:.3f} | {where} | {r.note} |"
        )
    return "\n".join(lines)


def byte_compile() -> None:
    """Write the bytecode of TextRL's own modules, as pip does when it installs a wheel (TRL's, installed from its
    wheel, have theirs). An editable checkout on a machine that sets PYTHONDONTWRITEBYTECODE, as this one does, would
    otherwise compile TextRL from source in every benchmarked process (about 60 ms of start-up that no installed
    TextRL pays)."""
    import compileall

    for folder in ("textrl", "spec", "generated"):
        compileall.compile_dir(str(ROOT / folder), quiet=1)


def run_training(tiny: str, mode: str, algo: str, *options: str) -> dict[str, Any]:
    """One bench/training.py run in a fresh process; its JSON result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        done = subprocess.run(
            [sys.executable, str(HERE / "training.py"), "--mode", mode, "--algo", algo, "--tiny", tiny,
             "--out", str(out), *options],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"bench/training.py {mode} {algo} {' '.join(options)} failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["textrl_lines"] = [line for line in done.stderr.splitlines() if line.startswith("textrl:")]
    return result


def median_seconds(cmd: list[str], runs: int, cwd: Path, env: dict[str, str] | None = None) -> float:
    """Median wall time of `runs` runs of `cmd` (each must succeed)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=True, env={**os.environ, **(env or {})})
        times.append(time.perf_counter() - start)
    return statistics.median(times)
