"""report.md and report.svg lead with the held-out evaluation (before -> after, or a line saying there is none and how
to get one), title an online run's losses as surrogates, and cut ± bands at the metric's possible range. Synthetic
log histories, no torch."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from textrl.report import write_report
from textrl.report.metric_range import name_range, value_range
from textrl.report.svg_chart import Series

NS = "{http://www.w3.org/2000/svg}"
INF = math.inf

# The README's main job, in miniature: the held-out reward rises while GRPO's eval loss (a surrogate) rises too.
EVALS = {0: (0.353, 0.125, 0.016, 0.031), 5: (0.7, 0.4, 0.1, 0.04), 10: (1.086, 0.531, 0.203, 0.043)}
GRPO: list[dict[str, Any]] = []
for _step in range(0, 11):
    if _step:
        GRPO.append({"step": _step, "loss": 0.001 * (-1) ** _step, "reward": 0.3 + 0.07 * _step, "reward_std": 0.4,
                     "rewards/correct/mean": 0.1 + 0.04 * _step, "rewards/correct/std": 0.3,
                     "completions/mean_length": 9.0, "learning_rate": 6e-4})  # fmt: skip
    if _step in EVALS:
        reward, correct, only_number, surrogate = EVALS[_step]
        GRPO.append({"step": _step, "eval_loss": surrogate, "eval_reward": reward, "eval_reward_std": 0.5,
                     "eval_rewards/correct/mean": correct, "eval_rewards/correct/std": 0.45,
                     "eval_rewards/only_number/mean": only_number, "eval_rewards/only_number/std": 0.2})  # fmt: skip
DPO: list[dict[str, Any]] = [
    {"step": s, "loss": 0.69 - 0.02 * s, "rewards/accuracies": 0.5 + 0.05 * s, "rewards/margins": 0.1 * s}
    for s in range(1, 9)
] + [
    {"step": s, "eval_loss": 0.693 - 0.01 * s, "eval_rewards/accuracies": 0.5 + 0.05 * s,
     "eval_rewards/margins": 0.02 * s}
    for s in (0, 4, 8)
]  # fmt: skip


def _report(folder: Path, history: list[dict[str, Any]], algo: str | None, **compare: Path) -> tuple[str, ET.Element]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "log_history.json").write_text(json.dumps(history))
    if algo:
        (folder / "textrl_manifest.json").write_text(json.dumps({"textrl_config": {"algo": algo, "beta": 0.0}}))
    svg = write_report(folder, compare=list(compare.values()), output=folder / "report")
    return svg.with_suffix(".md").read_text(), ET.parse(svg).getroot()


def _section(md: str, heading: str) -> list[str]:
    """The non-blank lines of one `## ` section of report.md."""
    body = md.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.strip()]


def _panels(root: ET.Element) -> dict[str, ET.Element]:
    """Each panel of the figure by its title, in drawing order."""
    return {next(g.iter(f"{NS}text")).text or "": g for g in root.findall(f"{NS}g")}


def _y_ticks(panel: ET.Element) -> dict[float, float]:
    """{tick value: its pixel y} of a panel's y axis (the labels anchored at their end)."""
    return {
        float(t.text or ""): float(t.get("y", 0)) - 4 for t in panel.iter(f"{NS}text") if t.get("text-anchor") == "end"
    }


# -- the held-out section of report.md -------------------------------------------------------------------------


def test_an_online_report_opens_with_the_held_out_reward_before_and_after(tmp_path: Path) -> None:
    md, _ = _report(tmp_path / "grpo", GRPO, "grpo")
    assert md.index("## Held-out evaluation") < md.index("## Runs") < md.index("## Metrics")
    held = _section(md, "Held-out evaluation")
    assert held[1:4] == ["| score | metric | before | after | change |", "|---|---|---|---|---|",
                         "| reward (mean) | `eval_reward` | 0.353 (step 0) | 1.086 (step 10) | +0.733 |"]  # fmt: skip
    assert (
        "| reward component: correct | `eval_rewards/correct/mean` | 0.125 (step 0) | 0.531 (step 10) | +0.406 |"
        in held
    )
    assert "| reward component: only_number | `eval_rewards/only_number/mean` | 0.016 (step 0) | 0.203 (step 10) |" in (
        "\n".join(held)
    )
    # the surrogate that rose 0.031 -> 0.043 is named as such, never a row of the table
    assert not any("`eval_loss`" in line for line in held if line.startswith("|"))
    assert held[-1] == (
        "`eval_loss` (0.031 -> 0.043) is not a score: for grpo it is the policy-gradient surrogate, not a quality "
        "measure; judge the run by its held-out reward."
    )


def test_a_pairwise_report_scores_the_eval_loss_accuracy_and_margin(tmp_path: Path) -> None:
    md, _ = _report(tmp_path / "dpo", DPO, "dpo")
    held = _section(md, "Held-out evaluation")
    assert held[3:] == [
        "| loss | `eval_loss` | 0.693 (step 0) | 0.613 (step 8) | -0.08 |",
        "| preference accuracy | `eval_rewards/accuracies` | 0.5 (step 0) | 0.9 (step 8) | +0.4 |",
        "| reward margin | `eval_rewards/margins` | 0 (step 0) | 0.16 (step 8) | +0.16 |",
    ]  # for DPO the eval loss is a score: in the table, no surrogate note


def test_a_reward_model_report_scores_its_eval_accuracy_and_margin(tmp_path: Path) -> None:
    history = [{"step": 1, "loss": 0.6, "accuracy": 0.6}] + [
        {"step": s, "eval_loss": 0.7 - 0.1 * s, "eval_accuracy": 0.5 + 0.1 * s, "eval_margin": 0.2 * s} for s in (0, 2)
    ]
    held = _section(_report(tmp_path / "rm", history, "reward_model")[0], "Held-out evaluation")
    assert "| reward model accuracy | `eval_accuracy` | 0.5 (step 0) | 0.7 (step 2) | +0.2 |" in held
    assert "| reward model margin | `eval_margin` | 0 (step 0) | 0.4 (step 2) | +0.4 |" in held


def test_a_run_without_evaluation_says_so_in_one_line(tmp_path: Path) -> None:
    training_only = [h for h in GRPO if "loss" in h]
    md, root = _report(tmp_path / "plain", training_only, "grpo")
    assert _section(md, "Held-out evaluation") == [
        "No held-out evaluation in this run's log. To get one, set `eval_dataset:` (or `dataset.test_split_size`) "
        "and `eval_strategy: steps` with `eval_steps`; `eval_on_start: true` adds a score before training."
    ]
    assert not [title for title in _panels(root) if title.startswith("Held-out")]
    # the twin: a run that evaluated has its table and no such line
    assert "No held-out evaluation" not in _report(tmp_path / "evaluated", GRPO, "grpo")[0]


def test_evaluations_without_a_before_say_how_to_get_one(tmp_path: Path) -> None:
    late = [h for h in GRPO if h["step"] != 0]
    held = _section(_report(tmp_path / "late", late, "grpo")[0], "Held-out evaluation")
    assert "| reward (mean) | `eval_reward` | 0.7 (step 5) | 1.086 (step 10) | +0.386 |" in held
    assert "The first evaluation is at step 5, after training began: set `eval_on_start: true` to score the model " \
        "before it." in held  # fmt: skip
    once = [h for h in GRPO if h["step"] != 0 and (h["step"] != 5 or "loss" in h)]
    held = _section(_report(tmp_path / "once", once, "grpo")[0], "Held-out evaluation")
    assert "| reward (mean) | `eval_reward` | 1.086 (step 10) | — | — |" in held
    assert "One evaluation (step 10), so nothing to compare it with: set `eval_on_start: true` for a score " \
        "before training and after it." in held  # fmt: skip
    start = [h for h in GRPO if h["step"] in (1, 2) or ("loss" not in h and h["step"] == 0)]
    held = _section(_report(tmp_path / "start", start, "grpo")[0], "Held-out evaluation")
    assert any(line.startswith("One evaluation (step 0), so nothing to compare it with: set `eval_strategy: steps`")
               for line in held)  # fmt: skip


def test_without_a_manifest_an_online_run_is_known_by_its_rewards(tmp_path: Path) -> None:
    md, root = _report(tmp_path / "cut", GRPO, None)
    assert "| reward (mean) | `eval_reward` | 0.353 (step 0) |" in md
    assert "`eval_loss` (0.031 -> 0.043) is not a score: for an online run it is the policy-gradient surrogate" in md
    assert "Eval loss (surrogate, not a quality measure)" in _panels(root)


# -- the figure: held-out panels first, an online run's losses titled as surrogates -----------------------------


def test_online_panels_lead_with_held_out_rewards_and_title_losses_as_surrogates(tmp_path: Path) -> None:
    md, root = _report(tmp_path / "grpo", GRPO, "grpo")
    titles = list(_panels(root))
    assert titles[:3] == ["Held-out reward (mean ± std)", "Held-out reward component: correct",
                          "Held-out reward component: only_number"]  # fmt: skip
    assert {"Training loss (surrogate, not a quality measure)", "Eval loss (surrogate, not a quality measure)"} <= set(
        titles
    )
    assert not {"Training loss", "Eval loss", "Held-out loss"} & set(titles), titles
    assert "| Training loss (surrogate, not a quality measure) | `loss` |" in md


def test_pairwise_panels_lead_with_the_held_out_loss_and_keep_a_plain_training_loss(tmp_path: Path) -> None:
    titles = list(_panels(_report(tmp_path / "dpo", DPO, "dpo")[1]))
    assert titles[:4] == ["Held-out loss", "Held-out preference accuracy (chosen > rejected)",
                          "Held-out reward margin (chosen − rejected)", "Training loss"]  # fmt: skip
    assert not [t for t in titles if "surrogate" in t], titles


def test_compared_online_and_pairwise_runs_keep_their_losses_apart(tmp_path: Path) -> None:
    _report(tmp_path / "dpo", DPO, "dpo")
    md, root = _report(tmp_path / "grpo", GRPO, "grpo", other=tmp_path / "dpo")
    panels = _panels(root)
    for title, run in (("Training loss", "dpo"), ("Training loss (surrogate, not a quality measure)", "grpo"),
                       ("Held-out loss", "dpo"), ("Held-out reward (mean ± std)", "grpo")):  # fmt: skip
        assert [t.text for t in panels[title].iter(f"{NS}title")] == [run], title
    held = _section(md, "Held-out evaluation")
    assert "| loss | `eval_loss` | dpo | 0.693 (step 0) | 0.613 (step 8) | -0.08 |" in held
    assert not any("| grpo |" in line and "`eval_loss`" in line for line in held)
    assert any(line.startswith("grpo: `eval_loss` (0.031 -> 0.043) is not a score") for line in held)


# -- bands cut at the metric's range ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("rewards/accuracies", (0, 1)),
        ("eval_rewards/accuracies", (0, 1)),
        ("eval_accuracy", (0, 1)),
        ("mean_token_accuracy", (0, 1)),
        ("completions/clipped_ratio", (0, 1)),
        ("clip_ratio/low_mean", (0, 1)),
        ("frac_reward_zero_std", (0, 1)),
        ("completions/mean_length", (0, INF)),
        ("kl", (0, INF)),
        ("entropy", (0, INF)),
        ("reward_std", (0, INF)),
        ("eval_rewards/correct/std", (0, INF)),
        ("grad_norm", (0, INF)),
        ("learning_rate", (0, INF)),
        ("logps/chosen", (-INF, 0)),
        ("rewards/think_format_reward/mean", (0, 1)),
        ("eval_rewards/soft_overlong_punishment/mean", (-1, 0)),
        ("rewards/length_penalty/mean", (-INF, 0)),
        ("reward", (-INF, INF)),  # a weighted sum of the user's rewards: range unknown
        ("rewards/correct/mean", (-INF, INF)),  # a user's reward: the log does not record its range
        ("rewards/length_bonus/mean", (-INF, INF)),  # "length" in a reward's name says nothing about its values
        ("loss", (-INF, INF)),
        ("rewards/margins", (-INF, INF)),
    ],
)
def test_a_metric_name_gives_its_range(metric: str, expected: tuple[float, float]) -> None:
    assert name_range(metric) == expected


def test_a_name_range_holds_only_while_every_logged_value_lies_inside_it() -> None:
    assert value_range("rewards/accuracies", [0.0, 0.4, 1.0]) == (0, 1)
    assert value_range("rewards/accuracies", [0.4, 1.3]) == (-INF, INF)  # not a share after all: drawn whole
    assert value_range("kl", [0.0, 0.2]) == (0, INF)
    assert value_range("kl", [-0.01, 0.2]) == (-INF, INF)


def test_a_series_band_is_cut_at_its_limits() -> None:
    cut = Series("run", "#000", [(1, 0.9), (2, 0.1)], {1: 0.3, 2: 0.3}, (0.0, 1.0))
    assert cut.banded() == [(1, 0.9, pytest.approx(0.6), 1.0), (2, 0.1, 0.0, pytest.approx(0.4))]
    whole = Series("run", "#000", [(1, 0.9)], {1: 0.3})
    assert whole.banded() == [(1, 0.9, pytest.approx(0.6), pytest.approx(1.2))]


def _component_panel(tmp_path: Path, name: str, means: list[float]) -> ET.Element:
    history = [{"step": s, "loss": 0.0, "reward": m, f"rewards/{name}/mean": m, f"rewards/{name}/std": 0.4}
               for s, m in enumerate(means, 1)]  # fmt: skip
    return _panels(_report(tmp_path / name, history, "grpo")[1])[f"Reward component: {name}"]


def test_a_bounded_reward_band_stays_inside_its_range_and_a_users_reward_band_is_drawn_whole(tmp_path: Path) -> None:
    panel = _component_panel(tmp_path, "think_format_reward", [0.8, 0.9, 1.0])  # TRL's 0/1 format reward
    ticks = _y_ticks(panel)
    assert max(ticks) == 1 and min(ticks) >= 0, ticks  # mean + std would reach 1.4: the axis stops at 1
    band = [float(xy.split(",")[1]) for xy in next(panel.iter(f"{NS}polygon")).get("points", "").split()]
    assert min(band) == pytest.approx(ticks[1.0], abs=0.11)  # the band's top is the line y = 1
    # the twin: a user's reward of the same values has no known range, so its band is drawn whole
    assert max(_y_ticks(_component_panel(tmp_path, "correct", [0.8, 0.9, 1.0]))) > 1
    # and a library name whose values leave the range is not what the name says: drawn whole too
    assert min(_y_ticks(_component_panel(tmp_path / "odd", "think_format_reward", [-0.5, 0.9, 1.0]))) < -0.5
