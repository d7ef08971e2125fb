"""--resume checks what it resumes (the checkpoint's fingerprint against the run about to continue), and a resumed
run sees exactly the prompts an uninterrupted run sees, in the same order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import GRPO, write

pytestmark = pytest.mark.slow

RECORDING = '''
import json
import os
import signal
from pathlib import Path

calls = 0


def record_prompts(prompts, completions, **_):
    """Appends each call's prompts (one per group) to prompts_seen.jsonl; SIGTERMs its own process on call STOP_AT."""
    global calls
    calls += 1
    with open("prompts_seen.jsonl", "a") as out:
        out.write(json.dumps(list(dict.fromkeys(prompts))) + "\\n")
    if str(calls) == os.environ.get("STOP_AT") and not Path("stopped").exists():
        Path("stopped").write_text("once")
        os.kill(os.getpid(), signal.SIGTERM)  # finish this step, save, stop (exit 143)
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
'''


def test_resume_refuses_changed_data_and_options_and_lists_them(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO.replace("max_steps: 4", "max_steps: 2"))
    first = cli("textrl-train", "--config", "grpo.yaml")
    assert first.returncode == 0, first.stderr[-3000:]
    stored = json.loads((tmp_path / "out/grpo/checkpoint-2/textrl_fingerprint.json").read_text())
    assert stored["datasets"]["train"]["rows"] == 256 and stored["processes"] == 1
    assert stored["config"]["learning_rate"] == 0.001 and stored["rewards"]["names"] == ["lowercase_share"]

    data = tmp_path / "quickstart_prompts.jsonl"
    original = data.read_text()
    data.write_text(original.replace("a", "A", 1))  # one character of one prompt
    changed = cli("textrl-train", "--config", "grpo.yaml", "--resume", "--learning-rate", "0.002")
    assert changed.returncode == 2, changed.stderr[-3000:]
    err = changed.stderr
    assert "checkpoint-2 was written by a run that trained something else" in err
    assert "- learning_rate: 0.001 -> 0.002" in err
    assert "- train dataset: 256 rows prompt (sha256 " in err
    assert "Fix: resume with the checkpoint's settings and data, start a new run in another output_dir, or pass " \
        "--resume-changed" in err  # fmt: skip

    data.write_text(original)
    moved = tmp_path / "moved.jsonl"
    shutil.copy(data, moved)  # same rows, another file: harmless; so are logging and the run's length
    ok = cli("textrl-train", "--config", "grpo.yaml", "--resume", "--logging-steps", "2", "--max-steps", "3",
             "--set", "dataset.path=moved.jsonl")  # fmt: skip
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert "resuming checkpoint-2 with changes that do not alter training:" in ok.stderr
    assert "- logging_steps: 1.0 -> 2.0" in ok.stderr
    assert '- dataset.path: "quickstart_prompts.jsonl" -> "moved.jsonl" (the rows are compared below' in ok.stderr
    assert "- max_steps: 2 -> 3 (the learning-rate schedule is recomputed" in ok.stderr

    forced = cli("textrl-train", "--config", "grpo.yaml", "--resume-changed", "--learning-rate", "0.002",
                 "--max-steps", "4")  # fmt: skip
    assert forced.returncode == 0, forced.stderr[-3000:]
    assert "despite changes that alter training (--resume-changed):" in forced.stderr
    assert "- learning_rate: 0.001 -> 0.002" in forced.stderr
    assert json.loads((tmp_path / "out/grpo/checkpoint-4/trainer_state.json").read_text())["global_step"] == 4


@pytest.mark.parametrize(
    ("extra", "stop_at", "checkpoint"),
    [
        ("", "3", "checkpoint-3"),
        # a generation round spans 2 optimizer steps (steps 3-4 share the round the 2nd call generates): the stop waits
        # for the end of the round, so the resumed run does not regenerate its prompts with new completions
        ("steps_per_generation: 2\nper_device_train_batch_size: 4\n", "2", "checkpoint-4"),
    ],
    ids=["one round per step", "a round spans two steps"],
)
def test_a_resumed_run_sees_the_same_prompts_in_the_same_order(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, extra: str, stop_at: str, checkpoint: str
) -> None:
    """SIGTERM from inside the reward at its STOP_AT-th call: the run saves a checkpoint and stops; the resumed run's
    prompts, call by call, are exactly those of an uninterrupted run (none skipped, none repeated)."""
    (tmp_path / "recording.py").write_text(RECORDING)
    body = GRPO.replace("quickstart_rewards:lowercase_share", "recording:record_prompts").replace(
        "max_steps: 4", "max_steps: 6"
    )
    if extra:
        body = body.replace("per_device_train_batch_size: 8\n", "") + extra
    write(tmp_path / "grpo.yaml", body.replace("save_steps: 2", "save_steps: 100"))
    whole = cli("textrl-train", "--config", "grpo.yaml", "--output-dir", "out/whole")
    assert whole.returncode == 0, whole.stderr[-3000:]
    expected = (tmp_path / "prompts_seen.jsonl").read_text().splitlines()
    (tmp_path / "prompts_seen.jsonl").unlink()
    assert len(expected) == (3 if extra else 6) and all(len(json.loads(line)) == 2 for line in expected)

    stopped = cli("textrl-train", "--config", "grpo.yaml", "--output-dir", "out/cut", env={"STOP_AT": stop_at})
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert (tmp_path / "out/cut" / checkpoint).is_dir(), sorted(p.name for p in (tmp_path / "out/cut").iterdir())
    resumed = cli("textrl-train", "--config", "grpo.yaml", "--output-dir", "out/cut", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    seen = (tmp_path / "prompts_seen.jsonl").read_text().splitlines()
    assert seen == expected
