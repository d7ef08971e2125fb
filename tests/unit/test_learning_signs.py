"""What the end-of-run summary and report.md show as signs of learning, per family, from synthetic log histories."""

from __future__ import annotations

import json
from pathlib import Path

from textrl.report import load_run, write_report
from textrl.report.learning_signs import loss_note, signs, summary_lines

GRPO = [
    {"step": s, "loss": 0.0, "reward": 0.1 * s, "reward_std": 0.3, "rewards/correct/mean": 0.05 * s,
     "frac_reward_zero_std": 0.5 - 0.05 * s, "completions/mean_length": 12.0}
    for s in range(1, 11)
]  # fmt: skip
DPO = [
    {"step": s, "loss": 0.69 - 0.01 * s, "rewards/accuracies": 0.5 + 0.04 * s, "rewards/margins": 0.1 * s}
    for s in range(1, 9)
]


def test_online_runs_show_reward_its_spread_and_components_and_explain_a_zero_loss() -> None:
    lines = summary_lines(GRPO, "grpo", 0.0)
    assert lines[0] == (
        "mean reward: first 5 logged steps 0.3000 -> last 5 logged steps 0.8000  (the weighted sum of the components: "
        "should rise)"
    )
    assert lines[1].startswith("rewards/correct/mean: first 5 logged steps 0.1500 -> last 5 logged steps 0.4000")
    assert any(line.startswith("reward_std: ") and "the learning signal" in line for line in lines)
    assert lines[-1].startswith("loss: first 0.0000 -> last 0.0000  (the loss of grpo is a policy-gradient surrogate")
    assert "judge the run by its reward" in lines[-1]
    assert "kl" not in {metric for metric, *_ in signs(GRPO, "grpo")}  # not logged with beta=0: not shown


def test_with_beta_the_online_loss_note_says_it_tracks_kl() -> None:
    history = [{**h, "loss": 0.01 * h["step"], "kl": 0.1 * h["step"]} for h in GRPO]
    assert "beta x KL" in (loss_note(history, "rloo", 0.04) or "")
    assert any(line.startswith("kl: first 5 logged steps") for line in summary_lines(history, "rloo", 0.04))


def test_pairwise_runs_show_accuracies_and_margins_and_a_plain_loss() -> None:
    lines = summary_lines(DPO, "ipo", 0.1)
    assert lines[0].startswith("rewards/accuracies: first 4 logged steps 0.6000 -> last 4 logged steps 0.7600")
    assert lines[1].startswith("rewards/margins: first 4 logged steps")
    assert lines[2] == "loss: first 0.6800 -> last 0.6100"


def test_unknown_algorithms_and_one_step_runs_show_only_the_loss() -> None:
    assert summary_lines(DPO, None, None) == ["loss: first 0.6800 -> last 0.6100"]
    assert summary_lines(GRPO[:1], "grpo", 0.0)[:-1] == []  # one logged step: nothing to compare


def test_report_md_says_what_shows_learning(tmp_path: Path) -> None:
    (tmp_path / "log_history.json").write_text(json.dumps(GRPO))
    (tmp_path / "textrl_manifest.json").write_text(json.dumps({"textrl_config": {"algo": "grpo", "beta": 0.0}}))
    assert load_run(tmp_path).beta == 0.0
    write_report(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "## What shows learning" in md
    assert "- mean reward: first 5 logged steps 0.3000 -> last 5 logged steps 0.8000" in md
    assert "with beta=0 its value is centred on 0 by construction" in md
