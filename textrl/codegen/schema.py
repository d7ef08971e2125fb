"""The JSON Schema editors use for YAML configs, built from the spec (discriminated by `algo`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter, create_model

from textrl import spec
from textrl.spec import trl_releases
from textrl.validation.config import TextRLConfig

SCHEMA_ID = "https://textrl.dev/schema/textrl.schema.json"


def class_description(algo: spec.Algorithm) -> str:
    """The docstring of an algorithm's config class, and its description in the schema."""
    return f"{algo.title} ({algo.family.value}): {algo.summary}"


def option_description(algo: spec.Algorithm, option: spec.Option) -> str:
    """An option's description as the generated classes, flags, docs and schema carry it: with what the older
    supported TRL releases lack of it (spec/trl_releases.py), when they lack something."""
    notes = [trl_releases.availability(algo.trl_config, option.trl_name)] if option.trl_name else []
    since = trl_releases.VALUES_SINCE.get(option.name, {})
    notes += [f"{value!r} needs TRL >= {release}" for value, release in since.items()]
    shown = "; ".join(n for n in notes if n)
    return f"{option.description} TRL releases: {shown}." if shown else option.description


def spec_model(algo: spec.Algorithm) -> type[TextRLConfig]:
    """A pydantic model built straight from the spec entry, equal in fields to the generated class."""
    fields: dict[str, Any] = {
        "algo": (Literal[(algo.name, *algo.aliases)], Field(algo.name, description="The training algorithm.")),  # type: ignore[valid-type]
    }
    for option in algo.options:
        default = ... if option.required else option.default
        info = Field(default, description=option_description(algo, option), **option.bounds)  # type: ignore[call-overload]
        fields[option.name] = (option.annotation, info)
    model = create_model(  # type: ignore[call-overload]
        algo.class_name, __base__=TextRLConfig, __module__=__name__, __doc__=class_description(algo), **fields
    )
    model.__algorithm__ = algo.name
    return model  # type: ignore[no-any-return]


def build_schema(algorithms: Sequence[spec.Algorithm]) -> dict[str, Any]:
    """One schema for every algorithm: `algo` picks the variant, so an editor offers only that algorithm's keys."""
    models = [spec_model(a) for a in algorithms]
    union = Annotated[Union[tuple(models)], Field(discriminator="algo")]  # type: ignore[valid-type]  # noqa: UP007
    schema = TypeAdapter(union).json_schema(ref_template="#/$defs/{model}")  # type: ignore[arg-type]
    for model in models:
        variant = schema["$defs"][model.__name__]
        variant["required"] = ["algo", *[r for r in variant.get("required", []) if r != "algo"]]
    _share_options(schema, [m.__name__ for m in models])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "TextRL config",
        "description": "A TextRL training config (YAML or JSON). Set algo first: the other keys depend on it.",
        **schema,
    }


def _share_options(schema: dict[str, Any], variants: list[str]) -> None:
    """Move property schemas that several variants repeat into `$defs/option.<name>` and point at them.

    Keeps the file small and each description in one place; editors follow `$ref` as usual.
    """
    shapes: dict[str, list[str]] = {}
    for variant in variants:
        for name, prop in schema["$defs"][variant]["properties"].items():
            text = json.dumps(prop, sort_keys=True)
            if text not in shapes.setdefault(name, []):
                shapes[name].append(text)
    for variant in variants:
        props = schema["$defs"][variant]["properties"]
        for name, prop in props.items():
            if name == "algo":
                continue
            index = shapes[name].index(json.dumps(prop, sort_keys=True))
            key = f"option.{name}" + (f".{index + 1}" if index else "")
            schema["$defs"].setdefault(key, prop)
            props[name] = {"$ref": f"#/$defs/{key}"}
    schema["$defs"] = dict(sorted(schema["$defs"].items()))
