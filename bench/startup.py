"""Start-up cost: TextRL's checks need no torch, TRL's CLI and config classes import it.

    .venv/bin/python bench/startup.py [--runs 5]

Median wall time of several runs of each command, and the ratio TextRL / TRL. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from common import BIN, ROOT, Row, machine, median_seconds, table


def rows(runs: int) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("quickstart.yaml", "quickstart_prompts.jsonl", "quickstart_rewards.py"):
            shutil.copy(ROOT / "examples" / name, work / name)
        shutil.copytree(ROOT / "examples" / "trl", work / "trl")  # its recipe reads ../quickstart_prompts.jsonl
        py, train, trl = sys.executable, str(BIN / "textrl-train"), str(BIN / "trl")
        cases = [
            ("start-up: `textrl-train --help` vs `trl dpo --help`", [train, "--help"], [trl, "dpo", "--help"]),
            ("start-up: `textrl-train --dry-run` (config, data, reward, memory plan) vs `trl dpo --help`",
             [train, "--config", "quickstart.yaml", "--dry-run"], [trl, "dpo", "--help"]),
            ("start-up: `textrl-train --trl grpo --dry-run` on a recipe for TRL's CLI vs `trl grpo --help`",
             [train, "--trl", "grpo", "--config", "trl/grpo_recipe.yml", "--dry-run"], [trl, "grpo", "--help"]),
            ("start-up: build a validated `TextRLConfig(algo='dpo')` vs `from trl import DPOConfig`",
             [py, "-c", "import textrl; textrl.TextRLConfig(algo='dpo', output_dir='o')"],
             [py, "-c", "from trl import DPOConfig"]),
        ]  # fmt: skip
        env = {"HF_HUB_OFFLINE": "1"}
        return [
            Row(name, median_seconds(ours, runs, work, env), median_seconds(theirs, runs, work, env), "s",
                f"median of {runs}; target ratio <= 0.1")
            for name, ours, theirs in cases
        ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    print(table(rows(parser.parse_args().runs), machine()))


if __name__ == "__main__":
    main()
