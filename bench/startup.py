"""Start-up cost: TextRL's checks need no torch, TRL's CLI imports it. Median wall time of several runs, and ratios.

    .venv/bin/python bench/startup.py [--runs 5]

Prints a Markdown table (case, TextRL, baseline, ratio, machine). A benchmark, not a test: nothing asserts times.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def median_seconds(cmd: list[str], runs: int, cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("quickstart.yaml", "quickstart_prompts.jsonl", "quickstart_rewards.py"):
            shutil.copy(ROOT / "examples" / name, work / name)
        py = sys.executable
        cases = [
            ("--help", [str(BIN / "textrl-train"), "--help"], [str(BIN / "trl"), "dpo", "--help"]),
            ("dry run of a config vs TRL's --help", [str(BIN / "textrl-train"), "--config", "quickstart.yaml",
             "--dry-run"], [str(BIN / "trl"), "dpo", "--help"]),
            ("build a config object", [py, "-c", "import textrl; textrl.TextRLConfig(algo='grpo', output_dir='o')"],
             [py, "-c", "from trl import GRPOConfig"]),
            ("import the config class", [py, "-c", "import textrl; textrl.TextRLConfig"],
             [py, "-c", "from trl import DPOConfig"]),
        ]  # fmt: skip
        machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        print("| case | TextRL (s) | baseline (s) | ratio TextRL/baseline | machine |")
        print("|---|---|---|---|---|")
        for name, ours, theirs in cases:
            a, b = median_seconds(ours, runs, work), median_seconds(theirs, runs, work)
            print(f"| {name} | {a:.3f} | {b:.3f} | {a / b:.3f} | {machine} |")


if __name__ == "__main__":
    main()
