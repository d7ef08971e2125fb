"""CLI tests run the real console scripts in subprocesses, on the offline tiny model (built once per session)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def textrl_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TEXTRL_HOME for the subprocesses, with textrl:tiny built once (not in the user's ~/.cache)."""
    home = tmp_path_factory.mktemp("textrl_home")
    from textrl.tiny import build_tiny_model

    build_tiny_model(home / "tiny")
    return home


@pytest.fixture
def cli(textrl_home: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Run a console script in `tmp_path` (holding a copy of the demo's prompts and reward module)."""
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)

    def run(
        command: str, *args: str, env: dict[str, str] | None = None, timeout: int = 300
    ) -> subprocess.CompletedProcess[str]:
        exe = shutil.which(command, path=str(BIN)) or command
        full_env = {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1", **(env or {})}
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path, env=full_env, timeout=timeout)

    return run


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


GRPO = """algo: grpo
output_dir: out/grpo
num_generations: 4
per_device_train_batch_size: 8
max_completion_length: 8
learning_rate: 1e-3
max_steps: 4
logging_steps: 1
save_steps: 2
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: quickstart_prompts.jsonl}
reward: quickstart_rewards:lowercase_share
"""
