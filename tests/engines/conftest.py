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

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def textrl_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("textrl_home")
    from textrl.tiny import build_tiny_model

    build_tiny_model(home / "tiny")
    return home


@dataclass
class Launch:
    """A finished `accelerate launch` of textrl-train."""

    done: subprocess.CompletedProcess[str]
    out: Path

    @property
    def history(self) -> list[dict[str, Any]]:
        return [h for h in json.loads((self.out / "log_history.json").read_text()) if "loss" in h]


def env(textrl_home: Path) -> dict[str, str]:
    """The launches' environment: this one's (PYTHONPATH carries the leg's DeepSpeed to the workers), one thread."""
    return {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}


def launch(folder: Path, config: str, textrl_home: Path, *more: str, processes: int = 2) -> Launch:
    """`textrl-train --write-accelerate-config` then `accelerate launch ... -m textrl.cli train` in `folder`."""
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    (folder / "run.yaml").write_text(config, encoding="utf-8")
    e = env(textrl_home)
    wrote = subprocess.run([str(BIN / "textrl-train"), "--config", "run.yaml", "--write-accelerate-config", "acc.yaml",
                            "--num-processes", str(processes)], cwd=folder, env=e, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    done = subprocess.run([str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train",
                           "--config", "run.yaml", *more], cwd=folder, env=e, capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return Launch(done, folder / "out")
