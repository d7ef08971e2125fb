"""How an online trainer hands rewards to TRL: one `reward_funcs` list with weights, reward errors turned into
skipped batches (reward_errors=skip), and the components of a concurrent compose(...) run in worker threads.

Users write rewards with `textrl.rewards`; nothing here is for them to call.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, Problem, RewardError
from ..reward_checks import check_distinct_names, check_reward_object, is_model
from ..rewards import Composed, as_reward, is_async


def threadable(reward: Any) -> bool:
    """A plain synchronous reward function that may run in a worker thread.

    Not reward models, not async functions (TRL gathers those itself), and not TRL's own rewards: TRL's
    accuracy_reward, for one, turns its parsing timeout off outside the main thread.
    """
    if isinstance(reward, str) or is_model(reward) or is_async(reward):
        return False
    inner = reward
    while hasattr(inner, "__wrapped__"):
        inner = inner.__wrapped__
    return not str(getattr(inner, "__module__", "") or "").startswith("trl.")


def in_thread(reward: Any) -> Any:
    """The same synchronous reward as an async callable that runs in a worker thread.

    TRL awaits async reward functions together (asyncio.gather) and calls synchronous ones one after another, so
    handing it several rewards in this form makes their waits (a verifier, a judge API) overlap: a step costs about
    the slowest reward, not the sum. Async rewards and reward models are passed as they are.
    """
    name = getattr(reward, "__name__", type(reward).__name__)

    async def run(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        values: list[float | None] = await asyncio.to_thread(reward, prompts=prompts, completions=completions, **kwargs)
        return values

    run.__name__ = name
    run.__wrapped__ = reward  # type: ignore[attr-defined]
    return run


def skipping(reward: Any, skipped: dict[str, int]) -> Any:
    """The same reward, but a RewardError scores the batch None (TRL then gives it no weight) instead of stopping
    the run; counts skips in `skipped` and logs `rewards/<name>/skipped` (the share of batches skipped)."""
    name = getattr(reward, "__name__", type(reward).__name__)

    def note(failed: RewardError | None, kwargs: dict[str, Any]) -> None:
        log = kwargs.get("log_metric")
        if log is not None:
            log(f"rewards/{name}/skipped", 1.0 if failed else 0.0)
        if failed is not None:
            skipped[name] = skipped.get(name, 0) + 1
            print(f"textrl: skipping a batch for reward {name!r} (reward_errors=skip): {failed}", file=sys.stderr)

    if is_async(reward):

        async def run_async(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
            try:
                values = await reward(prompts=prompts, completions=completions, **kwargs)
            except RewardError as failed:
                note(failed, kwargs)
                return [None] * len(prompts)
            note(None, kwargs)
            return values

        run_async.__name__ = name
        return run_async

    def run(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        try:
            values = reward(prompts=prompts, completions=completions, **kwargs)
        except RewardError as failed:
            note(failed, kwargs)
            return [None] * len(prompts)
        note(None, kwargs)
        return values

    run.__name__ = name
    return run


@dataclass(frozen=True)
class TRLRewards:
    """A trainer's `reward` in the form TRL takes, built once when the trainer is.

    `funcs` is TRL's reward_funcs list (checked rewards, reward models and their paths); `weights` one weight per
    func, or None when no compose(...) set them; `threaded` the indices of the funcs from a concurrent
    compose(...) that may run in worker threads.
    """

    funcs: list[Any]
    weights: list[float] | None
    threaded: frozenset[int]

    def for_trl(self, skipped: dict[str, int] | None) -> list[Any]:
        """The funcs as handed to TRL: with `skipped` (reward_errors=skip) a failing batch is skipped and counted
        there; the threaded ones run in worker threads when more than one reward could wait at once."""
        funcs = self.funcs
        if skipped is not None:
            funcs = [f if isinstance(f, str) or is_model(f) else skipping(f, skipped) for f in funcs]
        if self.threaded and len(self.threaded) + sum(map(is_async, funcs)) > 1:  # let their waits overlap
            funcs = [in_thread(f) if i in self.threaded else f for i, f in enumerate(funcs)]
        return funcs


def trl_rewards(reward: Any) -> TRLRewards:
    """`reward` (a reward, compose(...), a model or its path, or a list of these) as TRL's reward_funcs, with the
    weights and threads a compose(...) gives its components (read from its public `components`, `weights` and
    `concurrent`). A reward that cannot be one raises ConfigError."""
    items = list(reward) if isinstance(reward, list | tuple) else [reward]
    funcs: list[Any] = []
    weights: list[float] = []
    threaded: set[int] = set()
    composed = False
    try:
        for i, item in enumerate(items):
            if isinstance(item, Composed):
                composed = True
                if item.concurrent:
                    threaded |= {len(funcs) + i for i, c in enumerate(item.components) if threadable(c)}
                funcs += item.components
                weights += item.weights
                continue
            where = f"reward[{i}]" if len(items) > 1 else "reward"
            try:
                check_reward_object(item, where)
            except RewardError as error:
                raise ConfigError([Problem(where, str(error).removeprefix(f"{where}: "))]) from None
            funcs.append(item if isinstance(item, str) else as_reward(item))
            weights.append(1.0)
        check_distinct_names(funcs, "reward")
    except RewardError as error:
        raise ConfigError([Problem("reward", str(error).removeprefix("reward: "))]) from None
    return TRLRewards(funcs, weights if composed else None, frozenset(threaded))
