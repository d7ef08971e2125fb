"""Resolve `module:function` reward references from a config: imported from the config's folder or the cwd.

This runs the user's code (the module is imported); it imports only the module named.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from .errors import ConfigError, Problem
from .rewards import compose


def resolve_ref(ref: str, base_dir: Path, field: str = "reward") -> Any:
    """The callable `ref` names ("my_rewards:length_reward"), searched in `base_dir`, then the working directory."""
    module_name, _, attr = ref.partition(":")
    searched = [str(base_dir.resolve()), str(Path.cwd())]
    added = [p for p in searched if p not in sys.path]
    sys.path[:0] = added
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name or (exc.name and module_name.startswith(exc.name + ".")):
            raise ConfigError(
                [
                    Problem(
                        field,
                        f"{ref!r}: no module {module_name!r} in {' or '.join(dict.fromkeys(searched))} or the "
                        "installed packages. Fix: put the module beside the config file, or check the name.",
                    )
                ]
            ) from None
        raise ConfigError(
            [Problem(field, f"{ref!r}: importing {module_name} failed: {exc}. Fix: install what it imports.")]
        ) from exc
    finally:
        for path in added:
            if path in sys.path:
                sys.path.remove(path)
    if not hasattr(module, attr):
        public = sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{ref!r}: module {module_name} has no attribute {attr!r}; its callables: "
                    f"{', '.join(public) or 'none'}. Fix: use one of these.",
                )
            ]
        )
    obj = getattr(module, attr)
    if not callable(obj):
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{ref!r} is a {type(obj).__name__}, not a function. Fix: point at a function taking "
                    "(prompts, completions, **columns).",
                )
            ]
        )
    return obj


def reward_from_section(section: Any, base_dir: Path) -> Any:
    """The reward a trainer takes, from the config's `reward:` value (after validation)."""
    if isinstance(section, str):
        return resolve_ref(section, base_dir)
    if isinstance(section, list):
        return [resolve_ref(ref, base_dir, f"reward[{i}]") for i, ref in enumerate(section)]
    if hasattr(section, "compose"):
        funcs = [resolve_ref(ref, base_dir, f"reward.compose[{i}]") for i, ref in enumerate(section.compose)]
        return compose(*funcs, weights=section.weights)
    model = section.model
    if model.startswith("textrl:"):
        from .models import builtin_model

        return builtin_model(model)
    local = (base_dir / model) if not Path(model).is_absolute() else Path(model)
    return str(local) if local.exists() else model  # TRL loads a sequence classifier from a path or hub id
