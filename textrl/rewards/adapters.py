"""How an online trainer hands rewards to TRL: one `reward_funcs` list with weights, reward errors turned into
skipped batches (reward_errors=skip), the components of a concurrent compose(...) run in worker threads, and a
generation batch that no reward scored stopped instead of trained on.

Users write rewards with `textrl.rewards`; nothing here is for them to call.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, Problem, RewardError
from . import Composed, NoScoreWarning, checked, is_async
from .checks import check_distinct_names, check_reward_object, is_model, reward_name


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


class NoScoreError(RewardError):
    """Every reward returned None for every completion of a generation batch (never skipped by reward_errors)."""


class NoneWatch:
    """Notices the generation batches a reward function scored all None.

    TRL turns None into NaN and gives a completion that every reward left NaN an advantage of 0, with only a log
    warning: a reward that always returns None (it reads the wrong column, or expects text and gets chat
    messages) trains on nothing at all. When every reward function leaves a whole batch unscored, `record` raises
    NoScoreError; when only some do, it warns once per reward (NoScoreWarning). TRL calls each reward once per
    batch with the same `completions` list, which is how calls of one batch are told from the next; the lock is
    there because rewards of a concurrent compose(...) report from worker threads.
    """

    def __init__(self, names: list[str], *, model_scores: bool) -> None:
        self.names = names
        self.model_scores = model_scores
        """Whether a reward model is among the rewards: it scores every completion, so a batch is never unscored."""
        self.warned: set[str] = set()
        self._lock = threading.Lock()
        self._batch: object = None
        self._empty: dict[str, bool] = {}

    probing = False
    """Set while `textrl-train --probe` samples (probe_online): it reports unscored batches as findings itself."""

    def record(self, name: str, completions: list[Any], values: list[float | None], state: Any) -> None:
        if NoneWatch.probing:
            return
        with self._lock:
            if completions is not self._batch:
                self._batch, self._empty = completions, {}
            self._empty[name] = bool(values) and all(v is None for v in values)
            if len(self._empty) < len(self.names):
                return
            empty = [n for n in self.names if self._empty.get(n)]
            self._batch, self._empty = None, {}
            fresh = [n for n in empty if n not in self.warned]
            self.warned |= set(empty)
        step = getattr(state, "global_step", None)
        at = f" at training step {step + 1}" if step is not None else ""
        if empty and len(empty) == len(self.names) and not self.model_scores:
            shown = ", ".join(repr(n) for n in empty)
            raise NoScoreError(
                f"every reward ({shown}) returned None for all {len(values)} completions of a generation batch{at}: "
                "TRL would train on no reward at all (each completion's advantage is 0). Fix: return a number for "
                "each completion a reward can score and None only for those it cannot; check that the reward reads "
                "the completions as TRL passes them (chat prompts give lists of messages, "
                "completion[0]['content']) and the dataset columns it needs.",
                reward=empty[0],
            )
        for name in fresh:
            others = ", ".join(repr(n) for n in self.names if n != name) or "a reward model"
            warnings.warn(
                f"reward {name!r} returned None for all {len(values)} completions of a generation batch{at}; the "
                f"other rewards ({others}) scored it, so training goes on without {name!r} for that batch (said "
                f"once per reward). Fix: return a number for the completions {name!r} can score, or leave it out.",
                NoScoreWarning,
                stacklevel=2,
            )


def watched(reward: Any, watch: NoneWatch) -> Any:
    """The same reward, reporting each batch's scores to `watch` (which may stop the run: see NoneWatch)."""
    name = reward_name(reward)

    if is_async(reward):

        async def run_async(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
            values: list[float | None] = await reward(prompts=prompts, completions=completions, **kwargs)
            watch.record(name, completions, values, kwargs.get("trainer_state"))
            return values

        run_async.__name__ = name
        return run_async

    def run(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        values: list[float | None] = reward(prompts=prompts, completions=completions, **kwargs)
        watch.record(name, completions, values, kwargs.get("trainer_state"))
        return values

    run.__name__ = name
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
            except NoScoreError:
                raise  # not a failing reward to skip: the batch has no score at all
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
        except NoScoreError:
            raise  # not a failing reward to skip: the batch has no score at all
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
        """The funcs as handed to TRL: a batch that no reward scored stops the run (NoneWatch); with `skipped`
        (reward_errors=skip) a failing batch is skipped and counted there; the threaded ones run in worker threads
        when more than one reward could wait at once."""
        functions = [f for f in self.funcs if not (isinstance(f, str) or is_model(f))]
        watch = NoneWatch([reward_name(f) for f in functions], model_scores=len(functions) < len(self.funcs))
        # watched innermost: a reward skipped for raising is not one that returned None
        funcs = [f if isinstance(f, str) or is_model(f) else watched(f, watch) for f in self.funcs]
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
            funcs.append(item if isinstance(item, str) else checked(item))
            weights.append(1.0)
        check_distinct_names(funcs, "reward")
    except RewardError as error:
        raise ConfigError([Problem("reward", str(error).removeprefix("reward: "))]) from None
    return TRLRewards(funcs, weights if composed else None, frozenset(threaded))
