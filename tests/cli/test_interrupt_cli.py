"""SIGTERM/SIGINT during textrl-train saves a checkpoint at the next step and names the resume command; the resumed
run ends at the same step, on the same trajectory, as an uninterrupted one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import BIN, ROOT, write

pytestmark = pytest.mark.slow

SLOW_REWARD = """import time
from pathlib import Path


def slow(prompts, completions, **_):
    calls = Path("calls")
    calls.write_text(str(int(calls.read_text()) + 1 if calls.exists() else 1))
    time.sleep(0.1)  # room to send a signal mid-run
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
"""
CONFIG = """algo: grpo
output_dir: OUT
num_generations: 4
per_device_train_batch_size: 8
max_completion_length: 8
learning_rate: 1e-3
max_steps: 12
logging_steps: 1
save_steps: 12
seed: 3
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: quickstart_prompts.jsonl}
reward: slow_rewards:slow
"""


def _history(run_dir: Path) -> list[dict[str, float]]:
    state = json.loads((run_dir / "checkpoint-12" / "trainer_state.json").read_text())
    assert state["global_step"] == 12
    return [{k: h[k] for k in ("step", "loss", "reward")} for h in state["log_history"] if "reward" in h]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupt_then_resume_matches_an_uninterrupted_run(textrl_home: Path, tmp_path: Path, sig: int) -> None:
    shutil.copy(ROOT / "examples/quickstart_prompts.jsonl", tmp_path)
    write(tmp_path / "slow_rewards.py", SLOW_REWARD)
    write(tmp_path / "full.yaml", CONFIG.replace("OUT", "full"))
    write(tmp_path / "cut.yaml", CONFIG.replace("OUT", "cut"))
    env = {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}
    exe = str(BIN / "textrl-train")
    full = subprocess.run(
        [exe, "--config", "full.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert full.returncode == 0, full.stderr[-2000:]

    (tmp_path / "calls").unlink()
    proc = subprocess.Popen([exe, "--config", "cut.yaml"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (
        (tmp_path / "calls").exists() and int((tmp_path / "calls").read_text() or 0) >= 4
    ):
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), err[-2000:]
    name = signal.Signals(sig).name
    assert f"textrl: got {name}; saving a checkpoint at the end of this step" in err
    assert "Resume with: textrl-train --config cut.yaml --resume" in err
    saved = [p for p in (tmp_path / "cut").iterdir() if p.name.startswith("checkpoint-")]
    assert len(saved) == 1 and 4 <= int(saved[0].name.split("-")[1]) < 12, saved
    assert (saved[0] / "trainer_state.json").is_file()

    resumed = subprocess.run([exe, "--config", "cut.yaml", "--resume"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"resuming from cut/{saved[0].name}" in resumed.stderr
    assert "done at global step 12" in resumed.stdout
    ours, reference = _history(tmp_path / "cut"), _history(tmp_path / "full")
    assert [h["step"] for h in ours] == list(range(1, 13))
    for mine, theirs in zip(ours, reference, strict=True):
        assert mine["loss"] == pytest.approx(theirs["loss"], abs=1e-6) and mine["reward"] == pytest.approx(
            theirs["reward"], abs=1e-6
        ), (mine, theirs)


DPO = """algo: dpo
output_dir: OUT
per_device_train_batch_size: 4
max_length: 32
learning_rate: 1e-3
max_steps: 120
logging_steps: 1
save_steps: 5
save_total_limit: 2
seed: 5
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: pairs.jsonl}
"""


def test_dpo_interrupt_then_resume_matches(textrl_home: Path, tmp_path: Path) -> None:
    words = ["sea", "sky", "sun", "sand", "tree", "leaf", "rock", "rain"]
    rows = [
        {"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": f" {words[(i + 3) % 8]}"}
        for i, w in enumerate(words)
    ]
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows * 8))
    write(tmp_path / "full.yaml", DPO.replace("OUT", "full"))
    write(tmp_path / "cut.yaml", DPO.replace("OUT", "cut"))
    env = {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}
    exe = str(BIN / "textrl-train")
    full = subprocess.run(
        [exe, "--config", "full.yaml"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert full.returncode == 0, full.stderr[-2000:]
    proc = subprocess.Popen([exe, "--config", "cut.yaml"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (tmp_path / "cut/checkpoint-5/trainer_state.json").exists():
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]
    stopped = int(err.split("stopped by SIGTERM at step ")[1].split(";")[0])
    assert 5 <= stopped < 120
    resumed = subprocess.run([exe, "--config", "cut.yaml", "--resume"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "done at global step 120" in resumed.stdout

    def history(run: str) -> list[tuple[int, float]]:
        state = json.loads((tmp_path / run / "checkpoint-120" / "trainer_state.json").read_text())
        return [(h["step"], h["loss"]) for h in state["log_history"] if "loss" in h and "rewards/accuracies" in h]

    ours, reference = history("cut"), history("full")
    assert [s for s, _ in ours] == list(range(1, 121))
    assert [loss for _, loss in ours] == pytest.approx([loss for _, loss in reference], abs=1e-6)


KILL_DURING_SAVE = """import os, signal, sys
from transformers import Trainer

saves = []
write_rng = Trainer._save_rng_state


def killed_on_second_save(self, output_dir):
    saves.append(output_dir)
    if len(saves) == 2:  # weights and optimizer of checkpoint-4 are written; the process dies before the rest
        os.kill(os.getpid(), signal.SIGKILL)
    write_rng(self, output_dir)


Trainer._save_rng_state = killed_on_second_save
from textrl.cli import train_main

sys.exit(train_main(sys.argv[1:]))
"""


def test_a_kill_while_saving_leaves_no_checkpoint_folder_and_resume_says_so(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL in the middle of writing checkpoint-4 (after its weights and optimizer state, before the RNG state
    and trainer_state.json): no checkpoint-4 folder exists, checkpoint-2 is intact, and --resume removes the
    staged remains, says so, and finishes from checkpoint-2."""
    from .conftest import GRPO

    write(tmp_path / "g.yaml", GRPO.replace("max_steps: 4", "max_steps: 6"))
    write(tmp_path / "kill_during_save.py", KILL_DURING_SAVE)
    killed = cli(sys.executable, "kill_during_save.py", "--config", "g.yaml")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    run_dir = tmp_path / "out/grpo"
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith("checkpoint-")) == ["checkpoint-2"]
    assert (run_dir / "checkpoint-2/trainer_state.json").is_file()
    staged = run_dir / ".textrl-partial/checkpoint-4"
    assert (staged / "model.safetensors").is_file() and not (staged / "trainer_state.json").exists()

    resumed = cli("textrl-train", "--config", "g.yaml", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "removing out/grpo/.textrl-partial/checkpoint-4: a save that was cut off" in resumed.stderr
    assert "resuming from out/grpo/checkpoint-2" in resumed.stderr
    assert "done at global step 6" in resumed.stdout
    assert not (run_dir / ".textrl-partial").exists()
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith("checkpoint-")) == [
        "checkpoint-2",
        "checkpoint-4",
        "checkpoint-6",
    ]
    assert (run_dir / "model.safetensors").is_file() and (run_dir / "checkpoint-4/trainer_state.json").is_file()
