"""Property: the JSON Schema and TextRLConfig agree, and every config both accept builds TRL's config object.

Valid direction, per algorithm: instances of its schema variant (hypothesis-jsonschema) validate against the
whole schema; TextRLConfig accepts each, or rejects it with exactly the problems the algorithm's cross-field
rules report (spec Rules: what JSON Schema cannot express) or through a listed KNOWN_GAP; an accepted config
builds the TRL class the spec names, unless refused by design (bf16=True on a GPU without bf16; distributed
deepspeed/fsdp, not wired yet). Invalid direction: one mutation of a valid instance (unknown key, wrong type,
number out of range, value outside an enum, removed algorithm, no output_dir) is rejected by the schema and by
TextRLConfig, whose ConfigError names the offending key.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from typing import Any, get_origin

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from textrl import ConfigError, MigrationError, TextRLConfig, spec
from textrl.engines.hardware import bf16_supported, has_accelerator
from textrl.errors import Problem
from textrl.trl_build import build_trl_config
from textrl.validation.annotations import literal_values, strip_optional

pytestmark = [
    pytest.mark.slow,  # builds TRL config objects (imports trl)
    # bf16=True on a CPU builds (bfloat16 autocast) with a PrecisionWarning, tested in tests/integration
    pytest.mark.filterwarnings("ignore::textrl.trl_support.build.PrecisionWarning"),
]

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "generated/schema/textrl.schema.json").read_text("utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
ALGOS = pytest.mark.parametrize("name", [a.name for a in spec.ALGORITHMS])
# generation filters draws to meet the schema's oneOf/anyOf: slow or much-filtered runs are not failures here
SLOW_OR_FILTERED = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
PROPERTY = settings(
    max_examples=12, derandomize=True, database=None, deadline=None, suppress_health_check=SLOW_OR_FILTERED
)

# Where the schema and TextRLConfig (or TRL's config, at build time) disagree today. Each is pinned by
# test_known_gap, a strict xfail: closing a gap fails it, and then its entry goes, and its test case with it.
KNOWN_GAPS = {
    "integral float for an integer option": {"seed": 3.0},  # JSON Schema's integer admits 3.0; strict pydantic not
    "integer too large for a float option": {"learning_rate": 10**400},
}
# Integers are capped when generating (validation still uses the schema as shipped) to keep each example fast.
CAPPED = {"per_device_train_batch_size", "gradient_accumulation_steps", "generation_batch_size"}
CAPPED |= {"steps_per_generation", "num_generations"}


@cache
def instances(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """Instances of one algorithm's schema variant, with the whole `$defs` attached so that refs resolve.

    Only the hand-written options are drawn here: the options mirrored from TRL are TRL's own fields with TRL's own
    cross-field checks (run when its config is built), and test_mirrored_option_values covers them one at a time.
    """
    defs = json.loads(json.dumps(SCHEMA["$defs"]))
    algo = spec.BY_NAME[name]
    variant = defs[algo.class_name]
    mirrored = {o.name for o in algo.options if o.mirrored}
    variant["properties"] = {k: v for k, v in variant["properties"].items() if k not in mirrored}
    # `extra` is free-form by design: its keys are checked against the TRL class at build time, so random
    # keys would only ever meet that one "not a field of GRPOConfig" error. Generate it empty.
    defs["option.extra"] = {"type": "object", "maxProperties": 0}
    for key, option in defs.items():
        if key.startswith("option.") and key.split(".")[1] in CAPPED:
            for branch in option.get("anyOf", [option]):
                if branch.get("type") == "integer":
                    branch["maximum"] = 64
    return from_schema({**variant, "$defs": defs})


def rule_problems(algo: spec.Algorithm, instance: dict[str, Any]) -> list[Problem]:
    """What the algorithm's rules report on an instance whose options, each validated alone, are valid."""
    values = {o.name: o.default for o in algo.options}
    values |= {
        k: TypeAdapter(algo.option(k).annotation).validate_python(v, strict=True)
        for k, v in instance.items()
        if k != "algo"
    }
    return [Problem(rule.fields[0], message) for rule in algo.rules if (message := rule.violation(values))]


def build_refusal(instance: dict[str, Any]) -> str | None:
    """The field build_trl_config refuses by design on this machine, in the order it checks them: an engine
    that is not installed (DeepSpeed, vLLM), then bf16 without a bf16 GPU, then FSDP without a GPU."""
    if (instance.get("distributed") or {}).get("strategy") == "deepspeed" and not importlib.util.find_spec("deepspeed"):
        return "distributed.strategy"
    if instance.get("use_vllm") is True and not importlib.util.find_spec("vllm"):
        return "use_vllm"
    if instance.get("bf16") is True and not bf16_supported() and has_accelerator():  # a CPU runs bf16 autocast
        return "bf16"
    if (instance.get("distributed") or {}).get("strategy") == "fsdp" and not has_accelerator():
        return "distributed.strategy"  # accelerate would run DDP on CPUs (textrl.engines.distributed.fsdp_refusal)
    return None


PATHS = {"output_dir", "reference_cache_dir", "chat_template_path", "name", "gguf_file", "path", "data_dir",
         "data_files", "model"}  # fmt: skip
"""The keys whose values are paths (forms.ShellPath, and data_files), at the top level or in a section."""


def unset_variable(value: Any, key: str = "") -> bool:
    """Whether a path in `value` names an environment variable that is not set, or the home of an unknown user: such
    a path is refused (forms.ShellPath), which no schema can say, since it depends on the environment and the
    machine the run starts on."""
    from textrl.spec.forms import expand_path

    if isinstance(value, dict):
        return any(unset_variable(v, k) for k, v in value.items() if k != "env")
    if isinstance(value, list):
        return any(unset_variable(v, key) for v in value)
    if key not in PATHS:
        return False
    try:
        expand_path(value)
    except ValueError:
        return True
    return False


@ALGOS
@PROPERTY
@given(data=st.data())
def test_schema_valid_config_is_accepted_or_rule_rejected_and_builds(name: str, data: st.DataObject) -> None:
    algo = spec.BY_NAME[name]
    instance = data.draw(instances(algo.name), label="instance")
    assert VALIDATOR.is_valid(instance)
    if unset_variable(instance):
        with pytest.raises(ConfigError, match=r"uses the environment variable|starts with ~, but the home folder"):
            TextRLConfig.model_validate(instance)
        event("a path names an unset environment variable or an unknown home")
        return
    try:
        cfg = TextRLConfig.model_validate(instance)
    except ConfigError as exc:
        assert exc.problems == rule_problems(algo, instance), f"schema-valid, rejected not by a rule: {exc}"
        event(f"rejected by a rule on {', '.join(exc.fields)}")
        return
    refusal = build_refusal(instance)
    environ = dict(os.environ)
    try:
        trl_config = build_trl_config(cfg)
    except ConfigError as exc:
        assert refusal and exc.fields == [refusal], f"accepted by TextRLConfig, refused by TRL: {exc}"
        event(f"build refused: {refusal}")
        return
    finally:  # transformers sets FSDP_CPU_RAM_EFFICIENT_LOADING when it builds an FSDP config
        os.environ.clear()
        os.environ.update(environ)
    assert refusal is None, f"build_trl_config should have refused {refusal}"
    module, trl_name = algo.trl_config.rsplit(".", 1)
    assert type(trl_config) is getattr(importlib.import_module(module), trl_name)
    event(f"built {trl_name}")


WRONG_TYPE = {int: ("8", 1.5, True, [8]), float: ("5e-6", True, [1.0], {"v": 1.0}), str: (5, ["x"]), bool: ("yes", 1)}
MUTATIONS = ("unknown key", "wrong type", "out of range", "not a choice", "removed algo", "no output_dir")


def mutate(data: st.DataObject, algo: spec.Algorithm, instance: dict[str, Any]) -> str:
    """Break `instance` in one way; returns the key the errors must name."""
    kind = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    event(kind)
    if kind == "unknown key":
        names = st.from_regex(r"[a-z][a-z0-9_]{0,24}", fullmatch=True)
        key = data.draw(names.filter(lambda k: k != "algo" and k not in algo.option_names), label="key")
        instance[key] = data.draw(st.sampled_from([1, "x", None, True, {}]), label="value")
        return key
    if kind == "removed algo":
        instance["algo"] = data.draw(st.sampled_from([r.name for r in spec.REMOVED]), label="algo")
        return "algo"
    if kind == "no output_dir":
        del instance["output_dir"]
        return "output_dir"
    if kind == "wrong type":
        cases = [
            (o, v) for o in algo.options if not o.mirrored for v in WRONG_TYPE.get(strip_optional(o.annotation), ())
        ]
        option, value = data.draw(st.sampled_from(cases), label="option, value")
    elif kind == "out of range":
        bounded = [(o, b) for o in algo.options for b in ("ge", "gt", "le", "lt") if getattr(o, b) is not None]
        option, bound = data.draw(st.sampled_from(bounded), label="option, bound")
        limit, number = getattr(option, bound), strip_optional(option.annotation)
        step = data.draw(st.integers(1, 10**6) if number is int else st.floats(1e-3, 1e6), label="step")
        value = number(limit - step if bound in ("ge", "gt") else limit + step)
        if bound in ("gt", "lt") and data.draw(st.booleans(), label="at the excluded limit"):
            value = number(limit)
    else:
        closed = [o for o in algo.options if not o.mirrored and literal_values(o.annotation)]
        option = data.draw(st.sampled_from(closed), label="option")
        value = data.draw(st.text(max_size=12).filter(lambda s: s not in literal_values(option.annotation)))
        if get_origin(strip_optional(option.annotation)) is list:
            value = [value]
    instance[option.name] = value
    return option.name


@ALGOS
@PROPERTY
@given(data=st.data())
def test_mutated_config_is_rejected_by_schema_and_textrl(name: str, data: st.DataObject) -> None:
    algo = spec.BY_NAME[name]
    instance = data.draw(instances(algo.name), label="valid instance")
    key = mutate(data, algo, instance)
    note(f"mutated: {instance!r}")
    assert not VALIDATOR.is_valid(instance)
    with pytest.raises(ConfigError) as rejected:
        TextRLConfig.model_validate(instance)
    assert any(p.field == key or p.field.startswith((f"{key}.", f"{key}[")) for p in rejected.value.problems)
    if key == "algo":
        assert isinstance(rejected.value, MigrationError)
        assert repr(instance["algo"]) in str(rejected.value)


@pytest.mark.parametrize("trl_config", sorted({a.trl_config for a in spec.ALGORITHMS}))
@settings(PROPERTY, max_examples=10)
@given(data=st.data())
def test_mirrored_option_values(trl_config: str, data: st.DataObject) -> None:
    """One option mirrored from TRL, with a value its schema allows: TextRLConfig accepts it, and building TRL's
    config either works or fails with TRL's own check (a cross-field condition of TrainingArguments, such as
    dataloader_prefetch_factor needing dataloader_num_workers), reported as a ConfigError before any model loads."""
    algo = next(a for a in spec.ALGORITHMS if a.trl_config == trl_config)
    option = data.draw(st.sampled_from([o for o in algo.options if o.mirrored]), label="option")
    schema = {**SCHEMA["$defs"][algo.class_name]["properties"][option.name], "$defs": SCHEMA["$defs"]}
    value = data.draw(from_schema(schema), label="value")
    instance = {"algo": algo.name, "output_dir": "out", option.name: value}
    assert VALIDATOR.is_valid(instance)
    cfg = TextRLConfig.model_validate(instance)
    try:
        build_trl_config(cfg)
    except ConfigError as exc:
        assert exc.fields == ["config"] and "rejected it:" in str(exc), str(exc)
        event(f"TRL's own check refused {option.name}")


@pytest.mark.xfail(strict=True, reason="a known gap between the schema and TextRLConfig or TRL (see KNOWN_GAPS)")
@pytest.mark.parametrize("change", KNOWN_GAPS.values(), ids=list(KNOWN_GAPS))
def test_known_gap(change: dict[str, Any]) -> None:
    instance = {"algo": "dpo", "output_dir": "out", **change}
    try:
        build_trl_config(TextRLConfig.model_validate(instance))
        accepted = True
    except ConfigError:
        accepted = False
    assert VALIDATOR.is_valid(instance) == accepted


def test_generation_batch_rule_handles_huge_batches() -> None:
    """Schema-valid batch sizes can be huge; the rule's message lists at most 12 divisors (found in O(sqrt))."""
    with pytest.raises(
        ConfigError,
        match=r"Allowed num_generations for this batch: 2, 4, 5, 8, 10, 16, 20, 25, 32, "
        r"40, 50, 64\. Fix",
    ):
        TextRLConfig(
            algo="grpo",
            output_dir="out",
            generation_batch_size=10**12,
            num_generations=7,
            per_device_train_batch_size=1,
        )
