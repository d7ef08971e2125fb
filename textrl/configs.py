"""The typed config classes, one per algorithm, for IDEs and type checkers: `GrpoConfig(output_dir=..., ...)`.

Each is what `TextRLConfig(algo=...)` returns; they are generated from the spec (see generated/configs/) and imported
on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textrl.generated import configs as _generated
from textrl.generated.configs import __all__ as __all__

if TYPE_CHECKING:
    from textrl.generated.configs import *  # noqa: F403


def __getattr__(name: str) -> Any:
    return getattr(_generated, name)
