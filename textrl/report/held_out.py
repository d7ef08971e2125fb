"""The held-out evaluation: what a run scored on its eval set, at the first evaluation and the last, which heads
report.md and report.svg.

Online runs (GRPO, RLOO, REINFORCE++) sample completions for the eval prompts and score them with the run's rewards:
`eval_reward` and each `eval_rewards/<name>/mean`, with their std. Their `eval_loss` is the policy-gradient
surrogate computed on those completions: with beta=0 it is near 0 by construction (advantages are centred within
each group), and what is left depends on completion lengths and, with beta > 0, the KL term, not on how good the
completions are. So it is never shown as a score (the report plots it apart, titled as a surrogate).

Pairwise, binary and reward-model runs score the eval pairs: `eval_loss`, `eval_rewards/accuracies`,
`eval_rewards/margins`, `eval_accuracy` and `eval_margin`, where logged.

With `eval_on_start: true` the first evaluation is at step 0, before any training, so first -> last is before ->
after; without it the first score already follows some training, and the report says so.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SURROGATE = "policy-gradient surrogate, not a quality measure"
"""What report.md calls an online run's eval loss."""
SURROGATE_TITLE = "(surrogate, not a quality measure)"
"""How the figure titles an online run's loss panels (short enough for a panel's title line)."""

HOW_TO_EVALUATE = (
    "set `eval_dataset:` (or `dataset.test_split_size`) and `eval_strategy: steps` with `eval_steps`; "
    "`eval_on_start: true` adds a score before training"
)

_COMPONENT = re.compile(r"^eval_rewards/([^/]+)/mean$")
_OFFLINE = (
    ("eval_loss", "loss", "Held-out loss"),
    ("eval_rewards/accuracies", "preference accuracy", "Held-out preference accuracy (chosen > rejected)"),
    ("eval_rewards/margins", "reward margin", "Held-out reward margin (chosen − rejected)"),
    ("eval_accuracy", "reward model accuracy", "Held-out reward model accuracy (chosen > rejected)"),
    ("eval_margin", "reward model margin", "Held-out reward model margin (chosen − rejected)"),
    ("eval_mean_token_accuracy", "token accuracy", "Held-out token accuracy (SFT)"),
)


@dataclass(frozen=True)
class Score:
    """One held-out score: the logged key, its name in report.md, its panel title, and its ± band's key."""

    metric: str
    name: str
    title: str
    band: str | None = None


def is_online(history: Sequence[dict[str, Any]], algo: str | None) -> bool:
    """Whether the run samples and scores its own completions (GRPO, RLOO, REINFORCE++): from the algorithm when the
    manifest names it, else from the log (only online runs log a `reward`)."""
    if algo:
        from ..spec import Family
        from .learning_signs import family_of  # the spec (pydantic): not for `textrl-report --help`

        family = family_of(algo)
        if family is not None:
            return family is Family.ONLINE
    return any("reward" in entry or "eval_reward" in entry for entry in history)


def scores(history: Sequence[dict[str, Any]], online: bool) -> list[Score]:
    """The held-out scores the run logged, headline first: the reward then each component (online), or the loss,
    accuracy and margin (pairwise, binary, reward model)."""
    logged = {key for entry in history for key in entry}
    if online:
        found = [Score("eval_reward", "reward (mean)", "Held-out reward (mean ± std)", "eval_reward_std")]
        for metric in sorted(m for m in logged if _COMPONENT.match(m)):
            name = metric.split("/")[1]
            band = f"eval_rewards/{name}/std"
            found.append(Score(metric, f"reward component: {name}", f"Held-out reward component: {name}",
                               band if band in logged else None))  # fmt: skip
    else:
        found = [Score(metric, name, title) for metric, name, title in _OFFLINE]
    return [s for s in found if s.metric in logged]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _values(history: Sequence[dict[str, Any]], metric: str) -> list[tuple[int, float]]:
    """(step, value) of each finite value logged for `metric` at a known step, in logging order."""
    return [(int(e["step"]), float(e[metric])) for e in history if _number(e.get(metric)) and _number(e.get("step"))]


def _fmt(value: float) -> str:
    return f"{value:.4g}"


@dataclass(frozen=True)
class Evaluated:
    """One run, as the held-out section reads it."""

    label: str
    algo: str | None
    history: Sequence[dict[str, Any]]


def _one_run(run: Evaluated, several: bool) -> tuple[list[str], list[str]]:
    """A run's table rows and its notes (no evaluation, a single one, none before training, the surrogate)."""

    def say(text: str) -> str:
        return f"{run.label}: {text}" if several else text[:1].upper() + text[1:]

    online = is_online(run.history, run.algo)
    found = [(s, v) for s in scores(run.history, online) if (v := _values(run.history, s.metric))]
    notes = []
    if not found:
        notes.append(say(f"no held-out evaluation in this run's log. To get one, {HOW_TO_EVALUATE}."))
    else:
        steps = sorted({step for _, values in found for step, _ in values})
        if len(steps) == 1:
            fix = "`eval_strategy: steps` with `eval_steps`" if steps[0] == 0 else "`eval_on_start: true`"
            notes.append(say(f"one evaluation (step {steps[0]}), so nothing to compare it with: set {fix} for a "
                             "score before training and after it."))  # fmt: skip
        elif steps[0] != 0:
            notes.append(say(f"the first evaluation is at step {steps[0]}, after training began: set "
                             "`eval_on_start: true` to score the model before it."))  # fmt: skip
    surrogate = _values(run.history, "eval_loss") if online else []
    if surrogate:
        notes.append(say(
            f"`eval_loss` ({_fmt(surrogate[0][1])} -> {_fmt(surrogate[-1][1])}) is not a score: for "
            f"{run.algo or 'an online run'} it is the {SURROGATE}; judge the run by its held-out reward."
        ))  # fmt: skip
    rows = []
    for score, values in found:
        (first_step, first), (last_step, last) = values[0], values[-1]
        after = [f"{_fmt(last)} (step {last_step})", f"{last - first:+.4g}"] if len(values) > 1 else ["—", "—"]
        cells = [score.name, f"`{score.metric}`", *([run.label] if several else [])]
        rows.append("| " + " | ".join([*cells, f"{_fmt(first)} (step {first_step})", *after]) + " |")
    return rows, notes


def markdown(runs: Sequence[Evaluated]) -> list[str]:
    """The `## Held-out evaluation` section of report.md: a before -> after table of each run's scores (first and
    last evaluation, and the change), or one line saying the run has none and how to get one."""
    several = len(runs) > 1
    rows, notes = [], []
    for run in runs:
        run_rows, run_notes = _one_run(run, several)
        rows += run_rows
        notes += run_notes
    lines = ["## Held-out evaluation", ""]
    if rows:
        lines += ["Scored on the eval set: before is the first evaluation, after the last.", ""]
        lines.append(("| score | metric | run |" if several else "| score | metric |") + " before | after | change |")
        lines += ["|---" * (6 if several else 5) + "|", *rows, ""]
    return lines + ([*notes, ""] if notes else [])
