"""The snapshot's type grammar (`str | None`, `list[float]`, `dict | str | None`, ...) as Python types: what the
mirrored options are annotated with, and what an older release's field is checked against."""

from __future__ import annotations

import functools
from typing import Any, Literal

_BASE: dict[str, Any] = {"bool": bool, "int": int, "float": float, "str": str, "None": type(None), "any": Any}


def _member(text: str, choices: tuple[Any, ...], items: tuple[Any, ...]) -> Any:
    if text == "dict":
        return dict[str, Any]
    if text == "false":
        return Literal[False]
    if text.startswith(("list[", "tuple[", "dict[")):
        inner = [_member(t.strip(), items, ()) for t in text[text.index("[") + 1 : -1].split(",")]
        if text.startswith("dict["):
            return dict[inner[0], inner[1]]  # type: ignore[valid-type]
        return list[inner[0]]  # type: ignore[valid-type]  # YAML has no tuples: a list, as TRL's own CLI reads it
    if text == "str" and choices and all(isinstance(c, str) for c in choices):
        return Literal[choices]
    if text == "str" and items:  # one item named as text (TRL splits it), or "" for none: debug: underflow_overflow
        return Literal[("", *items)]
    return _BASE[text]


def annotation(record: dict[str, Any]) -> Any:
    """The option type for a snapshot field: its grammar (`str | None`, `dict | str | None`, ...) as Python types,
    a `str` with choices as a Literal of them, and list items with choices likewise."""
    return _annotation(record["type"], tuple(record.get("choices", ())), tuple(record.get("items", ())))


@functools.cache
def _annotation(grammar: str, choices: tuple[Any, ...], items: tuple[Any, ...]) -> Any:
    parts = sorted(grammar.split(" | "), key=lambda p: p == "None")  # None last, as the codebase writes unions
    members = [_member(p, choices, items) for p in parts]
    result = members[0]
    for member in members[1:]:
        result = result | member
    return result
