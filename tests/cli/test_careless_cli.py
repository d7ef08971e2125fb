"""textrl-train as a hurried user meets it (issue 31, second round), through the real console script: two runs into
one folder, an output_dir inside the dataset, paths with $VAR and ~, a batch bigger than the data, resuming a
checkpoint that is not whole, a run that died before its first save, Ctrl-C twice and during start-up, and what the
dry run must refuse because the run would. Each case beside a twin that works."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import BIN, GRPO, write

pytestmark = pytest.mark.slow


def run_yaml(tmp_path: Path, text: str = GRPO, name: str = "run.yaml") -> Path:
    return write(tmp_path / name, text)


def start(cli_env: dict[str, str], cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(BIN / "textrl-train"), *args], cwd=cwd, env=cli_env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


@pytest.fixture
def cli_env(textrl_home: Path) -> dict[str, str]:
    import os

    return {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}


SLOW_REWARDS = """import os, pathlib, time
def slow(prompts, completions, **_):
    pathlib.Path("reward_started").touch()
    time.sleep(float(pathlib.Path("sleep").read_text()) if pathlib.Path("sleep").exists() else 0)
    while os.environ.get("HOLD") and pathlib.Path("hold").exists():  # as long as the test needs, however loaded
        time.sleep(0.05)
    return [1.0] * len(completions)
def fast(prompts, completions, **_):
    return [float(len(c)) for c in completions]
"""


def slow_config(tmp_path: Path, out: str = "out/slow", steps: int = 4) -> Path:
    write(tmp_path / "slow_rewards.py", SLOW_REWARDS)
    text = GRPO.replace("out/grpo", out).replace("max_steps: 4", f"max_steps: {steps}")
    return run_yaml(tmp_path, text.replace("reward: quickstart_rewards:lowercase_share",
                                           "reward: {compose: [slow_rewards:fast, slow_rewards:slow]}"), "slow.yaml")  # fmt: skip


def wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.1)


def test_a_second_run_into_the_same_folder_is_refused_naming_the_first(cli, cli_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: both exited 0 with their files mixed, or one died with a raw FileNotFoundError."""
    slow_config(tmp_path)
    write(tmp_path / "hold", "")
    first = start({**cli_env, "HOLD": "1"}, tmp_path, "--config", "slow.yaml")  # the others' rewards do not wait
    try:
        wait_for(tmp_path / "reward_started", first)
        second = cli("textrl-train", "--config", "slow.yaml", "--overwrite")
        assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr
        assert re.search(rf"output_dir: out/slow is in use by another run: textrl-train --config slow\.yaml \(pid "
                         rf"{first.pid} on .*Fix: wait for that run to finish", second.stderr), second.stderr  # fmt: skip
        dry = cli("textrl-train", "--config", "slow.yaml", "--dry-run", "--overwrite")
        assert dry.returncode == 2 and "is in use by another run" in dry.stderr  # the dry run says what the run would
        (tmp_path / "hold").unlink()
        _, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, err
    manifest = json.loads((tmp_path / "out/slow/textrl_manifest.json").read_text())
    assert manifest["textrl_config"]["output_dir"] == "out/slow" and not (tmp_path / "out/slow/.textrl-lock").exists()
    again = cli("textrl-train", "--config", "slow.yaml", "--overwrite")  # the twin: once the first is done
    assert again.returncode == 0, again.stderr


def test_output_dir_inside_the_dataset_folder_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: accepted, and the run's files then broke the dataset for the next run (DataFilesNotFoundError)."""
    (tmp_path / "data").mkdir()
    shutil.copy(tmp_path / "quickstart_prompts.jsonl", tmp_path / "data" / "train.jsonl")
    text = GRPO.replace("dataset: {path: quickstart_prompts.jsonl}", "dataset: {path: data}")
    run_yaml(tmp_path, text.replace("out/grpo", "data/run"))
    for extra in (["--dry-run"], []):
        done = cli("textrl-train", "--config", "run.yaml", *extra)
        assert done.returncode == 2, done.stderr
        assert re.search(r"output_dir: data/run lies inside dataset\.path data \(.*/data\), which this run reads; the "
                         r"run's checkpoints and files would land in it\. Fix: write the run to a folder of its own",
                         done.stderr), done.stderr  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["train.jsonl"]
    run_yaml(tmp_path, text.replace("out/grpo", "runs/beside-the-data"))
    assert cli("textrl-train", "--config", "run.yaml", "--dry-run").returncode == 0


def test_environment_variables_and_home_in_paths(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: folders literally named `$RT` and `~` appeared in the working directory."""
    run_yaml(
        tmp_path, GRPO.replace("output_dir: out/grpo", "output_dir: $RT/run").replace("max_steps: 4", "max_steps: 1")
    )
    for env, state in (({}, "is not set"), ({"RT": ""}, "is empty")):  # a shell would write /run
        done = cli("textrl-train", "--config", "run.yaml", env=env)
        assert done.returncode == 2 and f"uses the environment variable RT, which {state}" in done.stderr, done.stderr
    done = cli("textrl-train", "--config", "run.yaml", env={"RT": str(tmp_path / "runs")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "runs/run/model.safetensors").is_file()
    run_yaml(
        tmp_path,
        GRPO.replace("output_dir: out/grpo", "output_dir: ~/tilde-run").replace("max_steps: 4", "max_steps: 1"),
    )
    done = cli("textrl-train", "--config", "run.yaml", env={"HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "home/tilde-run/model.safetensors").is_file()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(("$", "~"))]


def test_a_batch_that_needs_more_prompts_than_the_data_has(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: 8 rows, per_device_train_batch_size 64, 4 generations trained 0 steps, saved the untrained model and
    exited 0, and the dry run said the run would start."""
    text = GRPO.replace("dataset: {path: quickstart_prompts.jsonl}", "dataset: {list: [a, b, c, d, e, f, g, h]}")
    run_yaml(tmp_path, text.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 64"))
    for extra in (["--dry-run"], []):
        done = cli("textrl-train", "--config", "run.yaml", *extra)
        assert done.returncode == 2, done.stderr
        assert ("per_device_train_batch_size: one generation round takes 16 distinct prompts (64 completions / "
                "num_generations=4), but the training set has 8 rows, so TRL would draw no batch and train 0 steps. "
                "Fix: give at least 16 rows, or make the generation batch at most 32 completions") in done.stderr  # fmt: skip
    assert not (tmp_path / "out").exists()
    run_yaml(tmp_path, text)  # the twin: 2 prompts a round, 4 rounds an epoch
    done = cli("textrl-train", "--config", "run.yaml", "--dry-run")
    assert done.returncode == 0 and "epoch: 8 rows = 4 generation round(s) of 2 prompts" in done.stdout, done.stderr


def test_resume_names_what_a_checkpoint_lacks(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: a missing optimizer.pt, scheduler.pt or rng_state.pth reset that state without a word; a missing
    model.safetensors gave a raw ValueError."""
    run_yaml(tmp_path)
    assert cli("textrl-train", "--config", "run.yaml").returncode == 0
    checkpoint = tmp_path / "out/grpo/checkpoint-4"
    (checkpoint / "optimizer.pt").unlink()
    for extra in (["--dry-run"], []):
        done = cli("textrl-train", "--config", "run.yaml", "--resume", *extra)
        assert done.returncode == 2, done.stderr
        assert ("--resume: out/grpo/checkpoint-4 is not whole: optimizer.pt is missing: the optimizer's moments would "
                "start again from zero. Fix: resume from an earlier whole checkpoint") in done.stderr  # fmt: skip
    done = cli("textrl-train", "--config", "run.yaml", "--resume-changed")  # asked for: resumes, naming the loss
    assert done.returncode == 0 and "without all of its state (--resume-changed)" in done.stderr, done.stderr
    assert "optimizer.pt is missing" in done.stderr
    (checkpoint / "model.safetensors").unlink()
    done = cli("textrl-train", "--config", "run.yaml", "--resume-changed")
    assert done.returncode == 2 and "has no model weights" in done.stderr and "Traceback" not in done.stderr


def test_a_run_that_died_before_its_first_save_is_replaced_by_a_rerun(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: the folder holding only the manifest blocked a plain rerun, while --resume said there was no checkpoint."""
    write(tmp_path / "dies.py", "def first_step(prompts, completions, **_):\n    raise RuntimeError('boom')\n")
    run_yaml(tmp_path, GRPO.replace("reward: quickstart_rewards:lowercase_share", "reward: dies:first_step"))
    died = cli("textrl-train", "--config", "run.yaml")
    assert died.returncode != 0 and sorted(p.name for p in (tmp_path / "out/grpo").iterdir()) == [
        "textrl_manifest.json"
    ]
    resumed = cli("textrl-train", "--config", "run.yaml", "--resume")
    assert resumed.returncode == 2 and "it holds a run that stopped before its first checkpoint; a rerun without " \
                                      "--resume replaces it" in resumed.stderr  # fmt: skip
    run_yaml(tmp_path)
    rerun = cli("textrl-train", "--config", "run.yaml")
    assert rerun.returncode == 0, rerun.stderr
    assert "holds a run that stopped before its first checkpoint (textrl_manifest.json); replacing it" in rerun.stderr


def test_ctrl_c_twice_stops_at_once_even_inside_a_slow_reward(cli, cli_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Before: the second Ctrl-C waited for a 15-s reward running in a compose(...) worker thread. The printed
    --resume command is quoted for a config path with a space."""
    (tmp_path / "my runs").mkdir()
    write(tmp_path / "sleep", "15")
    shutil.move(slow_config(tmp_path), tmp_path / "my runs" / "slow.yaml")
    for name in ("slow_rewards.py", "quickstart_prompts.jsonl"):
        shutil.copy(tmp_path / name, tmp_path / "my runs")
    proc = start(cli_env, tmp_path, "--config", "my runs/slow.yaml")
    try:
        wait_for(tmp_path / "reward_started", proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(1)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)  # the reward still had ~13 s to sleep
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate()
    assert proc.returncode == -signal.SIGINT and took < 10, (took, err)
    assert "send it again to stop at once" in err and "Traceback" not in err
    write(tmp_path / "sleep", "0")
    (tmp_path / "reward_started").unlink()
    once = start(cli_env, tmp_path, "--config", "my runs/slow.yaml", "--overwrite")  # the twin: once, and it saves
    wait_for(tmp_path / "reward_started", once)
    once.send_signal(signal.SIGINT)
    _, err = once.communicate(timeout=120)
    assert once.returncode == 130, err
    assert "Resume with: textrl-train --config 'my runs/slow.yaml' --resume" in err, err


def test_ctrl_c_during_start_up_is_one_line(cli, cli_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # start-up holds while the reward module imports, until the Ctrl-C: however loaded the machine, the signal
    # arrives during start-up (a signal sent at a time could arrive once training had begun)
    write(tmp_path / "held_rewards.py", 'import pathlib, time\npathlib.Path("importing").touch()\ntime.sleep(300)\n')
    run_yaml(tmp_path, GRPO.replace("quickstart_rewards:lowercase_share", "held_rewards:lowercase_share"))
    proc = start(cli_env, tmp_path, "--config", "run.yaml")
    end = time.monotonic() + 120
    while not (tmp_path / "importing").exists() and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert (tmp_path / "importing").exists(), proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "textrl-train: interrupted (Ctrl-C); stopping" in err and "Traceback" not in err, err
    assert not (tmp_path / "out/grpo").exists() or not list((tmp_path / "out/grpo").iterdir())


def test_help_says_what_the_command_does_first(cli) -> None:  # type: ignore[no-untyped-def]
    """Before: `textrl-train --help | head -50` showed only usage lines; the description came at line 171."""
    lines = cli("textrl-train", "--help", env={"COLUMNS": "120"}).stdout.splitlines()
    assert lines[0].startswith("usage: textrl-train --config FILE") and len(lines[0]) < 140
    assert lines[2].startswith("Train a text generator with TRL from a TextRL YAML config")
    assert lines[6] == "common:" and any(line.startswith("  --dry-run") for line in lines[7:12])
    done = subprocess.run(
        f"{BIN / 'textrl-train'} --print-schema | head -1", shell=True, capture_output=True, text=True
    )
    assert done.stdout == "{\n" and "Traceback" not in done.stderr  # a closed pipe is not an error


DRY_RUN_CASES = {
    "preference pairs for GRPO": (
        "dataset: {list: [{prompt: a, chosen: b, rejected: c}, {prompt: d, chosen: e, rejected: f}]}",
        "per_device_train_batch_size: 8",
        "per_device_train_batch_size: 4",
        r"dataset: .*chosen.*rejected.*no reward .*Fix:",
    ),
    "chat rows, a model without a chat template": (
        "dataset: {list: [{prompt: [{role: user, content: hi}]}, {prompt: [{role: user, content: yo}]}]}",
        'model: {name: "textrl:tiny"}',
        "model: {name: notemplate}",
        r"the training set: its rows are chat messages \(prompt is a list of \{role, content\}\), which TRL renders "
        r"with the tokenizer's chat template, and .*notemplate has none",
    ),
}


@pytest.mark.parametrize("case", DRY_RUN_CASES)
def test_the_dry_run_refuses_what_the_run_refuses(cli, textrl_home: Path, tmp_path: Path, case: str) -> None:  # type: ignore[no-untyped-def]
    dataset, old, new, match = DRY_RUN_CASES[case]
    shutil.copytree(textrl_home / "tiny", tmp_path / "notemplate")
    (tmp_path / "notemplate" / "chat_template.jinja").unlink()
    text = GRPO.replace("dataset: {path: quickstart_prompts.jsonl}", dataset).replace(old, new)
    run_yaml(tmp_path, text.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 4"))
    for extra in (["--dry-run"], []):
        done = cli("textrl-train", "--config", "run.yaml", *extra)
        assert done.returncode == 2 and re.search(match, done.stderr), done.stderr
        assert "Traceback" not in done.stderr
    twin = GRPO.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 4")
    run_yaml(tmp_path, twin)
    assert cli("textrl-train", "--config", "run.yaml", "--dry-run").returncode == 0


def test_a_reward_file_path_and_a_config_folder(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "rewards").mkdir()
    shutil.copy(tmp_path / "quickstart_rewards.py", tmp_path / "rewards" / "mine.py")
    run_yaml(
        tmp_path, GRPO.replace("reward: quickstart_rewards:lowercase_share", "reward: rewards/mine.py:lowercase_share")
    )
    done = cli("textrl-train", "--config", "run.yaml", "--dry-run")
    assert done.returncode == 0 and "lowercase_share -> [" in done.stdout, done.stderr
    folder = cli("textrl-train", "--config", "rewards", "--dry-run")
    assert folder.returncode == 2 and "--config: rewards is a folder; --config takes a YAML file" in folder.stderr
