"""The console scripts exist and `textrl-train --help` lists every generated flag (the CLI's behaviour is tested in
tests/cli)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from textrl.generated.cli_flags import FLAGS

BIN = Path(sys.executable).parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which(args[0], path=str(BIN))
    assert exe, f"console script {args[0]} is not installed next to {sys.executable}"
    return subprocess.run([exe, *args[1:]], capture_output=True, text=True, timeout=60)


def test_train_help_lists_every_flag() -> None:
    done = _run("textrl-train", "--help")
    assert done.returncode == 0, done.stderr
    for flag in FLAGS:
        shown = f"{flag.flag}, --no-{flag.flag[2:]}" if flag.is_bool else f"{flag.flag} {flag.metavar}"
        assert shown in done.stdout, shown


def test_train_version() -> None:
    done = _run("textrl-train", "--version")
    assert done.returncode == 0 and done.stdout.strip() == "textrl 1.0.0"


@pytest.mark.parametrize("command", ["textrl-merge", "textrl-eval", "textrl-dump", "textrl-report", "textrl-convert"])
def test_other_commands_have_help(command: str) -> None:
    done = _run(command, "--help")
    assert done.returncode == 0 and "usage:" in done.stdout


def test_module_form_dispatches() -> None:
    done = subprocess.run([sys.executable, "-m", "textrl.cli", "nope"], capture_output=True, text=True)
    assert done.returncode == 2 and "usage: python -m textrl.cli {train,merge,eval,dump,report,convert}" in done.stderr
