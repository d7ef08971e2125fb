"""Everything the generated code (`generated/`, written by `python -m textrl.codegen`) imports from TextRL.

Generated modules import from the spec (`textrl.spec.*`), from each other, and from this module: nothing else of
the runtime. Keeping that surface here makes the one-way flow visible (spec -> generated -> runtime) and tells a
runtime change which names the generated code depends on.

- `TextRLConfig`: the base class of every generated config class (`generated/configs/<algo>.py`).
- `finish`, `resolve_bf16`, `as_tuple`: what a generated TRL builder (`generated/trl_builders/<algo>.py`) uses to
  turn its validated config into TRL's config object.
- `Flag`: one command-line flag of `generated/cli_flags.py`.
- `lazy_attribute`: how `generated/configs/__init__.py` imports each config class on first use.

The runtime reaches generated code only at the dispatch points that tests/unit/test_architecture.py names
(DISPATCH): `textrl.validation.config` (the config class for `algo`) and `textrl.trl_support.build.build_trl_config`
(the TRL builder for `algo`), each by algorithm name through importlib so that importing TextRL does not import
every algorithm; `textrl.cli.train` (the flag table); and `textrl.configs` (the typed classes' public address).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .flags import Flag
from .lazy import lazy_attribute

if TYPE_CHECKING:
    from ..trl_support.build import as_tuple, finish, resolve_bf16
    from .config import TextRLConfig

__all__ = ["Flag", "TextRLConfig", "as_tuple", "finish", "lazy_attribute", "resolve_bf16"]
_LAZY = {
    "TextRLConfig": ".config",
    "as_tuple": "..trl_support.build",
    "finish": "..trl_support.build",
    "resolve_bf16": "..trl_support.build",
}


def __getattr__(name: str) -> Any:
    """Imported on first use: `--help` reads generated/cli_flags.py (Flag only) without loading pydantic."""
    return lazy_attribute(__name__, _LAZY, name, __package__)
