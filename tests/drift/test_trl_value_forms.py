"""Every value form TRL accepts, TextRL accepts, and builds into the identical TRL config.

Driven by TRL's own annotations: for each field of each TRL config class, values are drawn from the field's type
and the choices its metadata declares (TRL's CLI enforces those; a string outside them is stored by the Python
class and fails when the trainer starts, so TextRL refuses it up front) (bools flipped, numbers moved, every other choice, a dict and its
JSON text, a single value and a list, ints where TRL takes floats). Each value is built twice: by TRL directly, with
the same other arguments TextRL passes, and through `TextRLConfig`; `to_dict()` must be equal. A value TRL itself
refuses is not a value TRL accepts and is skipped. TextRL may refuse a value TRL accepts only by a documented rule
(a spec rule TRL would hit later), listed in REFUSED_BY_RULE with the rule's name.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import operator
import typing
import warnings
from typing import Any

import pytest
import trl

from textrl import ConfigError, TextRLConfig, spec, trl_build
from textrl.validation.annotations import literal_values, strip_optional

pytestmark = pytest.mark.slow

UNIONS = (typing.Union, __import__("types").UnionType)
# One algorithm per TRL config class: the fixed-loss DPO variants share DPOConfig with dpo.
ALGOS = [
    next(a for a in spec.ALGORITHMS if a.trl_config == path)
    for path in dict.fromkeys(a.trl_config for a in spec.ALGORITHMS)
]
# (field, repr(value)) -> the spec rule that refuses it (and that TRL would hit later, or never): documented refusals.
REFUSED_BY_RULE: dict[tuple[str, str], str] = {
    ("load_best_model_at_end", "True"): "best_needs_metric: TRL fails at the first save without metric_for_best_model",
}
# Values other settings must come with (TRL accepts them only together): (field, repr(value)) -> companions.
COMPANIONS: dict[tuple[str, str], dict[str, Any]] = {}
SKIP = {"output_dir": "required: every build sets it", "bf16": "True needs a bf16 GPU (tests/integration cover it)"}
# Fields where to_dict() holds the time of the build or an object made afresh each time.
VOLATILE = {"logging_dir"}


def field_values(tp: Any, default: Any, choices: tuple[Any, ...] = ()) -> list[Any]:
    """Values of a TRL field type other than its default: every choice of an enum or Literal (or of the `choices`
    TRL's metadata declares for a string, which its own CLI enforces), a flipped bool, moved numbers (an int for a
    float too), a one-item list, a dict and its JSON text."""
    out: list[Any] = list(choices)
    members = typing.get_args(tp) if typing.get_origin(tp) in UNIONS else (tp,)
    for member in members:
        origin = typing.get_origin(member)
        if member is bool:
            out += [True, False]
        elif member is int:
            out += [1, 7] if not isinstance(default, int) or isinstance(default, bool) else [default + 1]
        elif member is float:
            base = default if isinstance(default, float) and default else 0.25
            out += [base * 2, 3]
        elif isinstance(member, type) and issubclass(member, enum.Enum):
            out += [e.value for e in member][:4]
        elif origin is typing.Literal:
            out += list(typing.get_args(member))
        elif member is str and not choices:
            out += ["textrl-value"]
        elif origin is list or member is list:
            inner = typing.get_args(member)
            item = inner[0] if inner else str
            first = [e.value for e in item][:1] if isinstance(item, type) and issubclass(item, enum.Enum) else None
            out += [first or field_values(item, None)[:1]]
        elif origin is dict or member is dict:
            out += [{}]
    if any(m is str for m in members) and any(typing.get_origin(m) is dict or m is dict for m in members):
        out += [json.dumps({})]  # TRL parses a dict field's JSON text
    return [v for v in out if not (v == default and type(v) is type(default))][:4]


def cases(algo: spec.Algorithm) -> list[tuple[str, str, Any]]:
    """(option, TRL field, value) for the mirrored fields and the value forms of the hand-written ones."""
    hints = typing.get_type_hints(trl_build_class(algo))
    options = {o.trl_name: o for o in algo.options if o.trl_name}
    found = []
    for field in dataclasses.fields(trl_build_class(algo)):
        option = options.get(field.name)
        if not field.init or option is None or option.name in SKIP:
            continue
        default = field.default if field.default is not dataclasses.MISSING else None
        declared = tuple(field.metadata.get("choices", ()))
        found += [(option.name, field.name, v) for v in field_values(hints[field.name], default, declared)]
    if "report_to" in options:  # TRL's own example configs write `report_to: none`
        found += [("report_to", "report_to", v) for v in ("none", "tensorboard", ["tensorboard"])]
    if "scale_rewards" in options:  # TRL's older boolean spelling, still read by TRL
        found += [("scale_rewards", "scale_rewards", v) for v in (True, False)]
    if algo.name == "dpo":
        found += [("loss_type", "loss_type", v) for v in ("apo_zero", ["sigmoid", "sft"])]
    return found


def documented_refusal(algo: spec.Algorithm, name: str, value: Any) -> str | None:
    """Why TextRL may refuse a value TRL's config class stores: it breaks a bound or a closed choice the spec declares
    (and the docs list), or a spec rule; each is something TRL fails on later (or misreads). None: no such reason."""
    option = algo.option(name)
    single = value[0] if isinstance(value, list) and value else value
    choices = literal_values(strip_optional(option.annotation))
    if choices and not option.mirrored and single not in choices:
        return f"closed choice of the spec ({', '.join(map(str, choices))})"
    signs = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt}
    if isinstance(value, int | float) and any(
        not op(value, option.bounds[b]) for b, op in signs.items() if b in option.bounds
    ):
        return f"bound of the spec {option.bounds}"
    values = {o.name: o.default for o in algo.options} | {name: value}
    broken = [rule.name for rule in algo.rules if rule.violation(values)]
    return f"spec rule {broken[0]}" if broken else None


def trl_build_class(algo: spec.Algorithm) -> type:
    module, _, name = algo.trl_config.rpartition(".")
    return getattr(__import__(module, fromlist=[name]), name)


@pytest.mark.parametrize("algo", ALGOS, ids=lambda a: a.trl_config)
def test_every_trl_value_form_builds_the_same_trl_config(algo: spec.Algorithm, tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr("textrl.trl_support.build.check_engines", lambda cfg: None)  # vLLM/DeepSpeed cannot exist here
    real = trl_build_class(algo)
    sent: list[dict[str, Any]] = []

    class Recording(real):  # type: ignore[valid-type,misc]  # the same class; remembers what TextRL passed
        def __init__(self, **kwargs: Any) -> None:
            sent.append(kwargs)
            super().__init__(**kwargs)

    monkeypatch.setattr(trl, real.__name__, Recording)
    base = {"algo": algo.name, "output_dir": str(tmp_path)}
    problems, refused, checked = [], [], 0
    for option, field, value in cases(algo):
        companions = COMPANIONS.get((field, repr(value)), {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecation notices of the fields themselves are not the point here
            sent.clear()
            trl_build.build_trl_config(TextRLConfig(**base, **companions))
            try:
                direct = real(**{**sent[-1], field: value})
            except Exception:
                continue  # TRL refuses this value itself: not a value TRL accepts
            try:
                via = trl_build.build_trl_config(TextRLConfig(**base, **companions, **{option: value}))
            except ConfigError as exc:
                why = documented_refusal(algo, option, value)
                if why is None and (field, repr(value)) not in REFUSED_BY_RULE:
                    problems.append(f"{field}={value!r}: TRL accepts it, TextRL refuses it: {exc}")
                refused.append(f"{field}={value!r}: {why or REFUSED_BY_RULE[field, repr(value)]}")
                continue
        checked += 1
        mine, theirs = via.to_dict(), direct.to_dict()
        differ = sorted(k for k in mine.keys() | theirs.keys() if k not in VOLATILE and mine.get(k) != theirs.get(k))
        if differ:
            problems.append(f"{field}={value!r}: TRL configs differ in {differ}: "
                            f"{[(k, mine.get(k), theirs.get(k)) for k in differ][:3]}")  # fmt: skip
    print(f"{algo.trl_config}: {checked} values compared; refused by a documented bound, choice or rule: {refused}")
    assert checked >= 20, f"only {checked} values compared: the value generator lost its way"
    assert not problems, "\n".join(problems)
