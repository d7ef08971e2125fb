"""Drift tests of defaults: TextRL's defaults against the installed TRL's (each difference documented), and every
field of the installed TRL config class, at TRL's own default, accepted as an option or refused with its reason."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import pytest

from textrl import ConfigError, TextRLConfig
from textrl.spec import ALGORITHMS, DIFFERENT_FROM_TRL, trl_releases
from textrl.trl_support.env import version

from .test_trl_drift import RESOLVED_DEFAULT, built_with_defaults, handwritten, same, trl_fields

MISSING = dataclasses.MISSING
# TRL fields whose default None is a placeholder __post_init__ replaces, not a value a user writes: what it becomes.
PLACEHOLDER_DEFAULT = {"bf16": True, "activation_checkpointing": True}


def trl_default(path: str, field: str) -> Any:
    if field in RESOLVED_DEFAULT:
        return getattr(built_with_defaults(path), field)
    f = trl_fields(path)[field]
    return f.default if f.default is not MISSING else f.default_factory()


def release_default(trl_config: str, name: str | None) -> tuple[bool, Any]:
    """(True, the newest release's default) for a field whose default an older installed release has otherwise, as
    trl_releases.DEFAULT_CHANGES documents (with what it does to a run): TextRL's options mirror the newest."""
    installed = trl_releases.release_of(version("trl"))
    if name is None or name not in trl_releases.DEFAULT_CHANGES or installed in (None, trl_releases.NEWEST):
        return False, None
    record = trl_releases.field_record(trl_releases.NEWEST, trl_config, name)
    return record is not None, (record or {}).get("default")


def test_defaults_match_trl_or_are_documented():
    found = {}  # (algo, option) -> (TextRL default, TRL default)
    for algo in ALGORITHMS:
        for opt in handwritten(algo):
            changed, newest = release_default(algo.trl_config, opt.trl_name)
            if changed and same(opt.default, newest):
                continue  # an older release's default, documented in DEFAULT_CHANGES
            if not opt.required and not same(opt.default, d := trl_default(algo.trl_config, opt.trl_name)):
                found[algo.name, opt.name] = (opt.default, d)
    undocumented = [k for k in found if k not in DIFFERENT_FROM_TRL and ("*", k[1]) not in DIFFERENT_FROM_TRL]
    table = "\n".join(
        f"  {a:<13} {o:<24} TextRL {t!r:<12} TRL {d!r:<8} {'UNDOCUMENTED' if (a, o) in undocumented else 'documented'}"
        for (a, o), (t, d) in found.items()
    )
    assert not undocumented, f"defaults differing from TRL without a DIFFERENT_FROM_TRL entry:\n{table}"
    stale = [k for k in DIFFERENT_FROM_TRL if not any(o == k[1] and k[0] in ("*", a) for a, o in found)]
    assert not stale, f"DIFFERENT_FROM_TRL entries with no difference left: {stale}\nDifferences:\n{table}"
    # the TRL default each entry states is TRL's (bf16's field default is None, which TRL resolves to True)
    for (a, o), (_, d) in found.items():
        entry = DIFFERENT_FROM_TRL.get((a, o)) or DIFFERENT_FROM_TRL[("*", o)]
        expected = True if (o == "bf16" and d is None) else d
        assert same(entry.trl_default, expected), (a, o, entry.trl_default, d)


@pytest.mark.parametrize("algo", ALGORITHMS, ids=lambda a: a.name)
def test_every_trl_field_is_an_option_or_refused_with_its_reason(algo):
    """Every init field of the installed TRL config class, set to TRL's own default, is accepted at the top level
    (an option, or TRL's spelling of one) or refused with the reason it is not offered; none is 'unknown'."""
    outcome = {"accepted": 0, "refused with a reason": 0}
    problems = []
    for name, field in trl_fields(algo.trl_config).items():
        if name == "output_dir":
            continue
        value = field.default if field.default is not MISSING else field.default_factory()
        value = value.value if isinstance(value, enum.Enum) else value
        value = PLACEHOLDER_DEFAULT.get(name, value) if value is None else value
        changed, newest = release_default(algo.trl_config, name)
        written = any(o.trl_name == name and not o.mirrored for o in algo.options)
        value = newest if changed and written else value  # a hand-written option: the newest release's values
        try:
            with __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                TextRLConfig(algo=algo.name, output_dir="o", **{name: value})
            outcome["accepted"] += 1
        except ConfigError as exc:
            text = str(exc)
            option = next((o.name for o in algo.options if o.trl_name == name), name)
            by_rule = any(r.violation({o.name: o.default for o in algo.options} | {option: value}) for r in algo.rules)
            reasons = ("not offered", "does not offer", "is fixed")
            if "unknown option" in text or not (by_rule or any(w in text for w in reasons)):
                problems.append(f"{name}={value!r}: {text}")
            else:
                outcome["refused with a reason"] += 1
    assert not problems, "\n".join(problems)
    assert outcome["accepted"] > 100, outcome
