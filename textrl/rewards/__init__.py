"""Rewards for online training: plain functions, stateful classes, weighted compositions and classifier scores.

A reward takes `(prompts, completions, **columns)` and returns one float per completion (None skips that
completion for this reward, as in TRL). TextRL enforces that contract with the reward's name in the message.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from numbers import Real
from typing import Any

from ..errors import RewardError
from .checks import check_distinct_names, check_reward_object, is_model, model_reference, reward_name
from .contract import BaseReward, RewardFn, reward_fn

__all__ = [
    "BaseReward",
    "ClassifierReward",
    "Composed",
    "LengthPenalty",
    "NoScoreWarning",
    "RewardFn",
    "as_reward",
    "checked",
    "compose",
    "is_async",
    "length_penalty",
    "reward_fn",
]


def as_reward(fn: Any) -> Any:
    """A callable with TextRL's contract checks that returns the scores when called: an async reward is run to
    completion (what the dry run and textrl-eval need); composites and models pass unchanged."""
    if getattr(fn, "__textrl_async__", None) is not None:
        return fn  # as_reward's own form already
    reward = checked(fn)
    return synchronous(reward) if is_async(reward) and not is_model(reward) else reward


def checked(fn: Any) -> Any:
    """A callable with TextRL's contract checks that stays async when `fn` is, so TRL can await several rewards at
    once (what a trainer hands TRL). Already-checked rewards, composites and models pass unchanged."""
    original = getattr(fn, "__textrl_async__", None)  # as_reward(f) of an async f: give TRL f's async form back
    if original is not None:
        return original
    if getattr(fn, "__textrl_reward__", False) or isinstance(fn, BaseReward | Composed):
        return fn
    if callable(fn) and not is_model(fn):
        return reward_fn(fn)
    return fn


def synchronous(reward: Any) -> Any:
    """The async `reward` as a plain function returning its scores (keeping its name and its async form)."""

    @functools.wraps(reward)
    def run(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        values: list[float | None] = run_coroutine(reward(prompts=prompts, completions=completions, **kwargs))
        return values

    run.__textrl_reward__ = True  # type: ignore[attr-defined]
    run.__textrl_async__ = reward  # type: ignore[attr-defined]
    return run


def run_coroutine(coroutine: Any) -> Any:
    """Run `coroutine` to completion from synchronous code. asyncio.run refuses to start a loop in a thread that
    already runs one (a notebook, an async caller), so there it runs in a worker thread's own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    return _pool().submit(asyncio.run, coroutine).result()


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """Threads for composed rewards that wait (verifiers, judges); created on first use."""
    return ThreadPoolExecutor(max_workers=32, thread_name_prefix="textrl-reward")


class NoScoreWarning(UserWarning):
    """In training, a reward returned None for every completion of a generation batch while other rewards scored
    it: that reward adds nothing to the batch. Said once per reward."""


def is_async(reward: Any) -> bool:
    """Whether calling `reward` returns a coroutine (decided as TRL's is_async_callable does)."""
    while isinstance(reward, functools.partial):
        reward = reward.func
    return inspect.iscoroutinefunction(reward) or inspect.iscoroutinefunction(type(reward).__call__)


class Composed:
    """Several rewards with weights. In a trainer each component is handed to TRL separately, so each is logged
    as its own metric (rewards/<name>/mean) and TRL sums them with the weights; called directly, it returns the
    weighted sum. With `concurrent=True` (the default) the components run at the same time, plain functions in
    threads: a step waits for the slowest reward, not the sum. Use `concurrent=False` for rewards that must stay
    on the main thread (signal-based timeouts, objects that are not thread-safe).

    A trainer reads the composition from three public attributes, set once here: `components` (each reward
    checked, in order), `weights` (one float per component) and `concurrent`.
    """

    def __init__(
        self, rewards: Sequence[Any], weights: Sequence[float] | None = None, *, concurrent: bool = True
    ) -> None:
        if not rewards:
            raise RewardError("compose() needs at least one reward. Fix: pass reward functions.", reward="compose")
        if weights is not None and len(weights) != len(rewards):
            raise RewardError(
                f"compose() got {len(weights)} weights for {len(rewards)} rewards. Fix: give one weight per reward.",
                reward="compose",
            )
        for i, reward in enumerate(rewards):
            if isinstance(reward, str) and not model_reference(reward):
                raise RewardError(
                    f"compose(): reward {i}: got the text {reward!r}, which is neither a reward model's folder nor "
                    "a hub id (org/name). Fix: pass the function itself (from my_rewards import f), or a model path.",
                    reward="compose",
                )
            check_reward_object(reward, f"compose(): reward {i}")
        for i, weight in enumerate(weights or ()):
            if isinstance(weight, bool) or not isinstance(weight, Real) or not math.isfinite(weight):
                raise RewardError(
                    f"compose(): weights[{i}] is {weight!r}; allowed: a finite number (a NaN weight would silently "
                    "drop that reward). Fix: give every weight as a finite number, e.g. weights=[1.0, 0.5].",
                    reward="compose",
                )
        self.components: list[Any] = [checked(r) for r in rewards]
        """The rewards, in order, each with TextRL's contract checks (reward models and their paths as given)."""
        check_distinct_names(self.components, "compose()")
        self.weights: list[float] = [float(w) for w in weights] if weights is not None else [1.0] * len(rewards)
        """One weight per component; a trainer hands them to TRL as reward_weights."""
        self.concurrent = concurrent
        """Whether the components may run at the same time (plain functions in threads)."""
        self.__name__ = "+".join(reward_name(r) for r in self.components)

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        """The weighted sum; the components run concurrently (async ones in an event loop, others in threads)."""

        def call(reward: Any) -> Any:
            return reward(prompts=prompts, completions=completions, **kwargs)

        if not self.concurrent:
            outputs = [run_coroutine(call(r)) if is_async(r) else call(r) for r in self.components]
        elif any(map(is_async, self.components)):

            async def gather() -> list[Any]:
                async def one(reward: Any) -> Any:
                    return await (call(reward) if is_async(reward) else asyncio.to_thread(call, reward))

                return await asyncio.gather(*(one(r) for r in self.components))

            outputs = run_coroutine(gather())
        else:  # a thread per extra component; the first runs here (a loop per call would cost ~1 ms)
            pending = [_pool().submit(call, r) for r in self.components[1:]]
            outputs = [call(self.components[0]), *(f.result() for f in pending)]
        total: list[float | None] = []
        for i in range(len(prompts)):
            parts = [(w, out[i]) for w, out in zip(self.weights, outputs, strict=True) if out[i] is not None]
            total.append(sum(w * v for w, v in parts) if parts else None)
        return total


def compose(*rewards: Any, weights: Sequence[float] | None = None, concurrent: bool = True) -> Composed:
    """Combine rewards with weights (default 1.0 each); each component is logged on its own.

    The components run concurrently (plain functions in threads, also in training); `concurrent=False` runs them
    one after another on the calling thread.
    """
    return Composed(rewards, weights, concurrent=concurrent)


class LengthPenalty(BaseReward):
    """A built-in reward: 0 at `target` length, falling linearly (-1 per `target` of distance) away from it.

    `unit` is "chars" (len of the text) or "words". `length_penalty` is one with a target of 64 characters; use it
    as a reward as it is, or call it with settings for another: `length_penalty(32, unit="words", name="short")`.
    """

    def __init__(self, target: int = 64, *, unit: str = "chars", name: str = "length_penalty") -> None:
        if unit not in ("chars", "words"):
            raise ValueError(f"length_penalty unit: got {unit!r}; allowed: 'chars', 'words'. Fix: use one of these.")
        if isinstance(target, bool) or not isinstance(target, int) or target <= 0:
            raise ValueError(
                f"length_penalty target: got {target!r}; allowed: an integer > 0. Fix: use a positive length."
            )
        self.name = name
        super().__init__()
        self.target = target
        self.unit = unit

    def _measure(self, text: Any) -> int:
        content = text if isinstance(text, str) else " ".join(str(m.get("content", "")) for m in text)
        return len(content.split()) if self.unit == "words" else len(content)

    def score(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
        return [-abs(self._measure(c) - self.target) / self.target for c in completions]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Score (called as a reward, with completions) or configure another (called with a target)."""
        if "completions" in kwargs or (len(args) >= 2 and isinstance(args[1], list)):
            return super().__call__(*args, **kwargs)
        return LengthPenalty(*args, **kwargs)


length_penalty = LengthPenalty()
"""The length-penalty reward (64 characters); `length_penalty(32)` gives one with another target."""


class ClassifierReward(BaseReward):
    """Scores completions with a transformers text-classification pipeline: the probability of `target_label`.

    Batched and without gradients. With `target_label=None` the pipeline's top score is used.
    """

    def __init__(self, pipeline: Any, target_label: str | None = None, *, batch_size: int = 16) -> None:
        self.name = f"classifier_{target_label}" if target_label else "classifier"
        super().__init__()
        self.pipeline = pipeline
        self.target_label = target_label
        self.batch_size = batch_size

    def score(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
        import torch

        texts = [c if isinstance(c, str) else str(c[-1].get("content", "")) for c in completions]
        with torch.no_grad():
            outputs = self.pipeline(texts, batch_size=self.batch_size, top_k=None)
        scores: list[float | None] = []
        for result in outputs:
            labels = {r["label"]: float(r["score"]) for r in result}
            if self.target_label is None:
                scores.append(max(labels.values()))
            elif self.target_label in labels:
                scores.append(labels[self.target_label])
            else:
                raise RewardError(
                    f"reward {self.__name__!r}: target_label {self.target_label!r} is not a label of the pipeline's "
                    f"model; allowed: {', '.join(sorted(labels))}. Fix: pass one of these.",
                    reward=self.__name__,
                )
        return scores
