"""Reward composition: one composed call of rewards that wait (a verifier, a judge) against the sum of the parts,
and the per-call overhead of `compose` on fast rewards. No torch; prints JSON for bench/run.py.

    .venv/bin/python bench/rewards.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from textrl.rewards import compose, reward_fn

COMPLETIONS = [f"completion number {i} with Some Words" for i in range(64)]
PROMPTS = ["Say something."] * len(COMPLETIONS)


def median_call(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def waiting(seconds: float) -> Any:
    @reward_fn(name=f"wait_{seconds}")
    def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        time.sleep(seconds)
        return [1.0] * len(completions)

    return reward


@reward_fn
def lowercase(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]


@reward_fn
def length(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    return [-abs(len(c) - 30) / 30 for c in completions]


def main() -> None:
    parts = [waiting(s) for s in (0.1, 0.2, 0.3)]
    composed = compose(*parts)
    each = [median_call(lambda p=p: p(prompts=PROMPTS, completions=COMPLETIONS), 5) for p in parts]
    together = median_call(lambda: composed(prompts=PROMPTS, completions=COMPLETIONS), 5)

    fast = compose(lowercase, length)
    direct = median_call(lambda: (lowercase(PROMPTS, COMPLETIONS), length(PROMPTS, COMPLETIONS)), 300)
    via_compose = median_call(lambda: fast(prompts=PROMPTS, completions=COMPLETIONS), 300)
    json.dump({"waiting_parts_s": each, "waiting_composed_s": together, "fast_direct_s": direct,
               "fast_composed_s": via_compose}, sys.stdout)  # fmt: skip


if __name__ == "__main__":
    main()
