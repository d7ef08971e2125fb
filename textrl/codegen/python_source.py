"""Python source text of values and types for the generated modules: literals, imports, wrapped sequences,
docstrings, field lines, and the names the generated code uses for the spec's Literal aliases and section models."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

from textrl import spec
from textrl.spec import choices, forms, sections

WIDTH = 120


def py_literal(value: Any) -> str:
    """A value as Python source, with double-quoted strings."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        inner = ", ".join(py_literal(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def import_line(module: str, names: Sequence[str]) -> str:
    """`from module import a, b`, parenthesised one name per line when too long."""
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= WIDTH:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"


def wrap_sequence(text: str) -> str:
    """A one-line tuple or list literal, one element per line when it is too long."""
    if len(text) <= WIDTH - 8:
        return text
    inner = [part.strip() for part in text[1:-1].split(",") if part.strip()]
    return text[0] + "\n" + "".join(f"    {p},\n" for p in inner) + text[-1]


def py_string_block(text: str, indent: int = 12) -> str:
    """A long string as parenthesised implicit concatenation that fits the line width."""
    if len(text) + indent + 8 <= WIDTH:
        return py_literal(text)
    pad = " " * indent
    chunks = textwrap.wrap(text, WIDTH - indent - 4, drop_whitespace=False, break_on_hyphens=False)
    return "(\n" + "".join(f"{pad}{py_literal(c)}\n" for c in chunks) + " " * (indent - 4) + ")"


def choice_objects() -> list[tuple[str, Any]]:
    return [(name, obj) for name, obj in vars(choices).items() if get_origin(obj) is Literal]


def choice_aliases() -> dict[int, str]:
    return {id(obj): name for name, obj in vars(choices).items() if get_origin(obj) is Literal}


def section_names() -> dict[int, str]:
    names = {
        id(obj): name
        for name, obj in vars(sections).items()
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == sections.__name__
    }
    names[id(sections.RewardRef)] = "RewardRef"
    names |= {id(obj): name for name, obj in vars(forms).items() if get_origin(obj) is Annotated}
    return names


@dataclass(frozen=True)
class TypeNames:
    """Names the generated code uses for the spec's Literal aliases and section models."""

    aliases: dict[int, str]
    models: dict[int, str]

    def name_of(self, used: set[str]) -> Callable[[Any], str | None]:
        def lookup(tp: Any) -> str | None:
            name = self.aliases.get(id(tp)) or self.models.get(id(tp))
            if name:
                used.add(name)
            return name

        return lookup


def alias_source(name: str, tp: Any) -> str:
    """`Name = Literal["a", "b"]`, one value per line when it does not fit."""
    values = [py_literal(v) for v in get_args(tp)]
    one_line = f"{name} = Literal[{', '.join(values)}]"
    if len(one_line) <= WIDTH:
        return one_line
    return f"{name} = Literal[\n" + "".join(f"    {v},\n" for v in values) + "]"


def docstring(text: str, indent: str = "    ") -> str:
    """A one-line docstring; never wrapped, because pydantic keeps line breaks in the description it reads."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'{indent}"""{body}"""'


def field_source(option: spec.Option, type_src: str) -> str:
    """The right-hand side of a generated field: a bare default, or Field(...) with bounds."""
    args = [] if option.required else [py_literal(option.default)]
    args += [f"{k}={py_literal(v)}" for k, v in option.bounds.items()]
    mutable = isinstance(option.default, list | dict)
    if not option.required and not option.bounds and not mutable:
        return f"{option.name}: {type_src} = {args[0]}"
    return f"{option.name}: {type_src} = Field({', '.join(args)})"
