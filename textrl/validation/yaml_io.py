"""Loading YAML configs safely, the way editors read them (YAML 1.2 numbers) and without silent duplicates."""

from __future__ import annotations

import codecs
import io
import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError, Problem


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


MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_DEPTH = 64
"""A config nests a handful of levels (model: peft: target_modules: [...]); far deeper is a broken file."""


def _where(mark: yaml.Mark) -> str:
    source = mark.name
    if source and source.startswith("--"):  # a flag's value: the flag says where
        return source
    line = mark.line + 1
    return f"{source}:{line}" if source and not source.startswith("<") else f"line {line}"


def _mapping_without_duplicates(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    """A mapping whose keys are hashable and written once; merge keys (`<<: *base`) merge as YAML says (keys
    written beside them win), and duplicates among the keys written are errors."""
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=True)  # type: ignore[no-untyped-call]  # a list key, filled
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            shown = repr(key) if len(repr(key)) <= 40 else repr(key)[:37] + "..."
            message = (
                f"a key is a {type(key).__name__} ({shown}); option names and section keys are text. "
                "Fix: write the key as plain text."
            )
            raise ConfigError([Problem("key", message, where=_where(key_node.start_mark))]) from None
        if key in seen:
            message = f"appears twice (lines {seen[key]} and {line}); YAML would silently keep the last. Fix: keep one."
            raise ConfigError([Problem(str(key), message, where=_where(key_node.start_mark))])
        seen[key] = line
    loader.flatten_mapping(node)  # type: ignore[no-untyped-call]
    return loader.construct_mapping(node, deep=deep)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def _depth(value: Any) -> int:
    """How deeply lists and mappings nest in `value` (iteratively: a deep value must not overflow the stack)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack += [(v, level + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, level + 1) for v in item]
    return deepest


def load_yaml(text: str, *, source: str = "<config>") -> Any:
    """Parse one YAML document; a syntax error becomes a ConfigError naming the line.

    `source` names the text in errors: a file (errors say file:line) or a flag such as `--set key` (errors name
    the flag: its value is one line).
    """
    stream = io.StringIO(text)
    stream.name = source  # type: ignore[misc]  # marks (and so error locations) carry the file name
    flag = source.startswith("--")
    try:
        value = yaml.load(stream, Loader=_Loader)  # a SafeLoader subclass: builds no arbitrary objects
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{source}:{mark.line + 1}" if mark and not flag else source
        problem = Problem(where, f"is not valid YAML: {exc.problem}. Fix: correct the syntax there.")
        raise ConfigError([problem]) from None
    except yaml.YAMLError as exc:  # e.g. ReaderError for control characters, which carries no line mark
        problem = Problem(source, f"is not valid YAML: {exc}. Fix: remove the offending character.")
        raise ConfigError([problem]) from None
    except RecursionError:
        problem = Problem(source, f"nests too deeply to read. Fix: a config needs a few levels (at most {MAX_DEPTH}).")
        raise ConfigError([problem]) from None
    if _depth(value) > MAX_DEPTH:
        problem = Problem(
            source, f"nests lists or mappings more than {MAX_DEPTH} levels deep. Fix: a config needs a few levels."
        )
        raise ConfigError([problem])
    return value


def read_config_text(path: str | Path) -> str:
    """A config file's text; a file that is not UTF-8 is a ConfigError naming the line and the byte."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            [Problem("--config", f"{path} cannot be read ({exc.strerror or exc}). Fix: check its permissions.")]
        ) from None
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # YAML allows UTF-16 with its byte-order mark
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            pass  # reported as not UTF-8 below
    try:
        return raw.decode("utf-8-sig")  # a byte-order mark, as some Windows editors write, is fine
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        problem = Problem(
            "config",
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {column}). Fix: save the file as UTF-8 "
            "(e.g. iconv -f latin1 -t utf-8).",
            where=f"{path}:{line}",
        )
        raise ConfigError([problem]) from None


def read_mapping(path: Path, field: str = "--config") -> tuple[dict[str, Any], dict[tuple[str | int, ...], int]]:
    """A YAML file of options (an empty file is an empty mapping) and the line of each key; a missing file or one
    that holds no mapping is a ConfigError naming `field` or the file."""
    if path.is_dir():
        found = sorted(p.name for p in path.iterdir() if p.suffix in (".yaml", ".yml"))[:5]
        hint = f" ({', '.join(found)} {'is' if len(found) == 1 else 'are'} in it)" if found else ""
        raise ConfigError(
            [Problem(field, f"{path} is a folder; --config takes a YAML file{hint}. Fix: give the file's path.")]
        )
    if not path.is_file():
        raise ConfigError([Problem(field, f"{path} does not exist. Fix: give the path of a YAML file.")])
    text = read_config_text(path)
    loaded = load_yaml(text, source=str(path))
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        message = (
            f"the file holds a YAML {type(loaded).__name__}; expected a mapping of options (algo: ..., "
            "output_dir: ...). Fix: write key: value lines."
        )
        raise ConfigError([Problem("config", message, where=str(path))])
    return dict(loaded), key_lines(text)


def load_yaml_file(path: str | Path) -> Any:
    return load_yaml(read_config_text(path), source=str(path))


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
    except (yaml.YAMLError, RecursionError):
        return lines
    if root is not None:
        walk(root, ())
    return lines
