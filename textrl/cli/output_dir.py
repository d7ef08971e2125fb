"""A command-line run's output_dir against what the run reads: it may not be or lie inside an input (a dataset
folder that the run's files would break), and `--overwrite` may delete nothing the run reads
(textrl.checkpoints.overwrite).
What a folder holds and what `--resume` continues from is textrl.checkpoints.run_folder's, shared with the Python API.

Shared by `textrl-train` and its `--dry-run`, which make the same checks. Imports no pydantic and no torch at
import time: `textrl-train --help` imports this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, Problem
from ..validation.view import online, options

if TYPE_CHECKING:
    from ..checkpoints.overwrite import Input
    from ..run.assemble import Assembled


def _dataset_inputs(key: str, section: Any, base_dir: Path) -> list[tuple[str, Path | str | None]]:
    """The local files and folders a dataset section reads: its path, or with data_files the files they match
    (load_dataset then reads only those, not the whole folder)."""
    pairs: list[tuple[str, Path | str | None]] = []
    for i, source in enumerate(section.mixture or [section]):
        if not source.path:
            continue
        what = f"{key}.path {source.path}" if section.mixture is None else f"{key}.mixture[{i}].path {source.path}"
        path = Path(source.path)
        path = path if path.is_absolute() else base_dir / path
        files = source.data_files
        patterns = [files] if isinstance(files, str) else list(files or [])
        if isinstance(files, dict):
            patterns = [p for value in files.values() for p in ([value] if isinstance(value, str) else value)]
        if patterns and path.is_dir():
            pairs += [(f"{what} (data_files)", match) for pattern in patterns for match in path.glob(pattern)]
        else:
            pairs.append((what, path))
    return pairs


def run_inputs(run: Assembled) -> list[Input]:
    """Everything a run reads from disk: the config file, local data, the model, the reward model and modules."""
    from ..checkpoints.overwrite import inputs, model_inputs, reward_inputs

    cfg = run.config
    pairs: list[tuple[str, Path | str | None]] = [("the config file", run.path)]
    typed = options(cfg)
    for key, section in (("dataset", typed.dataset), ("eval_dataset", typed.eval_dataset)):
        if section is not None:
            pairs += _dataset_inputs(key, section, run.base_dir)
    model = typed.model
    if model is not None:
        pairs += model_inputs(f"model.name {model.name}", model.name, run.base_dir)
    rollout = online(cfg)
    pairs += reward_inputs(rollout.reward if rollout is not None else None, run.base_dir)
    return inputs(pairs)


def check_outside_inputs(run: Assembled, output_dir: Path) -> None:
    """Refuse an output_dir that is something the run reads, or lies inside a dataset folder: the run's files would
    become part of that dataset (datasets reads every data file in a folder, so it would no longer load)."""
    target = output_dir.expanduser().resolve()
    for item in run_inputs(run):
        inside = item.what.startswith(("dataset.", "eval_dataset.")) and item.path in target.parents
        if target == item.path or inside:
            where = "is" if target == item.path else "lies inside"
            raise ConfigError(
                [
                    Problem(
                        "output_dir",
                        f"{output_dir} {where} {item.what} ({item.path}), which this run reads; the run's checkpoints "
                        "and files would land in it. Fix: write the run to a folder of its own, e.g. out/run.",
                    )
                ]
            )


def check_overwrite(run: Assembled, output_dir: Path) -> None:
    """Refuse `--overwrite` unless output_dir is an earlier run holding nothing this run reads."""
    from ..checkpoints.overwrite import check_replaceable

    check_replaceable(output_dir, run_inputs(run), kind="run", field="output_dir")


def check_output_target(run: Assembled, *, overwrite: bool) -> None:
    """Whether the run may make (or, with --overwrite, replace) its output_dir at all: writable, not something the
    run reads, and not inside a dataset folder; with --overwrite, also nothing the deletion would take."""
    from ..checkpoints.run_folder import check_writable, contents

    output_dir = Path(options(run.config).output_dir)
    check_writable(output_dir)
    if overwrite and contents(output_dir):
        check_overwrite(run, output_dir)  # says what the deletion would destroy, which covers the rule below
    else:
        check_outside_inputs(run, output_dir)


def prepare_output_dir(run: Assembled, *, resume: bool, overwrite: bool, resume_changed: bool = False) -> Path | None:
    """The checks a run makes of its output_dir before anything loads, shared with --dry-run: not held by another
    run, and empty, resumable or replaceable. Returns the checkpoint to resume."""
    from ..checkpoints.lock import check_free
    from ..checkpoints.run_folder import check_output_dir

    output_dir = Path(options(run.config).output_dir)
    check_free(output_dir)
    return check_output_dir(
        output_dir, resume=resume, overwrite=overwrite, algo=run.config.algo, resume_changed=resume_changed
    )
