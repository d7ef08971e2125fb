"""textrl-report on real runs: textrl-train ends with a report, textrl-report redraws one run or overlays several,
and a folder without log history exits 2 naming what was looked for."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from .conftest import GRPO, write


@pytest.mark.slow
def test_report_of_one_run_and_of_two(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO)
    done = cli("textrl-train", "--config", "grpo.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\nreport: out/grpo/report.svg\n" in done.stdout, done.stdout
    run = tmp_path / "out/grpo"
    assert (run / "log_history.json").is_file() and (run / "report.md").is_file()

    (run / "report.svg").unlink()
    (run / "report.md").unlink()
    done = cli("textrl-report", "out/grpo")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "textrl-report: wrote out/grpo/report.svg and out/grpo/report.md\n"
    assert (run / "report.svg").stat().st_size > 5_000
    assert "| Reward (mean ± std) | `reward` |" in (run / "report.md").read_text()

    shutil.copytree(run, tmp_path / "out/grpo-again", ignore=shutil.ignore_patterns("*.safetensors", "checkpoint-*"))
    done = cli("textrl-report", "out/grpo", "out/grpo-again", "--output", "compare/grpo")
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "compare/grpo.md").read_text()
    assert md.startswith("# Training report: grpo vs grpo-again\n") and "![report](grpo.svg)" in md
    assert "| `reward` | grpo |" in md and "| `reward` | grpo-again |" in md
    assert (tmp_path / "compare/grpo.svg").stat().st_size > 5_000


def test_folder_without_history_exits_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    done = cli("textrl-report", "empty")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("textrl-report: empty holds no log history: looked for log_history.json"), done.stderr
    assert "Fix: let the run finish" in done.stderr
    done = cli(sys.executable, "-m", "textrl.cli", "report", "nowhere")
    assert done.returncode == 2
    assert done.stderr.startswith("textrl-report: nowhere is not a folder. Fix:"), done.stderr
