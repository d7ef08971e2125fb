"""The reward contract: what a reward is called with and must return, checked with the reward's name.

`reward_fn` wraps a plain function and `BaseReward` is the base of stateful rewards; both enforce one finite float
(or None) per completion and turn a reward's own exception into a RewardError that names it. `textrl.rewards`
re-exports both; this module imports nothing else of TextRL, so the reward checks can use it.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from numbers import Real
from typing import Any, Protocol, runtime_checkable

from ..errors import RewardError

FLOAT32_MAX = 3.4028234663852886e38
"""The largest float32: TRL puts each batch's rewards in a float32 tensor."""


@runtime_checkable
class RewardFn(Protocol):
    """What TextRL and TRL call: one score per completion."""

    def __call__(self, prompts: list[Any], completions: list[Any], **columns: Any) -> list[float | None]: ...


def _check_output(name: str, output: Any, prompts: Sequence[Any]) -> list[float | None]:
    if isinstance(output, str | bytes) or not isinstance(output, Sequence):
        raise RewardError(
            f"reward {name!r} returned {type(output).__name__}; it must return a list with one float per "
            f"completion ({len(prompts)} here). Fix: return a list.",
            reward=name,
        )
    if len(output) != len(prompts):
        raise RewardError(
            f"reward {name!r} returned {len(output)} values for {len(prompts)} completions; it must return one per "
            "completion, in order. Fix: return a value (or None to skip) for every completion.",
            reward=name,
        )
    values: list[float | None] = []
    for i, value in enumerate(output):
        if value is None:
            values.append(None)
            continue
        if isinstance(value, bool) or not isinstance(value, Real):
            raise RewardError(
                f"reward {name!r} returned {value!r} ({type(value).__name__}) at position {i}; allowed: a number or "
                f"None. Prompt: {_short(prompts[i])}. Fix: return floats.",
                reward=name,
            )
        try:
            number = float(value)
        except OverflowError:  # an int (or Fraction) beyond float range, e.g. 10**400: not inf, which it never was
            raise RewardError(
                f"reward {name!r} returned {_huge(value)} at position {i}, which does not fit a float (the largest "
                f"is about 1.8e308). Prompt: {_short(prompts[i])}. Fix: scale or clip it; TRL stores rewards as "
                f"float32, so keep them within +-{FLOAT32_MAX:.3g} (None skips a completion).",
                reward=name,
            ) from None
        if not math.isfinite(number):
            raise RewardError(
                f"reward {name!r} returned {number} at position {i}; rewards must be finite. Prompt: "
                f"{_short(prompts[i])}. Fix: clip or replace it (None skips a completion).",
                reward=name,
            )
        if abs(number) > FLOAT32_MAX:  # TRL's float32 reward tensor would hold inf, and the advantages NaN
            raise RewardError(
                f"reward {name!r} returned {number:.6g} at position {i}, beyond float32 (+-{FLOAT32_MAX:.3g}), "
                f"which TRL stores rewards in: it would train on inf. Prompt: {_short(prompts[i])}. Fix: scale or "
                "clip it (None skips a completion).",
                reward=name,
            )
        values.append(number)
    return values


def _huge(value: Any) -> str:
    """A number too large for a float, shown readably: its leading digits and length, not 400 digits (or
    Python's ValueError for an int past its 4300-digit str limit)."""
    try:
        text = str(value)
    except ValueError:
        return f"an integer of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, int) and len(text.lstrip("-")) > 20:
        return f"{text[:12]}... (an integer of {len(text.lstrip('-'))} digits)"
    return _short(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def _raised(name: str, exc: Exception, prompts: Sequence[Any], state: Any = None) -> RewardError:
    first = _short(prompts[0]) if prompts else "none"
    step = getattr(state, "global_step", None)
    at = f" at training step {step + 1}" if step is not None else ""
    return RewardError(
        f"reward {name!r} raised {type(exc).__name__}: {exc}{at} (on a batch of {len(prompts)} completions whose "
        f"first prompt is {first}). Fix: handle that input in the reward, or return None for completions it cannot "
        "score.",
        reward=name,
    )


def _accepted_kwargs(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """TRL passes prompts, completions and extra keyword arguments (completion_ids, trainer_state, dataset
    columns); give a function only those it declares, unless it takes **kwargs. Each value is a fresh copy, so a
    reward that edits its inputs in place cannot change what the next reward (or TRL's logs) see."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return lambda kwargs: {k: _fresh(v) for k, v in kwargs.items()}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return lambda kwargs: {k: _fresh(v) for k, v in kwargs.items()}
    names = set(params)
    return lambda kwargs: {k: _fresh(v) for k, v in kwargs.items() if k in names}


_IMMUTABLE = (str, int, float, bool, bytes, type(None))


def _fresh(value: Any) -> Any:
    """A copy of the lists and dicts in `value` (leaves are immutable: strings, numbers), cheaper than deepcopy."""
    if isinstance(value, list):
        return [v if isinstance(v, _IMMUTABLE) else _fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: v if isinstance(v, _IMMUTABLE) else _fresh(v) for k, v in value.items()}
    return value


def reward_fn(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Decorate a reward function: its output is checked (length, numbers, finite) and errors name it.

    Async functions stay async, so TRL runs several of them concurrently. Use as `@reward_fn` or
    `@reward_fn(name="brevity")`.
    """

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        label: str = name or str(getattr(func, "__name__", type(func).__name__))
        pick = _accepted_kwargs(func)
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def run_async(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
                try:
                    output = await func(**pick({"prompts": prompts, "completions": completions, **kwargs}))
                except RewardError:
                    raise
                except Exception as exc:
                    raise _raised(label, exc, prompts, kwargs.get("trainer_state")) from exc
                return _check_output(label, output, prompts)

            wrapped: Callable[..., Any] = run_async
        else:

            @functools.wraps(func)
            def run(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
                try:
                    output = func(**pick({"prompts": prompts, "completions": completions, **kwargs}))
                except RewardError:
                    raise
                except Exception as exc:
                    raise _raised(label, exc, prompts, kwargs.get("trainer_state")) from exc
                return _check_output(label, output, prompts)

            wrapped = run
        wrapped.__name__ = label
        wrapped.__textrl_reward__ = True  # type: ignore[attr-defined]
        return wrapped

    return wrap(fn) if fn is not None else wrap


class BaseReward:
    """A stateful reward: subclass, implement `score`, and call the instance like a function.

    `name` (default: the class name) labels the reward in logs and errors.
    """

    name: str = ""

    def __init__(self) -> None:
        self.__name__ = self.name or type(self).__name__

    def score(self, prompts: list[Any], completions: list[Any], **columns: Any) -> list[float | None]:
        raise NotImplementedError(f"{type(self).__name__} must implement score(prompts, completions, **columns)")

    def __call__(self, prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        label = getattr(self, "__name__", type(self).__name__)
        try:
            fresh = _accepted_kwargs(self.score)({"prompts": prompts, "completions": completions, **kwargs})
            output = self.score(fresh.pop("prompts", prompts), fresh.pop("completions", completions), **fresh)
        except RewardError:
            raise
        except Exception as exc:
            raise _raised(label, exc, prompts, kwargs.get("trainer_state")) from exc
        return _check_output(label, output, prompts)
