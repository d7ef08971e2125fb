"""The engines that run on a CPU, end to end, launched the way README says: DeepSpeed ZeRO on 2 processes (over gloo),
two "machines" on this one forming one run.

DeepSpeed is not in .venv: `scripts/test.sh`'s engines leg installs it (`scripts/engines.sh`, into .engines/) and runs
this folder with it on the path; the main suite leaves the folder out. Run alone:
    PYTHONPATH=$(bash scripts/engines.sh) .venv/bin/python -m pytest tests/engines
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli.conftest import textrl_home  # noqa: F401  (the session's TEXTRL_HOME with textrl:tiny built once)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@dataclass
class Launch:
    """A finished `accelerate launch` of textrl-train."""

    done: subprocess.CompletedProcess[str]
    out: Path

    @property
    def history(self) -> list[dict[str, Any]]:
        return [h for h in json.loads((self.out / "log_history.json").read_text()) if "loss" in h]


def env(home: Path) -> dict[str, str]:
    """The launches' environment: this one's (PYTHONPATH carries the leg's DeepSpeed to the workers), one thread,
    TEXTRL_HOME `home`."""
    return {**os.environ, "TEXTRL_HOME": str(home), "OMP_NUM_THREADS": "1"}


TINY_GRPO = """algo: grpo
output_dir: out
num_generations: 4
per_device_train_batch_size: 4
max_completion_length: 8
learning_rate: 1e-3
max_steps: 2
logging_steps: 1
save_steps: 2
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: quickstart_prompts.jsonl}
reward: quickstart_rewards:lowercase_share
"""
"""A 2-step GRPO run on the tiny model with the demo's prompts and reward."""

LAUNCH = ["accelerate", "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train", "--config", "run.yaml"]
"""The command --write-accelerate-config prints for run.yaml (`accelerate` from this environment's bin)."""


def prepare(folder: Path, config: str, home: Path, processes: int = 2) -> dict[str, str]:
    """run.yaml (with the demo's prompts and reward beside it) and its acc.yaml in `folder`; the launch environment."""
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    (folder / "run.yaml").write_text(config, encoding="utf-8")
    e = env(home)
    wrote = subprocess.run([str(BIN / "textrl-train"), "--config", "run.yaml", "--write-accelerate-config", "acc.yaml",
                            "--num-processes", str(processes)], cwd=folder, env=e, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    return e


def launch(folder: Path, config: str, home: Path, *more: str) -> Launch:
    """`textrl-train --write-accelerate-config` then `accelerate launch ... -m textrl.cli train` in `folder`."""
    e = prepare(folder, config, home)
    done = subprocess.run([str(BIN / LAUNCH[0]), *LAUNCH[1:], *more], cwd=folder, env=e, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return Launch(done, folder / "out")
