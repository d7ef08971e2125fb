"""Fuzzed configs: generated YAML documents and Python kwargs (wrong types, unknown keys, removed algorithms,
wrong nesting, huge numbers, unicode, empty files) either validate or raise TextRL's ConfigError naming a key,
never a raw traceback from pydantic, YAML or the spec. No torch is imported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from textrl import ConfigError, TextRLConfig, spec

# extra's unknown keys (a newer TRL's fields) are a warning by design, not a failure of the property
pytestmark = pytest.mark.filterwarnings("ignore::textrl.errors.UnknownTRLFieldWarning")

FUZZ = settings(max_examples=1000, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip

KEYS = st.sampled_from([*spec.all_option_names(), "algo", "lerning_rate", "tokenizer", "rpo_alpha", "ppo", "Ω", ""])
ALGOS = st.sampled_from([*spec.BY_NAME, *spec.REMOVED_BY_NAME, "GRPO", "", "dpo ", "ppo2"])
SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
CONFIGS = st.dictionaries(KEYS, VALUES, max_size=8).flatmap(
    lambda body: st.fixed_dictionaries({"algo": ALGOS | VALUES}).map(lambda head: {**head, **body}) | st.just(body)
)


def _named(error: ConfigError) -> None:
    assert error.problems, "a ConfigError with no problem"
    for problem in error.problems:
        assert problem.field.strip(), f"a problem that names no key: {problem}"
        assert any(word in problem.message for word in ("Fix", "allowed", "is required")), str(problem)


@FUZZ
@given(kwargs=CONFIGS)
def test_python_kwargs_validate_or_name_a_key(kwargs: dict[str, Any]) -> None:
    try:
        TextRLConfig(**{"output_dir": "o", **kwargs})
    except ConfigError as error:
        _named(error)


@FUZZ
@given(document=CONFIGS)
def test_yaml_documents_validate_or_name_a_key(tmp_path_factory: Any, document: dict[str, Any]) -> None:
    path = Path(tmp_path_factory.mktemp("fuzz")) / "c.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True))
    try:
        TextRLConfig.from_yaml(path)
    except ConfigError as error:
        _named(error)


@FUZZ
@given(
    text=st.text(max_size=200)
    | st.sampled_from(
        [
            "",
            "---",
            "- a\\n- b",
            "algo: [",
            "a: 1\\na: 2",
            "!!python/object:os.system {}",
            "&a [*a]",
            "algo: !!binary aGk=",
        ]
    )
)
def test_raw_text_never_escapes_as_another_exception(tmp_path_factory: Any, text: str) -> None:
    path = Path(tmp_path_factory.mktemp("fuzz")) / "c.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        TextRLConfig.from_yaml(path)
    except ConfigError as error:
        _named(error)


# Families the careless-user pass found escaping as raw tracebacks: encodings, merge keys, unhashable keys, depth.
DOCUMENTS = st.sampled_from(
    [
        "algo: grpo\noutput_dir: o\n",
        "base: &b {algo: grpo, output_dir: o}\n<<: *b\n",
        "model: &m {name: textrl:tiny}\nalgo: grpo\noutput_dir: o\n<<: *m\n",
        "algo: grpo\noutput_dir: o\ndataset: &d {path: a.jsonl}\neval_dataset: {<<: *d, split: x}\n",
        "algo: grpo\n<<: [1, 2]\n",
        "algo: grpo\n? [a, b]\n: 1\n",
        "algo: grpo\n? {x: 1}\n: 1\n",
        "algo: grpo\nextra: {? [1] : 2}\n",
    ]
)


@settings(FUZZ, max_examples=200)
@given(
    head=DOCUMENTS,
    depth=st.sampled_from([0, 1, 5, 63, 64, 65, 200, 600]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252"]),
    tail=st.text(max_size=20),
    junk=st.binary(max_size=8),
)
def test_encodings_merge_keys_unhashable_keys_and_depth(
    tmp_path_factory: Any, head: str, depth: int, encoding: str, tail: str, junk: bytes
) -> None:
    text = head + f"run_name: {tail!r}\n" + "extra: {deep: " + "[" * depth + "]" * depth + "}\n"
    try:
        raw = text.encode(encoding) + junk
    except UnicodeEncodeError:
        raw = text.encode("utf-8") + junk
    path = Path(tmp_path_factory.mktemp("fuzz")) / "c.yaml"
    path.write_bytes(raw)
    try:
        TextRLConfig.from_yaml(path)
    except ConfigError as error:
        _named(error)


@settings(FUZZ, max_examples=300)
@given(
    key=st.sampled_from(["foo", "model.name", "reward", "extra.x", "a.b"]),
    value=VALUES.map(yaml.safe_dump) | st.text(max_size=30),
)
def test_set_items_validate_or_name_a_key(tmp_path_factory: Any, key: str, value: str) -> None:
    from textrl.run.assemble import assemble

    path = Path(tmp_path_factory.mktemp("fuzz")) / "c.yaml"
    path.write_text("algo: grpo\noutput_dir: o\n")
    try:
        assemble(path, {}, {}, [f"{key}={value}"])
    except ConfigError as error:
        _named(error)
        assert "<config>" not in str(error), str(error)
