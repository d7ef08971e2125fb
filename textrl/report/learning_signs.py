"""What shows that a run learned, per algorithm family, read from its log history.

The loss alone misleads: GRPO, RLOO and REINFORCE++ log a policy-gradient surrogate whose value is near 0 by
construction when beta=0 (advantages are centred within each group, so the value says nothing, while its gradient
does), and a pairwise loss can fall while the model only learns answer length. The end-of-run summary and
report.md show these metrics instead, first window against last window, and say why a flat loss is expected.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from ..spec import BY_NAME, Family

# family -> (metric, what a rise means); a metric is shown only where the run logged it
SIGNS: dict[Family, tuple[tuple[str, str], ...]] = {
    Family.ONLINE: (
        ("reward", "the weighted sum of the components: should rise"),
        ("reward_std", "reward spread within groups: the learning signal; near 0 means nothing left to learn from"),
        ("frac_reward_zero_std", "share of groups whose completions all scored the same (no signal)"),
        ("kl", "KL to the reference model (beta > 0): how far the policy moved"),
        ("completions/mean_length", "completion length in tokens"),
    ),
    Family.PAIRWISE: (
        ("rewards/accuracies", "share of pairs where the implicit reward ranks chosen above rejected: should rise"),
        ("rewards/margins", "implicit reward of chosen minus rejected: should rise"),
    ),
    Family.BINARY: (
        ("rewards/margins", "implicit reward of desirable minus undesirable completions: should rise"),
        ("kl", "KL estimate to the reference model"),
    ),
    Family.REWARD_MODEL: (
        ("accuracy", "share of pairs the reward model ranks correctly: should rise"),
        ("margin", "score of chosen minus rejected: should rise"),
    ),
    Family.SUPERVISED: (
        ("mean_token_accuracy", "share of trained tokens the model ranks first: should rise"),
        ("entropy", "mean entropy of the predicted next token: falls as the model grows sure of the demonstrations"),
    ),
}
_COMPONENT = re.compile(r"^rewards/([^/]+)/mean$")
WINDOW = 5
"""At most this many logged steps are averaged at each end (fewer in short runs, so the windows never overlap)."""


def family_of(algo: str | None) -> Family | None:
    found = BY_NAME.get(algo or "")
    return found.family if found else None


def _windows(values: Sequence[float]) -> tuple[int, float, float] | None:
    if len(values) < 2:
        return None
    k = min(WINDOW, len(values) // 2)
    return k, sum(values[:k]) / k, sum(values[-k:]) / k


def _series(steps: Sequence[dict[str, Any]], metric: str) -> list[float]:
    return [float(s[metric]) for s in steps if isinstance(s.get(metric), int | float) and math.isfinite(s[metric])]


def signs(history: Sequence[dict[str, Any]], algo: str | None) -> list[tuple[str, float, float, int, str]]:
    """(metric, first-window mean, last-window mean, window size, meaning) for each sign of learning the run logged."""
    family = family_of(algo)
    steps = [h for h in history if "loss" in h]  # training logs, not evaluation or the final summary
    chosen = list(SIGNS.get(family, ())) if family else []
    if family is Family.ONLINE:
        names = sorted({m.group(1) for h in steps for key in h if (m := _COMPONENT.match(key))})
        chosen[1:1] = [(f"rewards/{n}/mean", f"reward component {n}") for n in names]
    found = []
    for metric, meaning in chosen:
        window = _windows(_series(steps, metric))
        if window:
            k, first, last = window
            found.append((metric, first, last, k, meaning))
    return found


def loss_note(history: Sequence[dict[str, Any]], algo: str | None, beta: float | None) -> str | None:
    """Why the logged loss does not measure learning for this run, when it does not."""
    if family_of(algo) is not Family.ONLINE:
        return None
    losses = _series([h for h in history if "loss" in h], "loss")
    if beta == 0 or (losses and max(abs(v) for v in losses) < 1e-3):
        return (
            f"the loss of {algo} is a policy-gradient surrogate: with beta=0 its value is centred on 0 by "
            "construction (advantages are centred within each group), whatever the model learns; judge the run by "
            "its reward."
        )
    return (
        f"the loss of {algo} is a policy-gradient surrogate plus beta x KL: its value mostly tracks the KL term, not "
        "how well the model does; judge the run by its reward."
    )


def summary_lines(history: Sequence[dict[str, Any]], algo: str | None, beta: float | None) -> list[str]:
    """The end-of-run lines: each sign of learning first -> last, then the loss with what it means here."""
    lines = [
        f"{'mean reward' if metric == 'reward' else metric}: first {k} logged steps {first:.4f} -> last {k} logged "
        f"steps {last:.4f}  ({meaning})"
        for metric, first, last, k, meaning in signs(history, algo)
    ]
    steps = [h for h in history if "loss" in h]
    if steps:
        note = loss_note(history, algo, beta)
        shown = f"loss: first {steps[0]['loss']:.4f} -> last {steps[-1]['loss']:.4f}"
        lines.append(shown + (f"  ({note})" if note else ""))
    return lines
