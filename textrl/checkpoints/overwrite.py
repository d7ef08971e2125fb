"""What `--overwrite` may replace: only an earlier output of the same kind, never anything the command reads.

`textrl-train --overwrite` deletes `output_dir` and `textrl-merge --overwrite` replaces `--output`. Before either
deletes a folder, `check_replaceable` refuses it when it is, contains or lies inside one of the command's inputs
(model, reward model, adapter, config, data, reward modules, the working directory), when it holds another run,
or when it is not an earlier output of the same kind (a training run has `textrl_manifest.json`, a merged model
`textrl_merge.json`). Each refusal names what would have been destroyed. No torch: the dry run uses this too.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError, Problem
from ..models import builtin_path
from .files import LOCK, MANIFEST, MERGE_RECORD

Kind = Literal["run", "merged model"]


@dataclass(frozen=True)
class Input:
    """Something a command reads: what it is (as the user wrote it) and where it lies."""

    what: str
    path: Path


def inputs(pairs: Iterable[tuple[str, str | Path | None]]) -> list[Input]:
    """The existing paths among (description, path) pairs, resolved; missing or empty ones are left out."""
    found = []
    for what, path in pairs:
        if path is None or str(path) == "":
            continue
        resolved = Path(path).expanduser().resolve()
        if resolved.exists():
            found.append(Input(what, resolved))
    return found


def model_inputs(what: str, name: str, base_dir: Path) -> list[tuple[str, Path | None]]:
    """A model reference as a local folder: built-in, relative to the working directory, or to the config."""
    if name.startswith("textrl:"):
        return [(what, builtin_path(name))]  # rebuilt on demand, but still not output_dir's to delete
    path = Path(name).expanduser()
    return [(what, path)] if path.is_absolute() else [(what, path), (what, base_dir / path)]


def module_file(ref: str, base_dir: Path) -> Path | None:
    """The file (or package folder) of a `module:function` or `file.py:function` reward reference, found without
    importing it."""
    from ..rewards.refs import is_file_ref, ref_path

    if is_file_ref(ref):
        path = ref_path(ref, base_dir)
        return path.resolve() if path.is_file() else None
    top = ref.partition(":")[0].split(".")[0]
    if not top:
        return None
    found = importlib.machinery.PathFinder.find_spec(top, [str(base_dir.resolve()), str(Path.cwd()), *sys.path])
    if found is None:
        return None
    if found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations)))
    return Path(found.origin) if found.origin and os.path.isfile(found.origin) else None


def reward_inputs(section: Any, base_dir: Path) -> list[tuple[str, Path | None]]:
    """The reward modules and reward model a config's `reward:` section reads."""
    if section is None:
        return []
    if isinstance(section, str):
        refs = [section]
    elif isinstance(section, list):
        refs = list(section)
    elif hasattr(section, "compose"):
        refs = list(section.compose)
    else:
        return model_inputs(f"reward.model {section.model}", section.model, base_dir)
    return [(f"reward module of {ref}", module_file(ref, base_dir)) for ref in refs]


def is_kind(folder: Path, kind: Kind) -> bool:
    """Whether `folder` is an earlier output of this kind (the only thing --overwrite replaces)."""
    if kind == "merged model":
        return (folder / MERGE_RECORD).is_file()
    return (folder / MANIFEST).is_file()


def _inside(child: Path, parent: Path) -> bool:
    return parent in child.parents


def _nested_outputs(folder: Path) -> list[Path]:
    """Training runs, adapters and merged models below `folder` (not `folder` itself). A run's own extra adapters
    are not among them: PEFT saves each adapter but "default" into a subfolder named after it (TRL gives a LoRA
    policy passed to DPO or KTO a frozen "ref" copy, saved as `ref/`)."""
    run = (folder / MANIFEST).is_file()
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        here = Path(root)
        if here == folder or here.name.startswith("checkpoint-") or here.parent.name == ".textrl-partial":
            continue  # a run's own checkpoints and staging hold adapter files too
        if MANIFEST in files or MERGE_RECORD in files:
            found.append(here)
            dirs.clear()
        elif "adapter_config.json" in files:
            if not (run and here.parent == folder):
                found.append(here)
            dirs.clear()
    return found


def check_replaceable(target: Path, read: list[Input], *, kind: Kind, field: str, flag: str = "--overwrite") -> None:
    """Refuse to delete `target` unless it is an earlier output of `kind` that holds nothing the command reads."""
    if not target.exists():
        return
    resolved = target.resolve()
    if not resolved.is_dir():
        raise ConfigError(
            [Problem(field, f"{target} is a file, not a folder. Fix: choose a folder for the {kind}, e.g. out/run.")]
        )
    cwd = Path.cwd().resolve()
    if resolved == cwd or _inside(cwd, resolved):
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{flag} would delete {target}, which holds the working directory {cwd}. "
                    "Fix: point it at a folder of its own, e.g. out/run.",
                )
            ]
        )
    for item in read:
        if item.path == resolved or _inside(item.path, resolved):
            raise ConfigError(
                [
                    Problem(
                        field,
                        f"{flag} would delete {target}, which holds {item.what} ({item.path}), an input of "
                        "this command. Fix: write the output to a folder of its own, e.g. out/run.",
                    )
                ]
            )
        if _inside(resolved, item.path):
            raise ConfigError(
                [
                    Problem(
                        field,
                        f"{target} lies inside {item.what} ({item.path}), an input of this command; {flag} "
                        "would delete part of it. Fix: write the output to a folder of its own, e.g. out/run.",
                    )
                ]
            )
    nested = _nested_outputs(resolved)
    if nested:
        shown = ", ".join(str(p) for p in nested[:3]) + (", ..." if len(nested) > 3 else "")
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{flag} would delete {target}, which holds other outputs ({shown}). "
                    "Fix: point it at the one folder to replace, or at a new folder.",
                )
            ]
        )
    if not is_kind(resolved, kind):
        mark = MERGE_RECORD if kind == "merged model" else MANIFEST
        contents = sorted(p.name for p in resolved.iterdir() if p.name != LOCK)
        shown = ", ".join(contents[:5]) + (", ..." if len(contents) > 5 else "")
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{target} is not an earlier {kind} (no {mark}; it holds {shown}), and {flag} replaces "
                    f"only an earlier {kind}. Fix: choose a new folder, or delete {target} yourself if you mean it.",
                )
            ]
        )
