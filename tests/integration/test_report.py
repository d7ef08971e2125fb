"""Training curves: a finished run leaves log_history.json, report.svg and report.md; runs overlay on one figure;
a folder without log history is named, with the fix; a report that cannot be drawn never fails the run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, load_model, spec
from textrl.data import from_list
from textrl.report import write_report

from .conftest import fast, letters, rows_for

pytestmark = pytest.mark.slow


def _grpo(tiny: Path, out: Path) -> OnlineTrainer:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    rows = rows_for(spec.BY_NAME["grpo"].data_format)
    config = fast("grpo", out, max_steps=4, save_strategy="steps", save_steps=2)
    return OnlineTrainer(model=model, tokenizer=tok, config=config, train_dataset=from_list(rows), reward=letters)


def _dpo(tiny: Path, out: Path) -> PreferenceTrainer:
    model, tok, ref = load_model(str(tiny))
    rows = rows_for(spec.BY_NAME["dpo"].data_format)
    config = fast("dpo", out, max_steps=4)
    return PreferenceTrainer(model=model, tokenizer=tok, ref_model=ref, config=config, train_dataset=from_list(rows))


@pytest.fixture(scope="module")
def grpo_run(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "grpo"
    trainer = _grpo(tiny, out)
    trainer.train()
    assert json.loads((out / "log_history.json").read_text()) == trainer.log_history
    return out


@pytest.fixture(scope="module")
def dpo_run(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "dpo"
    _dpo(tiny, out).train()
    return out


def _check_svg(path: Path) -> None:
    """A real chart: a well-formed SVG document with one panel per metric in report.md, each titled, with tick
    labels and a line of at least two points that is not flat everywhere (a blank or failed figure has none)."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(path).getroot()
    assert root.tag == f"{ns}svg" and int(root.get("width", 0)) > 500 and int(root.get("height", 0)) > 300
    panels = root.findall(f"{ns}g")
    md = path.with_suffix(".md").read_text()
    metrics = {line.split("|")[2].strip() for line in md.splitlines() if line.startswith("| ") and
               line.split("|")[2].strip().startswith("`")}  # fmt: skip
    assert len(panels) == len(metrics) > 0, (len(panels), metrics)
    varied = 0
    for panel in panels:
        texts = [t.text for t in panel.iter(f"{ns}text")]
        assert len(texts) >= 5, texts  # title, axis labels, ticks
        lines = panel.findall(f"{ns}polyline")
        assert lines
        for line in lines:
            ys = [float(xy.split(",")[1]) for xy in line.get("points", "").split()]
            assert len(ys) >= 2
            varied += max(ys) - min(ys) > 1
    assert varied > 0


def _panels(md: str) -> set[str]:
    """The metrics in report.md's table (second column, in backticks)."""
    return {line.split("|")[2].strip().strip("`") for line in md.splitlines() if line.startswith("| ") and "`" in line}


def test_grpo_run_ends_with_a_report(grpo_run: Path) -> None:
    _check_svg(grpo_run / "report.svg")
    md = (grpo_run / "report.md").read_text()
    assert md.startswith("# Training report: grpo\n") and "| grpo | grpo | 4 | 4 |" in md
    assert "![report](report.svg)" in md and "`log_history.json`" in md
    shown = _panels(md)
    assert {"loss", "reward", "rewards/letters/mean", "completions/mean_length", "learning_rate"} <= shown, shown
    assert not shown & {"rewards/accuracies", "rewards/margins", "kl", "eval_loss"}, shown  # GRPO's beta=0: no KL


def test_dpo_run_ends_with_a_report(dpo_run: Path) -> None:
    _check_svg(dpo_run / "report.svg")
    md = (dpo_run / "report.md").read_text()
    shown = _panels(md)
    assert {"loss", "rewards/accuracies", "rewards/margins", "learning_rate"} <= shown, shown
    assert not shown & {"reward", "completions/mean_length", "kl"}, shown
    assert not any(m.startswith("rewards/") and m.endswith("/mean") for m in shown), shown


def test_runs_overlay_on_one_figure(grpo_run: Path, dpo_run: Path, tmp_path: Path) -> None:
    svg = write_report(grpo_run, compare=[dpo_run], output=tmp_path / "cmp" / "both")
    assert svg == tmp_path / "cmp" / "both.svg"
    _check_svg(svg)
    md = (tmp_path / "cmp" / "both.md").read_text()
    assert md.startswith("# Training report: grpo vs dpo\n") and "![report](both.svg)" in md
    assert "| grpo | grpo | 4 |" in md and "| dpo | dpo | 4 |" in md
    assert "| Training loss | `loss` | grpo |" in md and "| Training loss | `loss` | dpo |" in md
    assert "| `rewards/accuracies` | dpo |" in md and "| `rewards/accuracies` | grpo |" not in md


def test_runs_with_one_folder_name_are_labelled_by_path(grpo_run: Path, tmp_path: Path) -> None:
    twin = tmp_path / "grpo"
    shutil.copytree(grpo_run, twin, ignore=shutil.ignore_patterns("checkpoint-*", "*.safetensors"))
    md = write_report(grpo_run, compare=[twin], output=tmp_path / "twins").with_suffix(".md").read_text()
    assert f"| {grpo_run} |" in md and f"| {twin} |" in md


def test_without_log_history_json_the_newest_checkpoint_is_read(grpo_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "cut"
    for n in (2, 4):
        (run / f"checkpoint-{n}").mkdir(parents=True)
        shutil.copy(grpo_run / f"checkpoint-{n}" / "trainer_state.json", run / f"checkpoint-{n}")
    write_report(run)
    md = (run / "report.md").read_text()
    assert "| cut | ? | 4 | 4 |" in md and "`checkpoint-4/trainer_state.json`" in md
    _check_svg(run / "report.svg")


def test_the_newer_of_log_history_and_checkpoint_is_read(grpo_run: Path, tmp_path: Path) -> None:
    """A finished run (log_history.json) resumed and stopped again: its newer checkpoint is what gets drawn."""
    import os

    from textrl.report import find_log_history

    run = tmp_path / "again"
    (run / "checkpoint-4").mkdir(parents=True)
    shutil.copy(grpo_run / "log_history.json", run)
    shutil.copy(grpo_run / "checkpoint-4" / "trainer_state.json", run / "checkpoint-4")
    os.utime(run / "log_history.json", (1_000_000, 1_000_000))
    assert find_log_history(run) == run / "checkpoint-4" / "trainer_state.json"
    os.utime(run / "checkpoint-4" / "trainer_state.json", (500_000, 500_000))
    assert find_log_history(run) == run / "log_history.json"


def test_folder_without_log_history_is_named(tmp_path: Path) -> None:
    (tmp_path / "checkpoint-3").mkdir()  # cut off mid-save: no trainer_state.json
    with pytest.raises(
        FileNotFoundError,
        match=rf"{re.escape(str(tmp_path))} holds no log history: looked for log_history\.json .* and checkpoint-N/trainer_state\.json"
        r" .*Fix: let the run finish, or save checkpoints",
    ):
        write_report(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"missing is not a folder\. Fix: pass the output_dir of a TextRL run"):
        write_report(tmp_path / "missing")


def test_history_without_metrics_is_named(tmp_path: Path) -> None:
    (tmp_path / "log_history.json").write_text(json.dumps([{"train_runtime": 1.0, "step": 0}]))
    with pytest.raises(ValueError, match=r"log_history\.json: the log history holds no metric to plot .*logging_steps"):
        write_report(tmp_path)


def test_a_report_that_cannot_be_drawn_does_not_fail_the_run(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    (out / "report.svg").mkdir(parents=True)  # no file can be written where a folder is
    trainer = _dpo(tiny, out)
    trainer.train()
    assert trainer.trl_trainer.state.global_step == 4
    assert (out / "log_history.json").is_file()
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("textrl: could not")]
    assert len(warnings) == 1 and "could not write the report: IsADirectoryError" in warnings[0], warnings
