"""One translation in progress (`Recipe`) and its result (`Translation`, with a `Note` per translated key)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import Problem


@dataclass(frozen=True)
class Note:
    """One key of the recipe and what became of it."""

    key: str
    line: int | None
    text: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.key}: {self.text}"


@dataclass
class Translation:
    """A recipe as TextRL config data, with a note per translation and a problem per key that needs a hand."""

    config: dict[str, Any]
    notes: list[Note] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)

    def located(self, path: Path | str) -> list[Problem]:
        """The problems, each where `path:line` (its `where` is `line N`, or empty for a key the recipe lacks)."""
        return [replace(p, where=f"{path}:{p.where.removeprefix('line ')}" if p.where else str(path))
                for p in self.problems]  # fmt: skip


class Recipe:
    """The state of one translation: what is left of the recipe, what has been written, where each key was."""

    def __init__(
        self, data: Mapping[str, Any], trainer: str, lines: Mapping[tuple[str | int, ...], int], base_dir: Path,
        out_dir: Path,
    ) -> None:  # fmt: skip
        self.left = dict(data)
        self.trainer = trainer
        self.lines = lines
        self.base_dir, self.out_dir = base_dir, out_dir
        self.out = Translation(config={})
        self.model_name: Any = None

    def line(self, key: str | tuple[str | int, ...]) -> int | None:
        return self.lines.get((key,) if isinstance(key, str) else key)

    def take(self, key: str, default: Any = None) -> Any:
        return self.left.pop(key, default)

    def note(self, key: str, text: str) -> None:
        self.out.notes.append(Note(key, self.line(key), text))

    def refuse(self, key: str, text: str, *, unknown: bool = False, at: tuple[str | int, ...] | None = None) -> None:
        line = self.line(at or key)
        self.out.problems.append(Problem(key, text, where=f"line {line}" if line else ""))
        if unknown:
            self.out.unknown.append(key)

    def rename(self, old: str, new: str) -> None:
        """Read the recipe's `old` key as `new` from here on, at the same line."""
        self.left[new] = self.left.pop(old)
        if (old,) in self.lines:
            self.lines = {**self.lines, (new,): self.lines[(old,)]}

    def put(self, path: tuple[str, ...], value: Any, source: str) -> None:
        """Write a value at a TextRL path (e.g. ("model", "name")), remembering the recipe line it came from."""
        node = self.out.config
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        line = self.line(source)
        if line is not None:
            for size in range(1, len(path) + 1):
                self.out.lines.setdefault(path[:size], line)

    def local(self, value: str) -> str | None:
        """A recipe's relative path as the TextRL config should write it, when the file or folder exists here
        (TRL resolves it from the working directory; TextRL from the config's folder)."""
        for root in (self.base_dir, Path.cwd()):
            candidate = Path(value) if Path(value).is_absolute() else root / value
            if candidate.exists():
                return value if Path(value).is_absolute() else os.path.relpath(candidate, self.out_dir)
        return None
