"""The row type of the generated CLI flag table (`textrl.generated.cli_flags.FLAGS`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    """One `textrl-train` flag, generated from a spec option."""

    dest: str
    """The option name, e.g. learning_rate."""
    flag: str
    """The flag, e.g. --learning-rate; booleans also get --no-<name>."""
    metavar: str
    """How the value looks in --help, e.g. FLOAT; empty for booleans."""
    algos: tuple[str, ...]
    """The algorithms that accept the option."""
    help: str
    """The spec's description (per algorithm where they differ)."""
    group: str = ""
    """The spec's group of the option (Run, Optimisation, ...): its section of --help."""

    @property
    def is_bool(self) -> bool:
        return not self.metavar
