"""The stall watchdog in real runs: a reward that hangs in a one-process run, and a two-process run (accelerate
launch, gloo on CPU) where only one process hangs. Each process writes its stacks and the run stops with 124."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from .conftest import BIN, GRPO, write

pytestmark = pytest.mark.slow

HANGING = '''
import os
import time

calls = 0


def hang_on_third_call(completions, **_):
    """Scores like the demo reward, then never returns on its third call (in the process named by HANG_RANK)."""
    global calls
    calls += 1
    if calls == 3 and os.environ.get("RANK", "0") == os.environ.get("HANG_RANK", "0"):
        time.sleep(3600)
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
'''


def _config(tmp_path: Path, *, batch: int) -> None:
    (tmp_path / "hanging.py").write_text(HANGING)
    body = (
        GRPO.replace("quickstart_rewards:lowercase_share", "hanging:hang_on_third_call")
        .replace("per_device_train_batch_size: 8", f"per_device_train_batch_size: {batch}")
        .replace("max_steps: 4", "max_steps: 8")
    )
    write(tmp_path / "grpo.yaml", body + "stall_timeout: 4\n")


def test_a_hanging_reward_leaves_its_stack_and_exit_124(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _config(tmp_path, batch=8)
    start = time.monotonic()
    done = cli("textrl-train", "--config", "grpo.yaml", timeout=180)
    assert done.returncode == 124, done.stderr[-3000:]
    assert time.monotonic() - start < 120
    dump = tmp_path / "out/grpo/stall-rank0.txt"
    assert "every thread's stack of process 0 is in out/grpo/stall-rank0.txt" in done.stderr
    assert "no training progress for 4 s after step 2 (stall_timeout)" in done.stderr
    text = dump.read_text()
    assert text.startswith("textrl stall watchdog: no training progress for 4 s (stall_timeout) after global step 2")
    assert 'File "' in text and "hang_on_third_call" in text  # the frame that hangs, in the main thread's stack
    assert "textrl-stall-watchdog" in text or "_watch" in text  # every thread, the watchdog's own included


def test_two_processes_one_hangs_both_leave_stacks(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _config(tmp_path, batch=2)
    wrote = cli(
        "textrl-train", "--config", "grpo.yaml", "--write-accelerate-config", "acc.yaml", "--num-processes", "2"
    )
    assert wrote.returncode == 0, wrote.stderr
    assert yaml.safe_load((tmp_path / "acc.yaml").read_text())["num_processes"] == 2
    done = cli(str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train",
               "--config", "grpo.yaml", env={"HANG_RANK": "1"}, timeout=240)  # fmt: skip
    assert done.returncode != 0, done.stderr[-3000:]
    hung, waiting = (tmp_path / "out/grpo/stall-rank1.txt"), (tmp_path / "out/grpo/stall-rank0.txt")
    assert hung.is_file() and waiting.is_file(), done.stderr[-3000:]
    assert "hang_on_third_call" in hung.read_text()  # rank 1: inside the reward
    assert "hang_on_third_call" not in waiting.read_text()
    assert "in all_gather" in waiting.read_text()  # rank 0: waiting for rank 1's rewards, in the collective
    assert "process rank 0" in waiting.read_text() and "process rank 1" in hung.read_text()
