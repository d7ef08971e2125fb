"""What can be a reward, checked when compose() or a trainer is built rather than at training step 1: the object
(not None, not a class, callable), the parameters TRL fills by keyword, one name per reward (TRL logs each as
rewards/<name>/mean), and no preference columns that no reward reads."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, Problem, RewardError
from .contract import BaseReward


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def model_reference(text: str) -> bool:
    """A local folder or a hub id (org/name): the string forms TRL loads as a reward model."""
    return Path(text).expanduser().is_dir() or (text.count("/") == 1 and all(text.split("/")))


def is_model(obj: Any) -> bool:
    return type(obj).__module__.startswith(("transformers", "peft", "torch")) or hasattr(obj, "config")


SUPPLIED = ("prompts", "completions", "completion_ids", "trainer_state", "log_extra", "log_metric")
"""The keyword arguments TRL passes every reward function, besides the dataset's columns."""


def reward_name(reward: Any) -> str:
    """The name TRL logs a reward under (rewards/<name>/mean): a function's name, a model's checkpoint name."""
    if isinstance(reward, str):
        return reward.rstrip("/").split("/")[-1]
    if is_model(reward):
        checkpoint = getattr(getattr(reward, "config", None), "_name_or_path", "") or type(reward).__name__
        return str(checkpoint).split("/")[-1]
    while isinstance(reward, functools.partial):
        reward = reward.func
    return str(getattr(reward, "__name__", type(reward).__name__))


def check_reward_object(reward: Any, where: str) -> None:
    """Refuse what cannot be a reward before training starts: None, a class instead of its instance, a value
    that is not callable, a function whose parameters TRL cannot fill by keyword."""
    if reward is None:
        raise RewardError(
            f"{where}: got None; allowed: a reward function, a BaseReward instance, compose(...), a "
            "sequence-classification model or its folder/hub id. Fix: remove it or pass a reward.",
            reward=where,
        )
    if inspect.isclass(reward):
        raise RewardError(
            f"{where}: got the class {reward.__name__}, not a reward: TRL would call it with prompts= and "
            f"completions= and get a new {reward.__name__} object instead of scores. Fix: pass an instance, "
            f"{reward.__name__}().",
            reward=reward.__name__,
        )
    if isinstance(reward, str):
        return  # a reward model's folder or hub id: TRL loads it
    if not callable(reward):
        raise RewardError(
            f"{where}: got {type(reward).__name__} {_shown(reward)}; allowed: a reward function, a BaseReward "
            "instance, compose(...), a sequence-classification model or its folder/hub id. Fix: pass one of these.",
            reward=where,
        )
    if not is_model(reward):  # compose(...) is called (prompts, completions, **kwargs): it passes
        check_signature(reward, None)


def _signature_target(reward: Any) -> tuple[Any, int]:
    """The callable whose parameters TRL's keywords must fill, and how many leading positional ones TextRL fills
    itself (BaseReward.score gets prompts and completions positionally)."""
    while hasattr(reward, "__wrapped__") and getattr(reward, "__textrl_reward__", False):
        reward = reward.__wrapped__
    if isinstance(reward, BaseReward):
        return reward.score, 2
    return reward, 0


def check_signature(reward: Any, columns: Sequence[str] | None) -> None:
    """Refuse a reward whose parameters TRL cannot fill: positional-only ones, required ones that are neither
    TRL's keywords nor (when `columns` is known) a dataset column, and no way to receive the completions."""
    target, skip = _signature_target(reward)
    name = reward_name(reward)
    try:
        params = list(inspect.signature(target).parameters.values())[skip:]
    except (TypeError, ValueError):  # builtins without a signature: nothing to check
        return
    kinds = inspect.Parameter
    supplied = set(SUPPLIED) | {c for c in columns or () if c not in ("prompt", "completion", "completion_ids")}
    takes_all = any(p.kind is kinds.VAR_KEYWORD for p in params)
    shown_columns = ", ".join(sorted(supplied - set(SUPPLIED))) or "none"
    for p in params:
        if p.default is not kinds.empty or p.kind in (kinds.VAR_KEYWORD, kinds.VAR_POSITIONAL):
            continue
        if p.kind is kinds.POSITIONAL_ONLY:
            raise RewardError(
                f"reward {name!r}: parameter {p.name!r} is positional-only, but TRL passes everything by keyword "
                f"({', '.join(SUPPLIED)}, and the dataset's columns). Fix: drop the '/' from the signature.",
                reward=name,
            )
        if columns is not None and p.name not in supplied:
            raise RewardError(
                f"reward {name!r}: required parameter {p.name!r} is filled by nothing: TRL passes "
                f"{', '.join(SUPPLIED)} and the dataset's columns (here: {shown_columns}) by keyword. Fix: rename "
                f"it to one of these (e.g. def {name}(prompts, completions, **columns)), or give it a default.",
                reward=name,
            )
    if skip == 0 and not takes_all and not {"completions", "completion_ids"} & {p.name for p in params}:
        raise RewardError(
            f"reward {name!r} takes neither completions nor completion_ids (its parameters: "
            f"{', '.join(p.name for p in params) or 'none'}), so it cannot score what the model wrote. Fix: define "
            f"it as def {name}(prompts, completions, **columns) returning one float per completion, or, if it "
            "builds a reward, call it and pass what it returns.",
            reward=name,
        )


def check_distinct_names(rewards: Sequence[Any], where: str) -> None:
    """TRL logs each reward as rewards/<name>/mean; two with one name would be averaged into one metric."""
    seen: dict[str, int] = {}
    for i, reward in enumerate(rewards):
        name = reward_name(reward)
        if name in seen:
            raise RewardError(
                f"{where}: rewards {seen[name]} and {i} are both named {name!r}; TRL logs each reward as "
                f"rewards/<name>/mean, so they would be averaged into one metric. Fix: give each its own name, "
                "e.g. reward_fn(fn, name='brevity'), length_penalty(32, name='short') or a def of its own.",
                reward=name,
            )
        seen[name] = i


PREFERENCE_COLUMNS = ("chosen", "rejected", "label")
"""Columns of preference data (DPO's pairs, KTO's labelled completions) that online training uses only through a
reward that reads them."""


def _reads(reward: Any) -> tuple[set[str], bool]:
    """The keyword names a reward declares, and whether it may read every column: it takes **kwargs under a name
    it uses (`**_` and `**_unused` say by convention that the rest is ignored)."""
    target, skip = _signature_target(reward)
    try:
        params = list(inspect.signature(target).parameters.values())[skip:]
    except (TypeError, ValueError):  # no signature to read: it may take anything
        return set(), True
    rest = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    return {p.name for p in params}, any(not p.name.startswith("_") for p in rest)


def check_preference_columns(rewards: Sequence[Any], columns: Sequence[str], algo: str) -> None:
    """Refuse preference data for online training when no reward reads it: GRPO and RLOO generate their own
    completions and learn only from the rewards, so `chosen`/`rejected` (or `completion`/`label`) columns that no
    reward declares (by name, or **kwargs not named `_...`) would be ignored without a word. Reward models read
    none of them. Raises ConfigError on the field `dataset`."""
    present = [c for c in PREFERENCE_COLUMNS if c in columns]
    if not present:
        return
    functions = [r for r in rewards if not isinstance(r, str) and not is_model(r)]
    declared: set[str] = set()
    for reward in functions:
        names, takes_all = _reads(reward)
        if takes_all:
            return
        declared |= names
    unread = [c for c in present if c not in declared]
    if not unread:
        return
    if "label" in unread and "completion" in columns:
        unread.insert(unread.index("label"), "completion")  # TRL passes rewards no `completion` column at all
    shown = ", ".join(unread)
    listed = ", ".join(repr(reward_name(r)) for r in rewards) or "none"
    pair = "kto (completion/label)" if "label" in unread else "dpo (chosen/rejected)"
    message = (
        f"the dataset has preference columns {shown}, and no reward reads them (rewards: {listed}): algo {algo} "
        "generates its own completions and learns only from the rewards, so these columns would be ignored. Fix: "
        f"to learn from preference data use algo {pair}; or drop the columns ({shown}) from the dataset; or have a "
        f"reward read them (a parameter named {unread[-1]}, or **columns rather than **_)."
    )
    raise ConfigError([Problem("dataset", message)], algo=algo)
