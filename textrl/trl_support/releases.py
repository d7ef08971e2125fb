"""The installed TRL release and what a config meets on it (see spec/trl_releases.py): an option or value that release
lacks is refused when the config is validated, before TRL or a model is loaded; a field it names differently is
renamed when the TRL config is built; a default that differs from the newest release is said in the dry run.
Reads package metadata only; an older release's snapshot is read only when that release is installed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import Problem
from ..spec import trl_releases as releases
from ..validation.view import options
from .env import version

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig


def installed_release() -> str | None:
    """The supported release of the installed TRL ('1.13'); None when TRL is missing or outside the window (the
    newest snapshot's names are used then, and UntestedTRLWarning says so)."""
    return releases.release_of(version("trl"))


def _upgrade(since: str) -> str:
    major, minor = releases.NEWEST.split(".")
    return f"pip install 'trl>={since},<{major}.{int(minor) + 1}'"


def release_problems(cfg: TextRLConfig, trl_version: str | None = None) -> list[Problem]:
    """What the installed TRL (or `trl_version`) cannot take of this config: an option its config class lacks, or a
    value its field's type does not allow, each with the first release that takes it. Options left unset are never
    refused: TextRL does not send an unset mirrored option, and drops a hand-written one the release lacks."""
    installed = trl_version or version("trl")
    release = releases.release_of(installed)
    if installed is None or release is None or release == releases.NEWEST:
        return []
    algo = cfg.algorithm()
    problems = []
    for option in algo.options:
        if option.trl_name is None or option.name not in cfg.model_fields_set:
            continue
        value = getattr(cfg, option.name)
        record = releases.field_record(release, algo.trl_config, option.trl_name)
        if record is None:
            since = releases.first_release_with(algo.trl_config, option.trl_name) or releases.NEWEST
            problems.append(Problem(option.name, (
                f"needs TRL >= {since}; installed {installed}, whose {algo.trl_config} has no "
                f"{releases.trl_name(release, option.trl_name)}. Fix: upgrade TRL ({_upgrade(since)}), or remove "
                f"{option.name} to use TRL {installed} as it is."
            )))  # fmt: skip
            continue
        values = value if isinstance(value, list) else [value]
        late = {v: s for v in values if isinstance(v, str) and (s := _since(option.name, v)) and _later(s, release)}
        if late:
            shown, since = next(iter(late.items()))
            problems.append(Problem(option.name, (
                f"{shown!r} needs TRL >= {since}; installed {installed}. Fix: upgrade TRL ({_upgrade(since)}), or "
                f"choose a value TRL {installed} has."
            )))  # fmt: skip
        elif option.mirrored and not releases.accepts(release, algo.trl_config, option.trl_name, value):
            since = releases.first_accepting(algo.trl_config, option.trl_name, value) or releases.NEWEST
            problems.append(Problem(option.name, (
                f"{value!r} needs TRL >= {since}; installed {installed}, whose {option.trl_name} takes "
                f"{releases.allowed_text(record)}. Fix: upgrade TRL ({_upgrade(since)}), or set {option.name} to one "
                f"of those (or leave it unset for TRL {installed}'s default, {record['default']!r})."
            )))  # fmt: skip
    return problems


def _later(one: str, other: str) -> bool:
    return releases.RELEASES.index(one) > releases.RELEASES.index(other)


def _since(option: str, value: str) -> str | None:
    return releases.VALUES_SINCE.get(option, {}).get(value)


def for_release(
    kwargs: Mapping[str, Any], trl_fields: set[str], set_by_user: set[str], trl_version: str | None = None
) -> dict[str, Any]:
    """The TRL config keyword arguments for the installed release (or `trl_version`'s): fields it names differently
    renamed, and fields it lacks dropped when TextRL sent them on its own (validation refused the ones the user
    set; any left reach TRL, which names them)."""
    release = releases.release_of(trl_version or version("trl"))
    if release is None or release == releases.NEWEST:
        return dict(kwargs)
    out = {}
    for key, value in kwargs.items():
        name = releases.trl_name(release, key)
        if name in trl_fields or key in set_by_user:
            out[name] = value
    return out


OLDER_TRANSFORMERS = {
    "activation_checkpointing": "gradient_checkpointing",
    "activation_checkpointing_kwargs": "gradient_checkpointing_kwargs",
}
"""TrainingArguments fields that transformers renamed after 5.19 (the old names stay as aliases in newer releases):
TRL's configs inherit them, so the field a config has depends on the installed transformers, not on TRL."""


def for_transformers(kwargs: Mapping[str, Any], trl_fields: set[str]) -> dict[str, Any]:
    """`kwargs` with each field the installed transformers names the older way (`OLDER_TRANSFORMERS`) renamed: a
    transformers before 5.20 (vLLM's CPU build pins one) has gradient_checkpointing, not activation_checkpointing."""
    return {
        (OLDER_TRANSFORMERS[key] if key not in trl_fields and OLDER_TRANSFORMERS.get(key) in trl_fields else key): value
        for key, value in kwargs.items()
    }


def default_notes(cfg: TextRLConfig, trl_version: str | None = None) -> list[str]:
    """Lines for the dry run: each TRL default of the installed release (or `trl_version`'s) that differs from the
    newest release's and applies to this run (TextRL leaves the field to TRL), with what the difference does."""
    installed = trl_version or version("trl")
    release = releases.release_of(installed)
    if installed is None or release is None or release == releases.NEWEST:
        return []
    algo = cfg.algorithm()
    sent = {o.trl_name for o in algo.options if o.trl_name and (not o.mirrored or o.name in cfg.model_fields_set)}
    sent |= set(algo.fixed) | set(options(cfg).extra)
    return [
        f"{name}: TRL {installed} defaults to {old!r}, TRL {releases.NEWEST} to {new!r}; this run uses {old!r}. "
        f"{releases.DEFAULT_CHANGES.get(name, 'What the difference does is not recorded (spec/trl_releases.py)')}."
        for name, (old, new) in releases.default_differences(algo.trl_config, release).items()
        if name not in sent
    ]
