"""Snapshot of TRL's config dataclasses, written to spec/trl_snapshots/<release>.json: the data the spec mirrors
options from (the newest supported release) and checks older releases against (spec/trl_releases.py).

`python -m textrl.codegen --snapshot` imports TRL (the only codegen step that does) and records, for every TRL config
class an algorithm uses, each init field: its type in a small grammar, its default, its help text, its choices and
the class that declares it. Everything else reads the JSON as data, so validation and the generated code never
import TRL. The drift test re-takes the snapshot from the installed TRL and compares.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import re
import types
import typing
from importlib import metadata
from pathlib import Path
from typing import Any

from textrl.spec import trl_releases


def snapshot_path(trl_version: str) -> Path:
    """Where the snapshot of a TRL version goes: one file per minor release ('1.13.0' -> trl_snapshots/1.13.json)."""
    major, minor = trl_version.split(".")[:2]
    return trl_releases.FOLDER / f"{major}.{minor}.json"


_SCALARS = {bool: "bool", int: "int", float: "float", str: "str", type(None): "None", dict: "dict", Any: "any"}


# dict fields TRL turns into a dataclass when the config is built: their keys are closed (recorded as `keys`).
DICT_DATACLASSES = {"accelerator_config": "transformers.trainer_pt_utils.AcceleratorConfig"}


class Unsupported(TypeError):
    """A TRL field type outside the grammar (an object such as ParallelismConfig)."""


def type_text(tp: Any, choices: list[Any], items: list[Any] | None = None) -> str:
    """A TRL annotation in the snapshot's grammar: bool, int, float, str, false, any, None, dict, dict[str, T],
    list[T], tuple[T, T], and unions with ' | '. Enums become str: their values go to `choices` (or, inside a list,
    to `items`); Literal[False] is `false`."""
    items = choices if items is None else items
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        parts = [type_text(m, choices, items) for m in typing.get_args(tp)]
        return " | ".join(dict.fromkeys(p for part in parts for p in part.split(" | ")))
    if origin is typing.Literal:
        values = typing.get_args(tp)
        if values == (False,):
            return "false"
        if all(isinstance(v, bool) for v in values):
            return "bool"
        choices.extend(v for v in values if v not in choices)
        return " | ".join(dict.fromkeys(_SCALARS[type(v)] for v in values))
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        inner = [type_text(a, items, items) for a in args] or ["any"]
        return f"{origin.__name__}[{', '.join(inner)}]"
    if origin is dict:
        key, value = typing.get_args(tp)
        return "dict" if value is Any else f"dict[{type_text(key, [])}, {type_text(value, [])}]"
    if _is_enum(tp):
        choices.extend(e.value for e in tp if e.value not in choices)
        return "str"
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise Unsupported(f"{tp!r}")


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _plain(value: Any) -> Any:
    """A default as JSON: enums by value; anything else JSON cannot hold is an error (the snapshot must be data)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise Unsupported(f"default {value!r}")


def _owner(cls: type, name: str) -> str:
    """The class in `cls`'s MRO that declares the field (TrainingArguments, GRPOConfig, ...)."""
    for base in cls.__mro__:
        if name in inspect.get_annotations(base):
            return base.__name__
    raise AssertionError(f"no class of {cls.__name__}'s MRO declares {name}")


def _help(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def field_record(cls: type, field: dataclasses.Field[Any], hints: dict[str, Any]) -> dict[str, Any]:
    choices: list[Any] = list(field.metadata.get("choices", []))
    items: list[Any] = []
    record: dict[str, Any] = {"owner": _owner(cls, field.name)}
    try:
        record["type"] = type_text(hints[field.name], choices, items)
    except Unsupported as exc:
        record["type"] = "unsupported"
        record["why"] = str(exc)
    if field.default is not dataclasses.MISSING:
        default = field.default
    elif field.default_factory is not dataclasses.MISSING:
        default = field.default_factory()
    else:
        default = None
        record["required"] = True
    try:
        record["default"] = _plain(default)
    except Unsupported:
        record["default"] = None
        record["type"] = "unsupported"
        record["why"] = f"default {default!r}"
    if choices and not items:
        record["choices"] = [_plain(c) for c in choices]
    if items:  # the values a list's items take (debug: [underflow_overflow, ...]); metadata choices name those too
        record["items"] = [_plain(c) for c in dict.fromkeys([*items, *choices])]
    if field.name in DICT_DATACLASSES:
        module, _, name = DICT_DATACLASSES[field.name].rpartition(".")
        record["keys"] = [f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name))]
    record["help"] = _help(field.metadata.get("help", ""))
    return record


def take_snapshot() -> dict[str, Any]:
    """The snapshot of the installed TRL. `fields` holds each field once, under the class that declares it
    (TrainingArguments, GRPOConfig, ...); `classes` lists, for each TRL config class an algorithm uses, its init
    fields in order as [declaring class, name]."""
    fields: dict[str, dict[str, Any]] = {}
    classes: dict[str, list[str]] = {}
    for path in trl_releases.TRL_CONFIGS:
        module, _, name = path.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        hints = typing.get_type_hints(cls)
        classes[path] = []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            record = field_record(cls, field, hints)
            owner = record.pop("owner")
            known = fields.setdefault(owner, {}).setdefault(field.name, record)
            if known != record:
                raise AssertionError(f"{owner}.{field.name} differs between the classes that inherit it")
            classes[path].append(f"{owner}.{field.name}")
    return {
        "trl": metadata.version("trl"),
        "transformers": metadata.version("transformers"),
        "classes": classes,
        "fields": fields,
    }


def snapshot_text(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, indent=1, ensure_ascii=False) + "\n"


def write_snapshot(path: Path | None = None) -> Path:
    """Take the installed TRL's snapshot and write it (by default to its release's file)."""
    taken = take_snapshot()
    path = path or snapshot_path(taken["trl"])
    path.write_text(snapshot_text(taken), encoding="utf-8")
    return path
