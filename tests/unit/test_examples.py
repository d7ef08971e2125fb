"""Every example config starts with the editor modeline, and is valid for both the JSON Schema and TextRLConfig."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from textrl import TextRLConfig
from textrl.validation.yaml_io import load_yaml_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
SCHEMA = json.loads((ROOT / "generated/schema/textrl.schema.json").read_text(encoding="utf-8"))


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_is_valid_for_schema_and_config(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../generated/schema/textrl.schema.json"
    assert (path.parent / first.split("=", 1)[1]).resolve() == (ROOT / "generated/schema/textrl.schema.json")
    data = load_yaml_file(path)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    cfg = TextRLConfig.from_yaml(path)
    assert cfg.algo in (data["algo"], "reinforce_pp")


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["discriminator"]["propertyName"] == "algo"


def test_schema_offers_only_the_chosen_algorithms_keys() -> None:
    """What an editor sees once `algo: dpo` is written: DPO's keys, loss types as an enum, descriptions."""
    dpo = SCHEMA["$defs"][SCHEMA["discriminator"]["mapping"]["dpo"].rsplit("/", 1)[1]]
    assert dpo["additionalProperties"] is False
    assert "num_generations" not in dpo["properties"] and "loss_type" in dpo["properties"]
    loss = SCHEMA["$defs"][dpo["properties"]["loss_type"]["$ref"].rsplit("/", 1)[1]]
    one, listed = loss["anyOf"]  # one loss type, or a list of them, as TRL takes it
    assert "sigmoid" in one["enum"] and "foo" not in one["enum"] and listed["items"] == one
    assert loss["description"].startswith("One DPO loss or several")
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid({"algo": "dpo", "output_dir": "o", "num_generations": 4})
    assert not validator.is_valid({"algo": "ppo", "output_dir": "o"})
    assert validator.is_valid({"algo": "grpo", "output_dir": "o", "num_generations": 4})
