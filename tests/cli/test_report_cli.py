"""textrl-report on real runs: textrl-train ends with a report led by the held-out evaluation, textrl-report redraws
one run or overlays several, and a folder without log history exits 2 naming what was looked for."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import GRPO, write

# 4 of the prompts held out, scored before training (step 0) and every 2 steps
EVALUATED = GRPO.replace("{path: quickstart_prompts.jsonl}", "{path: quickstart_prompts.jsonl, test_split_size: 4}") + (
    "eval_strategy: steps\neval_steps: 2\neval_on_start: true\nper_device_eval_batch_size: 4\n"
)


@pytest.mark.slow
def test_report_of_one_run_and_of_two(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert "test_split_size: 4" in EVALUATED
    write(tmp_path / "grpo.yaml", EVALUATED)
    done = cli("textrl-train", "--config", "grpo.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "\nreport: out/grpo/report.svg\n" in done.stdout, done.stdout
    assert "held-out evaluation (eval_dataset), step 0 -> step 4:" in done.stdout, done.stdout
    run = tmp_path / "out/grpo"
    assert (run / "log_history.json").is_file() and (run / "report.md").is_file()
    # report.md opens with what the end-of-run summary prints: the held-out reward, before -> after
    evals = [h for h in json.loads((run / "log_history.json").read_text()) if "eval_reward" in h]
    before, after = evals[0]["eval_reward"], evals[-1]["eval_reward"]
    assert f"  reward           {before:.4f} -> {after:.4f}\n" in done.stdout, done.stdout
    md = (run / "report.md").read_text()
    assert md.startswith("# Training report: grpo\n\n## Held-out evaluation\n")
    row = f"| reward (mean) | `eval_reward` | {before:.4g} (step 0) | {after:.4g} (step 4) | {after - before:+.4g} |"
    assert row in md, md
    assert "`eval_loss` (" in md and "for grpo it is the policy-gradient surrogate, not a quality measure" in md

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
    assert "| reward (mean) | `eval_reward` | grpo | " in md and "| reward (mean) | `eval_reward` | grpo-again | " in md
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
