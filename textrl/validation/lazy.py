"""Names a package exports without importing them: the one implementation behind the lazy `__getattr__` of
`textrl`, `textrl.trainers`, the generated config classes and `generated_support` (importing TextRL stays cheap:
torch, transformers and trl load with the first name that needs them)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def lazy_attribute(module: str, table: Mapping[str, str], name: str, package: str | None = None) -> Any:
    """`name`, taken from the module that `table[name]` names (absolute, or relative to `package`, the importing
    module's `__package__`) and imported on first use; any other name is an AttributeError of `module` (the
    importing module's `__name__`)."""
    if name not in table:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return getattr(importlib.import_module(table[name], package), name)
