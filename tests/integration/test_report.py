"""Training curves: a finished run leaves log_history.json, report.svg and report.md, led by the held-out evaluation
(or a line saying there is none); runs overlay on one figure; a folder without log history is named, with the fix; a
report that cannot be drawn never fails the run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, load_model, spec
from textrl.data import from_list
from textrl.report import write_report

from .conftest import fast, letters, rows_for

pytestmark = pytest.mark.slow


def _grpo(tiny: Path, out: Path) -> OnlineTrainer:
    """4 steps, scored on 4 held-out prompts before training and every 2 steps."""
    model, tok, _ = load_model(str(tiny), load_ref=False)
    rows = rows_for(spec.BY_NAME["grpo"].data_format)
    config = fast("grpo", out, max_steps=4, save_strategy="steps", save_steps=2, eval_strategy="steps", eval_steps=2,
                  eval_on_start=True, per_device_eval_batch_size=4)  # fmt: skip
    return OnlineTrainer(model=model, tokenizer=tok, config=config, train_dataset=from_list(rows),
                         eval_dataset=from_list(rows[:4]), reward=letters)  # fmt: skip


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
    titles = {next(panel.iter(f"{ns}text")).text for panel in panels}
    assert titles == {line.split("|")[1].strip() for line in _metrics_table(path.with_suffix(".md").read_text())}
    assert len(panels) == len(titles) > 0, (len(panels), titles)
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


def _metrics_table(md: str) -> list[str]:
    """The rows of report.md's `## Metrics` table: one per panel of the figure and run."""
    section = md.split("## Metrics\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "`" in line]


def _panels(md: str) -> set[str]:
    """The metrics in report.md's `## Metrics` table (second column, in backticks)."""
    return {line.split("|")[2].strip().strip("`") for line in _metrics_table(md)}


def _held_out(md: str) -> list[str]:
    """The non-blank lines of report.md's `## Held-out evaluation` section."""
    section = md.split("## Held-out evaluation\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.strip()]


def test_grpo_run_ends_with_a_report(grpo_run: Path) -> None:
    _check_svg(grpo_run / "report.svg")
    md = (grpo_run / "report.md").read_text()
    assert md.startswith("# Training report: grpo\n") and "| grpo | grpo | 4 | 4 |" in md
    assert "![report](report.svg)" in md and "`log_history.json`" in md
    shown = _panels(md)
    assert {"loss", "reward", "rewards/letters/mean", "completions/mean_length", "learning_rate"} <= shown, shown
    assert {"eval_reward", "eval_rewards/letters/mean"} <= shown, shown
    assert not shown & {"rewards/accuracies", "rewards/margins", "kl"}, shown  # GRPO's beta=0: no KL


def test_grpo_report_leads_with_the_held_out_reward_and_names_its_losses_surrogates(grpo_run: Path) -> None:
    """What TRL really logs for an online eval (eval_on_start at step 0, then every eval_steps): the reward and its
    component before -> after head report.md and the figure; the eval and training losses are titled surrogates."""
    md = (grpo_run / "report.md").read_text()
    assert md.index("## Held-out evaluation") < md.index("## Runs") < md.index("## Metrics")
    history = json.loads((grpo_run / "log_history.json").read_text())
    evals = [h for h in history if "eval_reward" in h]
    assert [h["step"] for h in evals] == [0, 2, 4]
    first, last = evals[0], evals[-1]
    held = _held_out(md)
    assert held[3] == (
        f"| reward (mean) | `eval_reward` | {first['eval_reward']:.4g} (step 0) | {last['eval_reward']:.4g} (step 4) "
        f"| {last['eval_reward'] - first['eval_reward']:+.4g} |"
    )
    assert held[4].startswith("| reward component: letters | `eval_rewards/letters/mean` | ")
    assert held[-1].startswith("`eval_loss` (") and "for grpo it is the policy-gradient surrogate" in held[-1]
    rows = _metrics_table(md)
    assert rows[0].startswith("| Held-out reward (mean ± std) | `eval_reward` |"), rows
    assert any(r.startswith("| Training loss (surrogate, not a quality measure) | `loss` |") for r in rows), rows
    assert any(r.startswith("| Eval loss (surrogate, not a quality measure) | `eval_loss` |") for r in rows), rows


def test_dpo_run_ends_with_a_report(dpo_run: Path) -> None:
    _check_svg(dpo_run / "report.svg")
    md = (dpo_run / "report.md").read_text()
    shown = _panels(md)
    assert {"loss", "rewards/accuracies", "rewards/margins", "learning_rate"} <= shown, shown
    assert not shown & {"reward", "completions/mean_length", "kl"}, shown
    assert not any(m.startswith("rewards/") and m.endswith("/mean") for m in shown), shown
    assert _held_out(md) == [  # no eval set in this run: one line says so, and how to get one
        "No held-out evaluation in this run's log. To get one, set `eval_dataset:` (or `dataset.test_split_size`) "
        "and `eval_strategy: steps` with `eval_steps`; `eval_on_start: true` adds a score before training."
    ]


def test_runs_overlay_on_one_figure(grpo_run: Path, dpo_run: Path, tmp_path: Path) -> None:
    svg = write_report(grpo_run, compare=[dpo_run], output=tmp_path / "cmp" / "both")
    assert svg == tmp_path / "cmp" / "both.svg"
    _check_svg(svg)
    md = (tmp_path / "cmp" / "both.md").read_text()
    assert md.startswith("# Training report: grpo vs dpo\n") and "![report](both.svg)" in md
    assert "| grpo | grpo | 4 |" in md and "| dpo | dpo | 4 |" in md
    assert "| Training loss (surrogate, not a quality measure) | `loss` | grpo |" in md
    assert "| Training loss | `loss` | dpo |" in md and "| Training loss | `loss` | grpo |" not in md
    held = _held_out(md)
    assert any(line.startswith("| reward (mean) | `eval_reward` | grpo | ") for line in held), held
    assert "dpo: no held-out evaluation in this run's log. To get one, set `eval_dataset:`" in "\n".join(held)
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
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import textrl.report

    draw = textrl.report.write_report

    def blocked(output_dir: Path, **options: Any) -> Path:
        # a folder where report.svg goes: no file can be written there. Made at the end, since a run refuses to
        # start in a non-empty output_dir
        (Path(output_dir) / "report.svg").mkdir()
        return draw(output_dir, **options)

    monkeypatch.setattr(textrl.report, "write_report", blocked)
    out = tmp_path / "run"
    trainer = _dpo(tiny, out)
    trainer.train()
    assert trainer.trl_trainer.state.global_step == 4
    assert (out / "log_history.json").is_file()
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("textrl: could not")]
    assert len(warnings) == 1 and "could not write the report: IsADirectoryError" in warnings[0], warnings
