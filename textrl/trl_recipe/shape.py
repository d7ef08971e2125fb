"""Whether a YAML mapping is a TextRL config rather than a recipe for TRL's CLI.

Given to `--trl`, a TextRL config would be read key by key as a recipe and fail on what it lacks
(`model_name_or_path: is missing`) while its `model: {name: ...}` is right there. Its shape says what it is: `algo:`,
or TextRL's sections (`model:` with `name`, `dataset:` with `path` or `hub`, `reward: module:function`), and none of
the keys a recipe names its model, data and rewards with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import Problem
from ..spec.sections import REWARD_REF_PATTERN

RECIPE_KEYS = (
    "model_name_or_path", "dataset_name", "dataset_id_or_path", "datasets", "dataset_mixture", "dataset_mixer",
    "reward_funcs", "reward_model_name_or_path",
)  # fmt: skip
"""Keys only a recipe for TRL's CLI (or a collection built on it) has: where its model, data and rewards are."""

_REWARD_REF = re.compile(REWARD_REF_PATTERN)


def textrl_config_marks(data: Mapping[str, Any]) -> dict[str, str]:
    """The keys that make `data` a TextRL config and not a recipe for TRL's CLI, each as written (e.g. {"algo":
    "algo: grpo", "model": "model: {name: ...}"}); empty for a recipe, or for a file with any of a recipe's own keys
    (RECIPE_KEYS)."""
    if any(key in data for key in RECIPE_KEYS):
        return {}
    marks = {"algo": f"algo: {data['algo']}"} if "algo" in data else {}
    model = data.get("model")
    if isinstance(model, Mapping) and "name" in model:
        marks["model"] = "model: {name: ...}"
    for key in ("dataset", "eval_dataset"):
        section = data.get(key)
        if isinstance(section, Mapping) and (found := [k for k in ("hub", "path", "mixture") if k in section]):
            marks[key] = f"{key}: {{{found[0]}: ...}}"
    reward = data.get("reward")
    refs = reward if isinstance(reward, list) else [reward]
    if refs and all(isinstance(r, str) and _REWARD_REF.match(r) for r in refs):
        marks["reward"] = f"reward: {reward if isinstance(reward, str) else '[...]'}"
    elif isinstance(reward, Mapping) and (found := [k for k in ("compose", "model") if k in reward]):
        marks["reward"] = f"reward: {{{found[0]}: ...}}"
    return marks


def not_a_recipe(
    data: Mapping[str, Any],
    path: Path | str | None,
    *,
    trl: str,
    converting: bool,
    lines: Mapping[tuple[str | int, ...], int] | None = None,
) -> Problem | None:
    """The problem of a TextRL config given as a recipe for `trl <trl>` (to textrl-train --trl, or to
    textrl-convert, where there is nothing to convert), at the line of its first TextRL key; None for a recipe."""
    marks = textrl_config_marks(data)
    if not marks:
        return None
    file = str(path) if path is not None else "FILE"
    names = "model_name_or_path:, dataset_name:" + (", reward_funcs:" if trl in ("grpo", "rloo") else "")
    what = (
        f"this is a TextRL config ({', '.join(marks.values())}), not a recipe for TRL's CLI (which "
        f"`trl {trl} --config FILE` reads: flat, with {names})"
    )
    if converting:
        fix = f"there is nothing to convert. Fix: run it as it is: textrl-train --config {file}"
    else:
        fix = f"so --trl does not apply. Fix: run it without --trl: textrl-train --config {file}"
    line = (lines or {}).get((next(iter(marks)),))
    where = "" if path is None else f"{path}:{line}" if line else str(path)
    return Problem("--trl", f"{what}; {fix}.", where=where)
