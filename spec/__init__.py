"""The TextRL spec: the single source of truth for every algorithm, option, loss type and data format.

Pydantic and the standard library only. Code generation (`python -m textrl.codegen`) renders it into
typed config classes, TRL builders, CLI flags, docs and the JSON Schema.
"""

from .algorithms import ALGORITHMS
from .defaults import DIFFERENT_FROM_TRL
from .formats import FORMATS, FORMATS_BY_NAME
from .mirrored import NOT_OFFERED, SNAPSHOT, trl_field_names
from .model import (
    REQUIRED,
    Algorithm,
    DataFormat,
    Family,
    Option,
    Paper,
    Reference,
    Removed,
    Renamed,
    Rule,
    TrlDifference,
)
from .removed import REMOVED, RENAMED

BY_NAME: dict[str, Algorithm] = {a.name: a for a in ALGORITHMS} | {x: a for a in ALGORITHMS for x in a.aliases}
REMOVED_BY_NAME: dict[str, Removed] = {r.name: r for r in REMOVED}
RENAMED_BY_KEY: dict[str, Renamed] = {r.old: r for r in RENAMED}


def name_key(name: str) -> str:
    """An algorithm name as it is matched: case, '-', '_' and spaces ignored, '++' read as 'pp' (so REINFORCE++,
    reinforce_pp, Robust-DPO, robust_dpo, OnlineDPO and online_dpo each find their entry)."""
    return "".join(ch for ch in name.strip().lower().replace("++", "pp") if ch not in "-_ ")


_BY_KEY: dict[str, Algorithm | Removed] = {name_key(n): r for n, r in REMOVED_BY_NAME.items()} | {
    name_key(n): a for n, a in BY_NAME.items()
}


def find_algorithm(name: str) -> Algorithm | Removed | None:
    """The algorithm (or removed algorithm) a name means, spelled as the user likes; None when none matches."""
    return _BY_KEY.get(name_key(name))


def algorithms_with_option(name: str) -> tuple[str, ...]:
    """The algorithms that accept an option, in spec order."""
    return tuple(a.name for a in ALGORITHMS if name in a.option_names)


def all_option_names() -> tuple[str, ...]:
    """Every option name of any algorithm, each once, in spec order."""
    return tuple(dict.fromkeys(o.name for a in ALGORITHMS for o in a.options))


__all__ = [
    "ALGORITHMS", "BY_NAME", "DIFFERENT_FROM_TRL", "FORMATS", "FORMATS_BY_NAME", "NOT_OFFERED", "REMOVED",
    "REMOVED_BY_NAME", "RENAMED", "RENAMED_BY_KEY", "REQUIRED", "SNAPSHOT", "Algorithm", "DataFormat", "Family",
    "Option", "Paper", "Reference", "Removed", "Renamed", "Rule", "TrlDifference", "algorithms_with_option",
    "all_option_names", "find_algorithm", "name_key", "trl_field_names",
]  # fmt: skip
