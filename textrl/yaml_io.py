"""Loading YAML configs safely, the way editors read them (YAML 1.2 numbers) and without silent duplicates."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError, Problem


class _Loader(yaml.SafeLoader):
    """SafeLoader (no arbitrary objects) that reads `5e-6` as a number, as YAML 1.2 and editors do."""


# YAML 1.2 booleans: only true/false. YAML 1.1 also reads yes/no/on/off as booleans, which turns
# `save_strategy: no` into False.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def _mapping_without_duplicates(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        line = key_node.start_mark.line + 1
        if key in seen:
            source = key_node.start_mark.name
            where = f"{source}:{line}" if source and not source.startswith("<") else f"line {line}"
            message = f"appears twice (lines {seen[key]} and {line}); YAML would silently keep the last. Fix: keep one."
            raise ConfigError([Problem(str(key), message, where=where)])
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def load_yaml(text: str, *, source: str = "<config>") -> Any:
    """Parse one YAML document; a syntax error becomes a ConfigError naming the line."""
    stream = io.StringIO(text)
    stream.name = source  # type: ignore[misc]  # marks (and so error locations) carry the file name
    try:
        return yaml.load(stream, Loader=_Loader)  # a SafeLoader subclass: builds no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{source}:{mark.line + 1}" if mark else source
        problem = Problem(where, f"is not valid YAML: {exc.problem}. Fix: correct the syntax there.")
        raise ConfigError([problem]) from None
    except yaml.YAMLError as exc:  # e.g. ReaderError for control characters, which carries no line mark
        problem = Problem(source, f"is not valid YAML: {exc}. Fix: remove the offending character.")
        raise ConfigError([problem]) from None


def load_yaml_file(path: str | Path) -> Any:
    path = Path(path)
    return load_yaml(path.read_text(encoding="utf-8"), source=str(path))


def key_lines(text: str) -> dict[tuple[str | int, ...], int]:
    """Line number (1-based) of every key and list item in a YAML mapping, by its path, e.g. ("model", "peft", "r")."""
    lines: dict[tuple[str | int, ...], int] = {}

    def walk(node: yaml.Node, path: tuple[str | int, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                child = (*path, str(key_node.value))
                lines[child] = key_node.start_mark.line + 1
                walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                lines[child] = item.start_mark.line + 1
                walk(item, child)

    try:
        root = yaml.compose(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError:
        return lines
    if root is not None:
        walk(root, ())
    return lines
