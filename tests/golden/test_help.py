"""The whole `--help` text of every console script, against a golden file (not substrings): a flag renamed,
dropped or reworded shows up here as a diff. Update after an intended change with:
    TEXTRL_UPDATE_GOLDEN=1 python -m pytest tests/golden/test_help.py
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

HELP = Path(__file__).parent / "help"
UPDATE = os.environ.get("TEXTRL_UPDATE_GOLDEN") == "1"
COMMANDS = sorted(e.name for e in metadata.distribution("textrl").entry_points if e.group == "console_scripts")


@pytest.mark.parametrize("command", COMMANDS)
def test_help_matches_golden(command: str) -> None:
    # a fixed width, so argparse wraps the same way in every terminal and in CI
    env = {**os.environ, "COLUMNS": "120"}
    done = subprocess.run([str(Path(sys.executable).parent / command), "--help"], capture_output=True, text=True,
                          env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    golden = HELP / f"{command}.txt"
    if UPDATE:
        HELP.mkdir(exist_ok=True)
        golden.write_text(done.stdout, encoding="utf-8")
    assert golden.is_file(), (
        f"no golden file {golden}. Create it with: TEXTRL_UPDATE_GOLDEN=1 python -m pytest {__file__}"
    )
    expected = golden.read_text(encoding="utf-8")
    if done.stdout != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), done.stdout.splitlines(True), "golden", "now"))
        pytest.fail(
            f"{command} --help changed:\n{diff}\nIf intended: TEXTRL_UPDATE_GOLDEN=1 python -m pytest {__file__}"
        )


def test_every_golden_file_is_a_command() -> None:
    assert sorted(p.stem for p in HELP.glob("*.txt")) == COMMANDS
