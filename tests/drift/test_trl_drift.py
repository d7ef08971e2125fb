"""Drift tests: the spec against the installed TRL/transformers (fields, types, loss types, choices, defaults, builders).

A failure means TRL changed under TextRL or the spec is wrong: fix the spec, or document a deliberate difference
(spec.DIFFERENT_FROM_TRL) or an unsupported TRL loss (UNSUPPORTED below).
"""

import dataclasses
import enum
import importlib
import inspect
import operator
import re
import types
import typing
from functools import cache
from typing import Any, Literal

import pytest
import trl  # noqa: F401  (the point of this module; fails loudly if TRL is missing)
from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK
from transformers.trainer_utils import IntervalStrategy, SaveStrategy, SchedulerType
from transformers.training_args import OptimizerNames

from textrl import ConfigError, TextRLConfig
from textrl.spec import ALGORITHMS, BY_NAME, choices, trl_releases
from textrl.trl_support import build as trl_build
from textrl.trl_support.env import version
from textrl.validation.annotations import strip_optional

pytestmark = pytest.mark.slow

UNIONS = (typing.Union, types.UnionType)
MISSING = dataclasses.MISSING
# (trainer, loss type) -> why TextRL leaves out a loss that TRL's trainer accepts.
UNSUPPORTED: dict[tuple[str, str], str] = {}
LOSSES = {  # trainer -> (trainer module, config class, the spec's names)
    "dpo": ("trl.trainer.dpo_trainer", "trl.DPOConfig", choices.DPO_LOSS_TYPES),
    "grpo": ("trl.trainer.grpo_trainer", "trl.GRPOConfig", choices.GRPO_LOSS_TYPES),
    "kto": ("trl.trainer.kto_trainer", "trl.KTOConfig", choices.KTO_LOSS_TYPES),
}
# Converter in textrl.trl_support.build -> (the option type it takes, the type it hands to TRL).
CONVERTED = {"resolve_bf16": (bool | Literal["auto"], bool), "as_tuple": (list[float] | None, tuple[float, ...] | None)}
# TRL fields whose dataclass default is a placeholder __post_init__ replaces: compared by the built value.
RESOLVED_DEFAULT = {"activation_checkpointing": "None, resolved from gradient_checkpointing (default True)"}
# TRL fields where None means "TRL derives it in __post_init__" (eval_steps: from logging_steps once evaluating).
DERIVED_WHEN_NONE = {"generation_batch_size", "steps_per_generation", "eval_steps"}
# Non-default values where the generic pick (other choice, flipped bool, doubled number) is invalid or absent.
NON_DEFAULT: dict[str, Any] = {
    "num_generations": 4,  # must divide the generation batch 8 × 1
    "generation_batch_size": 16, "steps_per_generation": 2, "min_p": 0.05, "epsilon_high": 0.28, "delta": 1.5,
    "reward_weights": [1.0, 0.5], "loss_weights": [0.5],  # one weight per loss in loss_type (default: one loss)
    "run_name": "drift", "save_total_limit": 2, "eval_steps": 50.0, "ld_alpha": 0.5,
    "center_rewards_coefficient": 0.01, "report_to": ["tensorboard"], "bf16": False,  # True needs a bf16 GPU
    "vllm_max_model_length": 2048, "vllm_server_base_url": "http://localhost:8000",
    "vllm_server_host": "127.0.0.1", "vllm_structured_outputs_regex": r"\d+",
    "completion_only_loss": False,  # SFT: None means by the data's layout
}  # fmt: skip
BOUND_OPS = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt}
# (option, repr(value)) -> other settings a value needs, for values a spec rule rejects alone.
COMPANIONS: dict[tuple[str, str], dict[str, Any]] = {
    # transformers fills metric_for_best_model="loss" for this scheduler, so the test names one to compare
    ("lr_scheduler_type", "'reduce_lr_on_plateau'"): {"eval_strategy": "steps", "metric_for_best_model": "eval_loss"},
    ("lr_scheduler_type", "'greedy'"): {"eval_strategy": "steps", "metric_for_best_model": "eval_loss"},
    ("save_strategy", "'best'"): {"metric_for_best_model": "eval_loss"},
    # vLLM server settings without use_vllm would be ignored by TRL (a rule), so they come with it
    ("vllm_mode", "'server'"): {"use_vllm": True},
    ("vllm_server_base_url", "'http://localhost:8000'"): {"use_vllm": True},
    # SFT: padding-free batches are not truncated, so without packing they need max_length null (a rule)
    ("padding_free", "True"): {"max_length": None},
}
SKIPPED = {"output_dir": "required, so every build already sets a non-default value"}
# Values a rule refuses whatever comes with them (the rule's message): they never reach TRL, the refusal is checked.
REFUSED = {("trl.DPOConfig", "padding_free", "True"): r"padding_free=True: TRL 1\.13 to 1\.16 accept it for DPO and "
           r"then switch it off"}  # fmt: skip


def trl_class(path: str) -> type:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


@cache
def trl_fields(path: str) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(trl_class(path)) if f.init}


@cache
def built_with_defaults(path: str) -> Any:
    """The TRL config with only output_dir (not created) and bf16=False (TRL's bf16 default refuses a CPU)."""
    return trl_class(path)(output_dir="drift-defaults-not-created", bf16=False)


def accepts(trl_t: Any, t: Any) -> bool:
    """Whether every value of type `t` is a value of TRL's field type `trl_t` (an int is a float, a bool no int, a
    string is an enum value when the option's Literal lists only that enum's values)."""
    if typing.get_origin(t) is typing.Annotated:  # a one-or-list option stores (and sends) the list
        return accepts(trl_t, typing.get_args(t)[0])
    if typing.get_origin(t) in UNIONS:
        return all(accepts(trl_t, m) for m in typing.get_args(t))
    if typing.get_origin(t) is Literal:
        return all(value_accepted(trl_t, v) for v in typing.get_args(t))
    if typing.get_origin(trl_t) in UNIONS:
        return any(accepts(m, t) for m in typing.get_args(trl_t))
    origin, trl_origin = typing.get_origin(t), typing.get_origin(trl_t)
    if origin is list:
        return trl_origin is list and accepts(typing.get_args(trl_t)[0], typing.get_args(t)[0])
    if origin is tuple:  # tuple[float, ...] into tuple[float, float]; the length is the option's bounds' business
        return trl_origin is tuple and all(accepts(x, typing.get_args(t)[0]) for x in typing.get_args(trl_t))
    if origin is dict:
        return trl_t is dict or (trl_origin is dict and all(
            a is Any or b is Any or accepts(a, b) for a, b in zip(typing.get_args(trl_t), typing.get_args(t), strict=True)))  # fmt: skip
    return trl_t is t or (t is int and trl_t is float)


def value_accepted(trl_t: Any, value: Any) -> bool:
    """Whether TRL's field type `trl_t` takes this one value (a Literal's member, an enum's value, a typed scalar)."""
    if typing.get_origin(trl_t) in UNIONS:
        return any(value_accepted(m, value) for m in typing.get_args(trl_t))
    if typing.get_origin(trl_t) is Literal:
        return any(same(value, v) for v in typing.get_args(trl_t))
    if isinstance(trl_t, type) and issubclass(trl_t, enum.Enum):
        return value in {e.value for e in trl_t}
    return accepts(trl_t, type(value))


def same(a: Any, b: Any) -> bool:
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def differs_in_installed_release(trl_config: str, name: str) -> bool:
    """On an older release, a field whose snapshot record differs from the newest's (test_trl_snapshots checks the
    record is the installed TRL's): the release check refuses the values that release lacks (tests/unit)."""
    release = trl_releases.release_of(version("trl"))
    if release in (None, trl_releases.NEWEST):
        return False
    return trl_releases.field_record(release, trl_config, name) != trl_releases.field_record(
        trl_releases.NEWEST, trl_config, name
    )


def forwarded(algo):
    return [o for o in algo.options if o.trl_name is not None]


def handwritten(algo):
    """Forwarded options written in spec/ by hand (always sent to TRL); the mirrored ones are sent only when set."""
    return [o for o in forwarded(algo) if not o.mirrored]


@pytest.mark.parametrize("algo", ALGORITHMS, ids=lambda a: a.name)
def test_forwarded_options_are_trl_fields_of_compatible_type(algo):
    hints, problems = typing.get_type_hints(trl_class(algo.trl_config)), []
    for opt in forwarded(algo):
        if opt.trl_name not in trl_fields(algo.trl_config):
            problems.append(f"{opt.name}: {algo.trl_config} has no init field {opt.trl_name!r}")
            continue
        sent, trl_t = opt.annotation, hints[opt.trl_name]
        if opt.trl_convert:
            assert callable(getattr(trl_build, opt.trl_convert, None)), f"{opt.name}: no converter {opt.trl_convert}"
            takes, sent = CONVERTED[opt.trl_convert]
            if opt.annotation != takes:
                problems.append(f"{opt.name}: {opt.trl_convert} takes {takes}, the option is {opt.annotation}")
            tuples = [a for a in typing.get_args(trl_t) if typing.get_origin(a) is tuple and ... not in a.__args__]
            if tuples and not opt.min_length == opt.max_length == len(typing.get_args(tuples[0])):
                problems.append(f"{opt.name}: TRL wants {tuples[0]}; bounds are {opt.bounds}")
        if not accepts(trl_t, sent) and not differs_in_installed_release(algo.trl_config, opt.trl_name):
            problems.append(f"{opt.name} -> {opt.trl_name}: spec {sent} (converter {opt.trl_convert}) vs TRL {trl_t}")
    assert not problems, "\n".join(problems)


def loss_names_in_source(module: str) -> set[str]:
    src = inspect.getsource(importlib.import_module(module))
    names = set(re.findall(r'\bloss_type\s*[!=]=\s*"(\w+)"', src))
    for group in re.findall(r"\bloss_type\s+(?:not\s+)?in\s*[\[{(]([^\]})]*)[\]})]", src):
        names |= set(re.findall(r'"(\w+)"', group))
    return names


def documented_values(path: str, field: str) -> set[str]:
    """The values TRL's config metadata lists for a field: its `choices`, else the quoted names of the help."""
    meta = trl_fields(path)[field].metadata
    if "choices" in meta:
        return set(meta["choices"])
    sentence = re.search(r"(?:Supported|Possible) values are:?(.*?)\.(?:\s|$)", meta["help"], re.S)
    assert sentence, f"{path}.{field}: help no longer says which values it takes: {meta['help'][:200]}"
    return set(re.findall(r"[`']+(\w+)[`']", sentence.group(1)))


@pytest.mark.parametrize("trainer", LOSSES)
def test_loss_types_match_trl(trainer):
    module, config, spec_names = LOSSES[trainer]
    in_trl, unsupported = loss_names_in_source(module), {n for (t, n) in UNSUPPORTED if t == trainer}
    assert in_trl, f'no `loss_type == "..."` left in {module}: update the extraction'
    assert in_trl - unsupported == set(spec_names), (
        f"{module} accepts {sorted(in_trl)}; spec has {sorted(spec_names)}, UNSUPPORTED {sorted(unsupported)}. "
        f"Missing from spec: {sorted(in_trl - unsupported - set(spec_names))}; "
        f"unknown to TRL: {sorted(set(spec_names) - in_trl)}"
    )
    assert not unsupported & set(spec_names), "a loss is both in the spec and in UNSUPPORTED"
    assert documented_values(config, "loss_type") == in_trl, f"{config}.loss_type help disagrees with {module}"
    given = [a.fixed["loss_type"] for a in ALGORITHMS if a.trl_config == config and "loss_type" in a.fixed]
    fixed = {x for v in given for x in ([v] if isinstance(v, str) else v)}  # GRPO fixes one name, DPO a list
    assert fixed <= set(spec_names), f"fixed loss types not in the spec: {fixed - set(spec_names)}"


def literal_values(algo: str, option: str) -> tuple:
    ann = strip_optional(BY_NAME[algo].option(option).annotation)
    return typing.get_args(typing.get_args(ann)[0] if typing.get_origin(ann) is list else ann)


@pytest.mark.parametrize(
    ("option", "spec_values", "enum"),
    [("lr_scheduler_type", choices.LR_SCHEDULERS, SchedulerType), ("optim", choices.OPTIMIZERS, OptimizerNames),
     ("save_strategy", None, SaveStrategy), ("eval_strategy", None, IntervalStrategy)],
)  # fmt: skip
def test_closed_choices_are_transformers_enum_values(option, spec_values, enum):
    values = literal_values("grpo", option)
    assert spec_values is None or values == spec_values, f"{option} does not use the tuple in spec.choices"
    unknown = set(values) - {e.value for e in enum}
    assert not unknown, f"{option}: not values of transformers' {enum.__name__}: {sorted(unknown)}"
    missing = {e.value for e in enum} - set(values)  # every value transformers takes is taken
    assert not missing, f"{option}: values of transformers' {enum.__name__} the spec refuses: {sorted(missing)}"


def test_report_targets_are_transformers_integrations():
    assert literal_values("grpo", "report_to") == choices.REPORT_TARGETS
    unknown = set(choices.REPORT_TARGETS) - {"none", "all"} - set(INTEGRATION_TO_CALLBACK)
    assert not unknown, f"report_to targets transformers does not know: {unknown}"


@pytest.mark.parametrize(
    ("algo", "option"),
    [("grpo", "scale_rewards"), ("grpo", "importance_sampling_level"), ("grpo", "vllm_mode"),
     ("grpo", "multi_objective_aggregation"), ("dpo", "f_divergence_type")],
)  # fmt: skip
def test_choices_are_named_in_trl_help(algo, option):
    meta = trl_fields(BY_NAME[algo].trl_config)[option].metadata
    text = " ".join(f"'{c}'" for c in meta.get("choices", [])) + meta["help"]
    missing = [v for v in literal_values(algo, option) if not re.search(rf"[`']{re.escape(v)}[`']", text)]
    assert not missing, f"{algo}.{option}: {missing} not mentioned in TRL's metadata: {text[:300]}"


def test_f_divergence_matches_dpo_trainer():
    src = inspect.getsource(importlib.import_module("trl.trainer.dpo_trainer"))
    losses = re.search(r"f_divergence_loss_types\s*=\s*\{([^}]*)\}", src)
    assert losses, "dpo_trainer no longer names its f-divergence losses in one set: update the extraction"
    assert set(re.findall(r'"(\w+)"', losses.group(1))) == set(choices.F_DIVERGENCE_LOSSES)
    assert set(re.findall(r'\bf_divergence_type\s*==\s*"(\w+)"', src)) == set(choices.F_DIVERGENCE_TYPES)
    assert literal_values("dpo", "f_divergence_type") == choices.F_DIVERGENCE_TYPES


def non_default_values(opt) -> list:
    """Valid values other than the default: every other choice of a Literal, else one value."""
    ann, default = strip_optional(opt.annotation) if opt.default is not None else opt.annotation, opt.default
    if opt.name in NON_DEFAULT:
        return [NON_DEFAULT[opt.name]]
    if typing.get_origin(ann) is Literal:
        return [v for v in typing.get_args(ann) if v != default]
    if typing.get_origin(ann) is list and typing.get_origin(typing.get_args(ann)[0]) is Literal:
        return [[next(v for v in typing.get_args(typing.get_args(ann)[0]) if v not in default)]]
    if ann is bool:
        return [not default]
    if opt.example is not None and opt.example != default:
        return [opt.example]
    ann = ann if default is None else next(t for t in typing.get_args(ann) or (ann,) if t is not type(None))
    assert ann in (int, float), f"{opt.name}: no generic non-default value; add one to NON_DEFAULT"
    bounds = opt.bounds
    for v in (default * 2, default + 1) if ann is int else (default * 2, default / 2, default + 1, default + 0.25):
        if v != default and all(op(v, bounds[b]) for b, op in BOUND_OPS.items() if b in bounds):
            return [v]
    raise AssertionError(f"{opt.name}: no non-default value within {bounds}; add one to NON_DEFAULT")


def check_arrives(algo, cfg, built) -> list[str]:
    problems = [f"fixed {k}: TRL has {getattr(built, k)!r}, spec fixes {v!r}"
                for k, v in algo.fixed.items() if not same(getattr(built, k), v)]  # fmt: skip
    for opt in handwritten(algo):
        want, got = getattr(cfg, opt.name), getattr(built, opt.trl_name)
        want = getattr(trl_build, opt.trl_convert)(want) if opt.trl_convert else want
        if opt.trl_name == "report_to" and want == ["none"]:
            want = []  # transformers stores "none" as no integrations
        if not (same(got, want) or (want is None and opt.trl_name in DERIVED_WHEN_NONE and got is not None)):
            problems.append(f"{opt.name} -> {opt.trl_name}: TextRL {want!r}, TRL {got!r}")
    return problems


@pytest.mark.parametrize("algo", ALGORITHMS, ids=lambda a: a.name)
def test_builder_forwards_defaults_and_fixed_values(algo, tmp_path):
    cfg = TextRLConfig(algo=algo.name, output_dir=str(tmp_path))
    assert not (problems := check_arrives(algo, cfg, trl_build.build_trl_config(cfg))), "\n".join(problems)


@pytest.mark.parametrize("algo", ALGORITHMS, ids=lambda a: a.name)
def test_builder_forwards_non_default_values(algo, tmp_path, monkeypatch):
    """Each option moved off its default alone must validate, build in TRL and arrive there unchanged.

    A value TextRL validates alone but TRL rejects means a missing spec rule; once a rule rejects it alone,
    COMPANIONS supplies the settings it needs. vLLM (and DeepSpeed) cannot be installed on this CPU machine, so
    TextRL's is-it-installed check is switched off here: TRL's config classes build without them, and what is
    checked is that the values arrive (the check itself is tested in tests/integration/test_trl_build.py).
    """
    monkeypatch.setattr("textrl.trl_support.build.check_engines", lambda cfg: None)
    problems = []
    for opt in handwritten(algo):
        if opt.name in SKIPPED:
            continue
        for value in non_default_values(opt):
            assert not same(value, opt.default), f"{opt.name}: {value!r} is the default"
            kwargs = {"algo": algo.name, "output_dir": str(tmp_path), opt.name: value}
            if (algo.trl_config, opt.name, repr(value)) in REFUSED:
                with pytest.raises(ConfigError, match=REFUSED[algo.trl_config, opt.name, repr(value)]):
                    TextRLConfig(**kwargs)
                continue
            try:
                cfg = TextRLConfig(**kwargs)
            except ConfigError as exc:
                if (opt.name, repr(value)) not in COMPANIONS:
                    problems.append(f"{opt.name}={value!r}: a rule rejects it alone; add it to COMPANIONS: {exc}")
                    continue
                cfg = TextRLConfig(**kwargs, **COMPANIONS[opt.name, repr(value)])
            try:
                built = trl_build.build_trl_config(cfg)
            except Exception as exc:  # collected: one report per algorithm beats stopping at the first value
                problems.append(f"{opt.name}={value!r}: TextRL accepts it, building TRL fails: {exc!r}")
                continue
            problems += [f"{opt.name}={value!r}: {p}" for p in check_arrives(algo, cfg, built)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("algo", sorted({a.trl_trainer for a in ALGORITHMS}))
def test_atomic_checkpoints_hook_the_methods_trainers_still_have(algo):
    """textrl.checkpoints.atomic overrides Trainer._get_output_dir(trial) and _save_checkpoint(model, trial): a TRL
    trainer that renames them, or saves a checkpoint without them, would silently write in place again."""
    module, _, name = algo.rpartition(".")
    trainer = getattr(importlib.import_module(module), name)
    assert list(inspect.signature(trainer._get_output_dir).parameters) == ["self", "trial"]
    assert list(inspect.signature(trainer._save_checkpoint).parameters) == ["self", "model", "trial"]
    source = inspect.getsource(importlib.import_module("transformers.trainer").Trainer._save_checkpoint)
    assert "self._get_output_dir(trial=trial)" in source
