"""Resolve reward references, `module:function` or `path/to/file.py:function`, from a config or `textrl-eval`.

A dotted module is imported from the config's folder (or the working directory); a file path is read relative to
the config's folder (the working directory for textrl-eval). This runs the user's code: it imports only the module
named, and an import that fails is a ConfigError naming the reference, the file and line, and the fix.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from ..errors import ConfigError, Problem
from . import compose

Caller = Literal["config", "eval"]
"""Who wrote the reference: a config (relative to its folder) or `textrl-eval --reward` (to the working directory)."""


def is_file_ref(ref: str) -> bool:
    """Whether `ref` names its module by file path (`rewards/mine.py:fn`) rather than by dotted name."""
    module = ref.rpartition(":")[0]
    return module.endswith(".py") or "/" in module or "\\" in module


def ref_path(ref: str, base_dir: Path) -> Path:
    """The file a file-path reference names, relative to `base_dir` unless absolute."""
    path = Path(ref.rpartition(":")[0]).expanduser()
    return path if path.is_absolute() else base_dir / path


def _file_form_accepted() -> bool:
    """Whether a config accepts the file-path form (its schema's pattern decides); textrl-eval always does."""
    from ..spec.sections import REWARD_REF_PATTERN

    return re.fullmatch(REWARD_REF_PATTERN, "path/to/my_rewards.py:score") is not None


def _forms(caller: Caller) -> str:
    """The reference forms that work for this caller, as a sentence for errors."""
    if caller == "eval":
        return (
            "--reward takes MODULE:FUNCTION, a module importable from the working directory (my_rewards:score for "
            "./my_rewards.py, pkg.rewards:score for ./pkg/rewards.py), or FILE.py:FUNCTION, a file path relative "
            "to the working directory (path/to/my_rewards.py:score)"
        )
    forms = (
        "A reward reference is module:function, a module beside the config file or in the working directory "
        "(my_rewards:score for my_rewards.py beside the config)"
    )
    if _file_form_accepted():
        forms += ", or path/to/file.py:function, a file path relative to the config's folder"
    return forms


def _fix_missing(caller: Caller) -> str:
    if caller == "eval" or _file_form_accepted():
        return "Fix: check the name, or give the file's path."
    return "Fix: check the name, or put the module beside the config file."


def _problem(field: str, ref: str, text: str) -> ConfigError:
    return ConfigError([Problem(field, f"{ref!r}: {text}")])


def _import_failure(ref: str, field: str, exc: BaseException, module: str) -> ConfigError:
    """The module ran and raised (or does not parse): where, what, and the fix, instead of a traceback."""
    if isinstance(exc, SyntaxError):
        line = f": {exc.text.strip()!r}" if exc.text and exc.text.strip() else ""
        return _problem(
            field,
            ref,
            f"importing {module} failed: {type(exc).__name__} at {exc.filename}, line {exc.lineno}: {exc.msg}{line}. "
            f"Fix: correct that line (python -m py_compile {exc.filename} checks the file).",
        )
    machinery = (str(Path(importlib.__file__).parent) + os.sep, __file__)
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(("<frozen", *machinery))  # importlib's frames and ours: not the user's code
    ]
    # the innermost line of the file that was being imported: the line of the user's own module to look at
    mine = [f for f in frames if f.filename == frames[0].filename] if frames else []
    where = f" at {mine[-1].filename}, line {mine[-1].lineno} ({(mine[-1].line or '').strip()!r})" if mine else ""
    fix = "install what it imports" if isinstance(exc, ImportError) else "make the module import without errors"
    shown = f" (python {frames[0].filename} shows the whole traceback)" if frames else ""
    return _problem(field, ref, f"importing {module} failed{where}: {type(exc).__name__}: {exc}. Fix: {fix}{shown}.")


def _load_file(ref: str, base_dir: Path, field: str, caller: Caller) -> ModuleType:
    path = ref_path(ref, base_dir)
    if not path.is_file():
        written = ref.rpartition(":")[0]
        relative = "the working directory" if caller == "eval" else "the config's folder"
        where = "" if Path(written).expanduser().is_absolute() else f" in {base_dir.resolve()} ({relative})"
        what = "is a folder, not a .py file" if path.is_dir() else "does not exist"
        raise _problem(field, ref, f"{written}{where} {what}. {_forms(caller)}. Fix: check the path.")
    path = path.resolve()
    # a name of its own per file: a file called json.py or test.py must not stand in for the standard module
    stem, digest = re.sub(r"\W", "_", path.stem), hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"textrl_reward_file_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]  # imported already (dry run then run, two functions of one file): run it once
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _problem(field, ref, f"{path} cannot be imported as Python. Fix: point at a .py file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickle look a module up by name while it runs
    added = str(path.parent) not in sys.path
    if added:  # so the file can import its neighbours, as it could when run as a script
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[name]
        raise _import_failure(ref, field, exc, str(path)) from None
    finally:
        if added and str(path.parent) in sys.path:
            sys.path.remove(str(path.parent))
    return module


def _import(ref: str, base_dir: Path, field: str, caller: Caller) -> ModuleType:
    module_name = ref.rpartition(":")[0]
    searched = list(dict.fromkeys([str(base_dir.resolve()), str(Path.cwd())]))
    added = [p for p in searched if p not in sys.path]
    sys.path[:0] = added
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name or (exc.name and module_name.startswith(exc.name + ".")):
            raise _problem(
                field,
                ref,
                f"no module {module_name!r} in {' or '.join(searched)} or the installed packages. "
                f"{_forms(caller)}. {_fix_missing(caller)}",
            ) from None
        raise _import_failure(ref, field, exc, module_name) from None
    except (Exception, SystemExit) as exc:  # a syntax error or an exception while the module runs
        raise _import_failure(ref, field, exc, module_name) from None
    finally:
        for path in added:
            if path in sys.path:
                sys.path.remove(path)


def resolve_ref(ref: str, base_dir: Path, field: str = "reward", *, caller: Caller = "config") -> Any:
    """The callable `ref` names ("my_rewards:length_reward" or "rewards/mine.py:length_reward"), found from
    `base_dir` (the config's folder; the working directory for textrl-eval)."""
    module_part, colon, attr = ref.rpartition(":")
    if not colon or not module_part or not attr:
        raise _problem(field, ref, f"is not a reward reference: {_forms(caller)}. Fix: write it in one of these forms.")
    module = _load_file(ref, base_dir, field, caller) if is_file_ref(ref) else _import(ref, base_dir, field, caller)
    if not hasattr(module, attr):
        public = sorted(n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n)))
        raise _problem(
            field,
            ref,
            f"module {module_part} has no attribute {attr!r}; its callables: {', '.join(public) or 'none'}. Fix: use "
            "one of these.",
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
        from ..models import builtin_model

        return builtin_model(model)
    local = (base_dir / model) if not Path(model).is_absolute() else Path(model)
    return str(local) if local.exists() else model  # TRL loads a sequence classifier from a path or hub id
