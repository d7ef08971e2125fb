"""A run's output_dir before the run (issue 31): the lock that makes a folder one run's, the folder of a run that
stopped before it saved anything, a checkpoint that is not whole, an output_dir that cannot be written, and paths
with ~ and $VAR. No torch: these are the checks the dry run makes too."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from textrl.checkpoints.files import LOCK, MANIFEST
from textrl.checkpoints.lock import OutputDirLock, acquire, check_free, held, holder, release
from textrl.checkpoints.run_folder import (
    PYTHON,
    check_checkpoint,
    check_output_dir,
    check_writable,
    clear,
    stopped_before_saving,
)
from textrl.errors import ConfigError

HOLD = """
import sys, time
from textrl.checkpoints.lock import acquire
acquire(sys.argv[1], command="textrl-train --config first.yaml")
print("held", flush=True)
time.sleep(120)
"""


def hold_in_another_process(folder: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_is_refused_naming_the_first_and_a_killed_run_leaves_no_lock(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    first = hold_in_another_process(folder)
    try:
        assert holder(folder) is not None
        with pytest.raises(ConfigError, match=rf"output_dir: .*out is in use by another run: textrl-train --config "
                           rf"first\.yaml \(pid {first.pid} on .*\)\..*Fix: wait for that run to finish"):  # fmt: skip
            acquire(folder)
        with pytest.raises(ConfigError, match="is in use by another run"):
            check_free(folder)  # the dry run's check: the same refusal, creating nothing
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert first.stdout is not None
        first.stdout.close()
    assert (folder / LOCK).is_file()  # the killed run's file stays; its lock went with the process
    assert holder(folder) is None
    check_free(folder)
    with OutputDirLock(folder):  # the twin: a run takes the folder now
        assert held(folder) and json.loads((folder / LOCK).read_text())["pid"] == os.getpid()
    assert not (folder / LOCK).exists() and not held(folder)


def test_the_lock_is_reentrant_in_one_process_and_a_folder_it_made_empty_is_removed(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    acquire(folder)
    acquire(folder)  # textrl-train takes it, then the trainer's train() does
    release(folder)
    assert held(folder) and (folder / LOCK).is_file()
    release(folder)
    assert not folder.exists()  # stopped before anything was written: no empty folder left behind
    kept = tmp_path / "kept"
    with OutputDirLock(kept):
        (kept / "model.safetensors").write_text("x")
    assert sorted(p.name for p in kept.iterdir()) == ["model.safetensors"]


def test_other_processes_of_a_launch_hold_the_folder_in_name_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RANK", "1")
    with OutputDirLock(tmp_path / "out"):
        assert held(tmp_path / "out") and not (tmp_path / "out").exists()  # process 0 locks and makes it


def run_that_stopped_early(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text("{}")
    (folder / LOCK).write_text("{}")  # left by a killed run
    return folder


def test_a_run_that_stopped_before_saving_is_replaced_by_a_plain_rerun(tmp_path: Path) -> None:
    folder = run_that_stopped_early(tmp_path / "out")
    assert stopped_before_saving(folder)
    assert check_output_dir(folder, resume=False, overwrite=False) is None  # no refusal: the rerun replaces it
    with pytest.raises(ConfigError, match=r"--resume: found no complete checkpoint-N folder in .*out \(it holds a run "
                       r"that stopped before its first checkpoint; a rerun without --resume replaces it\)"):  # fmt: skip
        check_output_dir(folder, resume=True, overwrite=False)
    clear(folder)
    assert [p.name for p in folder.iterdir()] == [LOCK]
    saved = run_that_stopped_early(tmp_path / "saved")
    (saved / "model.safetensors").write_text("x")  # the twin: a run that saved something is not replaced silently
    assert not stopped_before_saving(saved)
    with pytest.raises(ConfigError, match=r"output_dir: .*saved is not empty \(model\.safetensors, "
                       r"textrl_manifest\.json\)\. Fix: --resume to continue"):  # fmt: skip
        check_output_dir(saved, resume=False, overwrite=False)
    with pytest.raises(ConfigError, match=r"train\(resume_from_checkpoint=True\) to continue .* train\(overwrite=True\) "
                       r"to delete it"):  # fmt: skip
        check_output_dir(saved, resume=False, overwrite=False, wording=PYTHON)


def checkpoint(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True)
    for name in ("trainer_state.json", *names):
        (folder / name).write_text("{}")
    return folder


WHOLE = ("model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth")


@pytest.mark.parametrize(
    ("missing", "match"),
    [
        ("optimizer.pt", r"optimizer\.pt is missing: the optimizer's moments would start again from zero"),
        ("scheduler.pt", r"scheduler\.pt is missing: the learning-rate schedule would start again"),
        ("rng_state.pth", r"rng_state\.pth is missing: data order and sampling would continue from another"),
    ],
)
def test_resume_refuses_a_checkpoint_without_its_state_unless_asked(
    tmp_path: Path, missing: str, match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = checkpoint(tmp_path / "checkpoint-4", *(n for n in WHOLE if n != missing))
    with pytest.raises(ConfigError, match=rf"--resume: .*checkpoint-4 is not whole: {match}.*Fix: resume from an "
                       r"earlier whole checkpoint .* or pass --resume-changed to continue with that loss"):  # fmt: skip
        check_checkpoint(folder, resume_changed=False)
    check_checkpoint(folder, resume_changed=True)  # asked for: resumes, naming the loss
    assert re.search(match, capsys.readouterr().err)
    check_checkpoint(checkpoint(tmp_path / "whole", *WHOLE), resume_changed=False)  # the twin


def test_resume_refuses_a_checkpoint_without_weights_even_when_asked(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path / "checkpoint-2", "optimizer.pt", "scheduler.pt", "rng_state.pth")
    for asked in (False, True):
        with pytest.raises(ConfigError, match=r"--resume: .*checkpoint-2 has no model weights \(model\.safetensors, its "
                           r"shards, or adapter_model\.safetensors for a LoRA run\), so there is nothing to resume"):  # fmt: skip
            check_checkpoint(folder, resume_changed=asked)
    lora = checkpoint(tmp_path / "lora", "adapter_model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state_0.pth")
    check_checkpoint(lora, resume_changed=False)  # a LoRA run's checkpoint of a 2-process run is whole


def test_an_output_dir_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match=r"output_dir: .*file/run lies under .*file, which is a file"):
        check_writable(tmp_path / "file" / "run")
    with pytest.raises(ConfigError, match=r"output_dir: .*file is a file; output_dir is the folder for checkpoints"):
        check_writable(tmp_path / "file")
    check_writable(tmp_path / "new" / "run")  # the twin: a folder that does not exist yet under a writable one
    assert not (tmp_path / "new").exists()  # the check writes nothing that stays


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(), reason="needs root and setpriv")
def test_a_read_only_output_dir_is_named(tmp_path: Path) -> None:
    """Permission bits do not stop root, so the check writes for real: here as an unprivileged user (setpriv)."""
    import tempfile

    base = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's own folders are closed to other users
    base.chmod(0o755)
    folder = base / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    code = (
        "from pathlib import Path; from textrl.checkpoints.run_folder import check_writable\n"
        f"check_writable(Path({str(folder / 'run')!r}))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code]
    done = subprocess.run(as_nobody, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1 and "ro/run cannot be written: " in done.stderr and "refuses new files" in done.stderr
    folder.chmod(0o777)
    done = subprocess.run(as_nobody, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    closed = tmp_path / "closed" / "run"  # pytest's folder, which nobody but root may enter
    done = subprocess.run([*as_nobody[:-1], code.replace(str(folder / "run"), str(closed))], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 1 and "closed/run cannot be reached (Permission denied" in done.stderr, done.stderr
    import shutil

    shutil.rmtree(base)


def test_paths_expand_as_a_shell_would(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from textrl import TextRLConfig

    monkeypatch.setenv("RUNS", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for written, expected in [("$RUNS/a", tmp_path / "a"), ("${RUNS}/b", tmp_path / "b"), ("~/c", tmp_path / "home/c")]:
        cfg = TextRLConfig(algo="dpo", output_dir=written, model={"name": "~/m"}, dataset={"path": "$RUNS/d.jsonl"},
                           reference_cache_dir="$RUNS/cache")  # fmt: skip
        assert cfg.output_dir == str(expected)  # type: ignore[attr-defined]
        assert cfg.model.name == str(tmp_path / "home/m") and cfg.dataset.path == str(tmp_path / "d.jsonl")  # type: ignore[attr-defined]
        assert cfg.reference_cache_dir == str(tmp_path / "cache")  # type: ignore[attr-defined]
    files = TextRLConfig(algo="dpo", output_dir="o", dataset={"path": ".", "data_files": ["$RUNS/*.jsonl"]})
    assert files.dataset.data_files == [f"{tmp_path}/*.jsonl"]  # type: ignore[attr-defined]
    monkeypatch.delenv("RT", raising=False)
    with pytest.raises(ConfigError, match=r"output_dir: '\$RT/run' uses the environment variable RT, which is not "
                       r"set, so the path cannot be known.*Fix: export RT=\.\.\. before the run"):  # fmt: skip
        TextRLConfig(algo="dpo", output_dir="$RT/run")
    with pytest.raises(ConfigError, match=r"dataset\.path: '\$\{RT\}/d\.jsonl' uses the environment variable RT"):
        TextRLConfig(algo="dpo", output_dir="o", dataset={"path": "${RT}/d.jsonl"})
    assert TextRLConfig(algo="dpo", output_dir="out/plain").output_dir == "out/plain"  # type: ignore[attr-defined]
