"""The values a logged metric can take, so that a ± std band is never drawn where the metric cannot go.

A band is the mean ± one standard deviation, and for a bounded metric that sum leaves the range: a share of 0.9
with a spread of 0.3 would draw up to 1.2. The report cuts each band at the metric's range, decided from its name
(any `eval_` prefix removed), the first rule that matches winning:

1. A reward component (`rewards/<name>/mean`) of a library reward whose range its definition fixes: TRL's
   `accuracy_reward`, `reasoning_accuracy_reward` and `think_format_reward` score in [0, 1], its
   `soft_overlong_punishment` in [-1, 0], and TextRL's `length_penalty` at most 0. Any other component, and the
   total `reward`, is left whole: a user's reward function does not record its range in the log, and a component's
   name (`length_bonus`) says nothing reliable about its values.
2. A share, in [0, 1]: a name with the word accuracy, accuracies, ratio, rate, frac or fraction (`rewards/accuracies`,
   `completions/clipped_ratio`, `clip_ratio/low_mean`, `frac_reward_zero_std`, `mean_token_accuracy`).
3. A log-probability (`logps/...`): at most 0.
4. Never negative, [0, inf): a learning rate, and names with the word length, kl, entropy, std, norm, tokens or
   runtime (completion lengths, KL, entropy, spreads, gradient norms, token counts).
5. Anything else (a loss, a margin, a logit, a user's reward): unbounded.

A range from a name applies only when every logged value of the metric lies inside it: a metric whose values leave
it is not what its name suggests, and its band is drawn whole rather than cut at a wrong limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

Range = tuple[float, float]
UNBOUNDED: Range = (-math.inf, math.inf)

KNOWN_REWARDS: dict[str, Range] = {
    "accuracy_reward": (0.0, 1.0),
    "reasoning_accuracy_reward": (0.0, 1.0),
    "think_format_reward": (0.0, 1.0),
    "soft_overlong_punishment": (-1.0, 0.0),
    "length_penalty": (-math.inf, 0.0),
}
"""Library rewards whose range their definition fixes, by the name they log under."""

_COMPONENT = re.compile(r"^rewards/([^/]+)/(mean|std)$")
_SHARE = {"accuracy", "accuracies", "ratio", "rate", "frac", "fraction"}
_NON_NEGATIVE = {"length", "kl", "entropy", "std", "norm", "tokens", "runtime"}


def name_range(metric: str) -> Range:
    """The range a metric's name promises (rules 1-5 of the module docstring), before the logged values are seen."""
    name = metric.removeprefix("eval_")
    if name == "learning_rate":  # the one "rate" that is not a share
        return (0.0, math.inf)
    component = _COMPONENT.match(name)
    if component:  # a reward function named by its author: only its spread, and the library's, are known
        if component.group(2) == "std":
            return (0.0, math.inf)
        return KNOWN_REWARDS.get(component.group(1), UNBOUNDED)
    words = set(re.split(r"[^a-z0-9]+", name.lower()))
    if words & _SHARE:
        return (0.0, 1.0)
    if "logps" in words:
        return (-math.inf, 0.0)
    if words & _NON_NEGATIVE:
        return (0.0, math.inf)
    return UNBOUNDED


def value_range(metric: str, values: Iterable[float]) -> Range:
    """The range a band of `metric` is cut at: its name's range, where every logged value lies inside it."""
    low, high = name_range(metric)
    if all(low <= v <= high for v in values):
        return low, high
    return UNBOUNDED
