"""Reading spec type annotations: in words for error messages and docs, as source text for generated code."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from ..spec.forms import FromBool, OneOrList

_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string", type(None): "null"}
_NAMES = {bool: "bool", int: "int", float: "float", str: "str", type(None): "None", Any: "Any"}


def union_members(tp: Any) -> tuple[Any, ...]:
    """The members of `A | B` or Optional, else `(tp,)`."""
    if get_origin(tp) in (Union, types.UnionType):
        return get_args(tp)
    return (tp,)


def is_optional(tp: Any) -> bool:
    return type(None) in union_members(tp)


def strip_optional(tp: Any) -> Any:
    """`tp` without None; a one-or-list annotation (spec/forms.py) as its list type, which is what it stores."""
    members = tuple(m for m in union_members(tp) if m is not type(None))
    base = members[0] if len(members) == 1 else Union[members]  # noqa: UP007 - built from a tuple
    return get_args(base)[0] if one_or_list(base) or from_bool(base) else base


def one_or_list(tp: Any) -> bool:
    """Whether `tp` is `Annotated[list[X], ONE_OR_LIST]`: a list that also takes a single value."""
    return get_origin(tp) is typing.Annotated and any(isinstance(m, OneOrList) for m in tp.__metadata__)


def from_bool(tp: Any) -> FromBool | None:
    """The FromBool of `Annotated[Literal[...], FromBool(...)]` (a choice TRL also takes as a boolean), else None."""
    if get_origin(tp) is not typing.Annotated:
        return None
    return next((m for m in tp.__metadata__ if isinstance(m, FromBool)), None)


def literal_values(tp: Any) -> tuple[Any, ...]:
    """The allowed values of a Literal (or a Literal inside Optional/list), else ()."""
    for member in union_members(tp):
        member = strip_optional(member) if from_bool(member) or one_or_list(member) else member
        if get_origin(member) is Literal:
            return get_args(member)
        if get_origin(member) is list and get_origin(get_args(member)[0]) is Literal:
            return get_args(get_args(member)[0])
    return ()


def _bound_words(bounds: dict[str, float | int]) -> str:
    signs = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    parts = [f"{signs[k]} {v:g}" for k, v in bounds.items() if k in signs]
    return " and ".join(parts)


def _metadata_pattern(tp: Any) -> str | None:
    for meta in getattr(tp, "__metadata__", ()):
        pattern = getattr(meta, "pattern", None)
        if pattern:
            return str(pattern)
    return None


def _metadata_bounds(tp: Any) -> dict[str, float | int]:
    """The bounds an Annotated member carries (`Annotated[float, Field(gt=0)]`: {"gt": 0})."""
    found: dict[str, float | int] = {}
    for meta in get_args(tp)[1:]:
        for constraint in getattr(meta, "metadata", [meta]):
            for name in ("gt", "ge", "lt", "le"):
                if isinstance(getattr(constraint, name, None), int | float):
                    found[name] = getattr(constraint, name)
    return found


def describe(tp: Any, bounds: dict[str, float | int] | None = None) -> str:
    """What values a type admits, in words: 'a number > 0', "one of 'group', 'batch', 'none'", ..."""
    bounds = bounds or {}
    if one_or_list(tp):
        return f"{describe(get_args(get_args(tp)[0])[0])}, or a list of these{_size_words(bounds)}"
    if (legacy := from_bool(tp)) is not None:
        return f"{describe(get_args(tp)[0])} (or true for {legacy.true!r}, false for {legacy.false!r})"
    if get_origin(tp) is typing.Annotated:
        base = get_args(tp)[0]
        pattern = _metadata_pattern(tp)
        if base is str and pattern and ":" in pattern:
            return "a string module:function"
        return describe(base, {**bounds, **_metadata_bounds(tp)})
    members = union_members(tp)
    if len(members) > 1:
        words = [describe(m, bounds) for m in members if m is not type(None)]
        if is_optional(tp):
            words.append("null")
        return ", or ".join(words) if len(words) > 2 else " or ".join(words)
    if get_origin(tp) is Literal:
        values = get_args(tp)
        return "one of " + ", ".join(repr(v) for v in values) if len(values) > 1 else repr(values[0])
    if get_origin(tp) is list:
        inner = get_args(tp)[0]
        size = _size_words(bounds)
        if get_origin(inner) is Literal:
            return "a list of " + ", ".join(repr(v) for v in get_args(inner)) + size
        return f"a list of {_plural(describe(inner))}{size}"
    if get_origin(tp) is dict:
        return "a mapping"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "a mapping with keys " + ", ".join(tp.model_fields)
    text = _WORDS.get(tp, getattr(tp, "__name__", str(tp)))
    limits = _bound_words({k: v for k, v in bounds.items() if k in ("ge", "gt", "le", "lt")})
    if tp in (int, float) and limits:
        text += " " + limits
    if tp is str and bounds.get("min_length"):
        text = "a non-empty string"
    return text


def _size_words(bounds: dict[str, float | int]) -> str:
    if bounds.get("min_length") == bounds.get("max_length") and "min_length" in bounds:
        return f" (exactly {bounds['min_length']})"
    if "min_length" in bounds:
        return f" (at least {bounds['min_length']})"
    return ""


def _plural(words: str) -> str:
    for article in ("an ", "a "):
        if words.startswith(article):
            noun, _, rest = words[len(article) :].partition(" ")
            return f"{noun}s" + (f" {rest}" if rest else "")
    return words


def source(tp: Any, name_of: Callable[[Any], str | None]) -> str:
    """Python source text of an annotation, e.g. `list[Literal["a", "b"]] | None`.

    `name_of` returns the importable name of a model or alias (e.g. `ModelSection`), or None.
    """
    named = name_of(tp)
    if named:
        return named
    members = union_members(tp)
    if len(members) > 1:
        return " | ".join(source(m, name_of) for m in members)
    origin = get_origin(tp)
    if origin is Literal:
        return "Literal[" + ", ".join(_literal_source(v) for v in get_args(tp)) + "]"
    if origin in (list, dict, tuple):
        return f"{origin.__name__}[" + ", ".join(source(a, name_of) for a in get_args(tp)) + "]"
    if tp in _NAMES:
        return _NAMES[tp]
    raise TypeError(f"the codegen cannot write the annotation {tp!r}; name it in spec/sections.py")


def _literal_source(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)
