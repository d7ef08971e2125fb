"""`textrl-train --dry-run` on the datasets a careless user gives (issue 31): the dry run reads a config's dataset
section through the same functions as the run, so it stops with the same message, and the fix it names passes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .conftest import GRPO, write

pytestmark = pytest.mark.slow

OFFLINE = {"HF_HUB_OFFLINE": "1"}  # this machine has no hub; say so, or datasets retries for half a minute


def _data(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "empty").mkdir()
    for name in ("a", "b"):
        write(
            tmp_path / f"data/{name}.jsonl",
            "".join(json.dumps({"prompt": f"Say {name} {i}."}) + "\n" for i in range(4)),
        )
    write(tmp_path / "short.csv", "prompt,answer\nSay hi.,hi\nSay yo.\n")
    chat = [{"role": "system", "content": "Be brief."}, {"role": "usr", "content": "Say hi."}]
    write(tmp_path / "chat.jsonl", json.dumps({"messages": chat}) + "\n")


def _dry_run(cli, tmp_path: Path, dataset: str):  # type: ignore[no-untyped-def]
    _data(tmp_path)
    write(tmp_path / "grpo.yaml", GRPO.replace("dataset: {path: quickstart_prompts.jsonl}", dataset))
    return cli("textrl-train", "--config", "grpo.yaml", "--dry-run", env=OFFLINE)


@pytest.mark.parametrize(
    ("dataset", "match"),
    [
        ("dataset: {hub: someone/not-cached}",
         r"dataset\.hub: 'someone/not-cached': offline mode is on .*not in the local datasets cache .*Fix: point "
         r"path: at a local copy"),
        ("dataset: {path: trl-lib/tldr}", r"dataset\.path: 'trl-lib/tldr' is no file or folder under .*; it looks like "
         r"a hub dataset id\. Fix: write hub: trl-lib/tldr"),
        ("dataset: {path: 'data/*.jsonl'}", r"dataset\.path: 'data/\*\.jsonl' is a glob pattern \(it matches 2 files "
         r"in /.*data\); path names one file or folder\. Fix: .*path: data, data_files: \[\"\*\.jsonl\"\]"),
        ("dataset: {path: empty}", r"dataset\.path: the folder .*empty holds no data files \(it is empty\)"),
        ("dataset: {path: data, data_files: '*.csv'}", r"dataset\.data_files: '\*\.csv' matches no file; data_files is "
         r"read from the path folder"),
        ("dataset: {path: data/a.jsonl, data_files: b.jsonl}", r"dataset\.data_files: 'b\.jsonl' was given with path: "
         r"data/a\.jsonl, which is a file"),
        ("dataset: {path: short.csv}", r"short\.csv:3: 1 field, fewer than the header's 2 \(prompt, answer\)"),
        ("dataset: {path: chat.jsonl}", r"column 'messages', row 0, message 1: unknown role 'usr'\. Did you mean "
         r"'user'\?"),
        ("dataset: {mixture: [{path: data/a.jsonl}, {path: trl-lib/tldr}]}",
         r"dataset\.mixture\[1\]\.path: 'trl-lib/tldr' is no file or folder"),
        ("dataset: {path: data/a.jsonl}\neval_dataset: {path: 'data/*.jsonl'}\neval_strategy: steps\neval_steps: 2",
         r"eval_dataset\.path: 'data/\*\.jsonl' is a glob pattern"),
    ],
    ids=["hub offline", "hub id as path", "glob as path", "empty folder", "data_files match nothing",
         "data_files beside a file", "short csv row", "unknown role", "mixture part", "eval_dataset"],
)  # fmt: skip
def test_dry_run_names_the_dataset_mistake(cli, tmp_path: Path, dataset: str, match: str) -> None:  # type: ignore[no-untyped-def]
    done = _dry_run(cli, tmp_path, dataset)
    assert done.returncode == 2, done.stdout + done.stderr
    assert re.search(match, done.stderr), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "dataset",
    [
        "dataset: {path: data, data_files: ['*.jsonl']}",  # the fix the glob message names
        "dataset: {path: ., data_files: ['data/*.jsonl']}",  # `.` is the config's folder: datasets alone fails on it
        "dataset: {path: data}",
    ],
)
def test_dry_run_reads_folders_and_their_data_files(cli, tmp_path: Path, dataset: str) -> None:  # type: ignore[no-untyped-def]
    done = _dry_run(cli, tmp_path, dataset)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dataset: 8 rows, columns prompt; prompt-only format: ok" in done.stdout
