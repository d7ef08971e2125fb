"""The exceptions a user can cause; every message names the field, the value seen, what is allowed and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a config: where, and the full sentence that says what and how to fix it."""

    field: str
    message: str
    where: str = ""
    """Where the value came from, e.g. `config.yaml:7` or `flag --num-generations`; empty in Python."""

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.message}" if self.where else f"{self.field}: {self.message}"


class ConfigError(ValueError):
    """A TextRL config (Python kwargs, YAML or CLI flags) is invalid; raised before any model is loaded."""

    def __init__(self, problems: list[Problem] | str, *, algo: str | None = None) -> None:
        if isinstance(problems, str):
            problems = [Problem("config", problems)]
        self.problems = problems
        self.algo = algo
        where = f" (algo={algo!r})" if algo else ""
        if len(problems) == 1:
            text = f"Invalid TextRL config{where}: {problems[0]}"
        else:
            text = f"Invalid TextRL config{where}, {len(problems)} problems:\n" + "\n".join(
                f"  - {p}" for p in problems
            )
        super().__init__(text)

    @property
    def fields(self) -> list[str]:
        return [p.field for p in self.problems]


class MigrationError(ConfigError):
    """The config asks for something TRL moved or removed; the message gives the supported replacement."""


class DataError(ValueError):
    """A dataset does not have the shape the algorithm needs; names the column, the row and the format."""

    def __init__(self, message: str, *, column: str | None = None, row: int | None = None) -> None:
        self.column = column
        self.row = row
        super().__init__(message)


class RewardError(ValueError):
    """A reward function broke its contract (wrong length, non-numeric, NaN/inf) or raised."""

    def __init__(self, message: str, *, reward: str) -> None:
        self.reward = reward
        super().__init__(message)


class UnknownTRLFieldWarning(UserWarning):
    """`extra` names a field the snapshot of TRL that TextRL mirrors does not have (a newer TRL's field, or a typo)."""


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `word` (a likely typo), or None: the "did you mean" of every message."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None
