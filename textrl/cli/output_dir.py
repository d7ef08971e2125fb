"""A command-line run's output_dir: the checkpoint `--resume` continues from, the refusal to write into a
non-empty folder, and what `--overwrite` may delete (nothing the run reads; see textrl.overwrite).

Shared by `textrl-train` and its `--dry-run`, which make the same checks. Imports no pydantic and no torch at
import time: `textrl-train --help` imports this module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, Problem
from ..run_files import CHECKPOINT, TRAINER_STATE

if TYPE_CHECKING:
    from ..overwrite import Input
    from .assemble import Assembled


def last_checkpoint(output_dir: Path) -> Path | None:
    """The highest-numbered complete `checkpoint-N` folder, or None.

    transformers writes trainer_state.json last, so a folder without it was cut off mid-save: it is skipped,
    and said so.
    """
    if not output_dir.is_dir():
        return None
    if os.environ.get("RANK", "0") == "0":  # one process of a multi-GPU launch cleans up
        from ..trainers.atomic import discard_partial  # not at import time: --help stays free of pydantic

        discard_partial(output_dir, prog="textrl-train")
    found = sorted((int(m.group(1)), p) for p in output_dir.iterdir() if p.is_dir() and (m := CHECKPOINT.match(p.name)))
    complete = [(n, p) for n, p in found if (p / TRAINER_STATE).is_file()]
    newest = max(complete)[1] if complete else None
    for n, p in found:
        if (p / TRAINER_STATE).is_file() or (complete and n < complete[-1][0]):
            continue
        print(
            f"textrl-train: ignoring {p.name}: it has no trainer_state.json, so its save was cut off", file=sys.stderr
        )
    return newest


def check_output_dir(output_dir: Path, *, resume: bool, overwrite: bool, algo: str | None = None) -> Path | None:
    """The checkpoint to resume from, or None; refuses to clobber a non-empty output_dir silently."""
    if resume and overwrite:
        raise ConfigError([Problem("--resume", "--resume and --overwrite contradict each other. Fix: choose one.")])
    if output_dir.exists() and not output_dir.is_dir():
        raise ConfigError(
            [
                Problem(
                    "output_dir",
                    f"{output_dir} is a file; output_dir is the folder for checkpoints, the model and the manifest. "
                    "Fix: choose a folder, e.g. out/run.",
                )
            ]
        )
    contents = sorted(p.name for p in output_dir.iterdir()) if output_dir.is_dir() else []
    if resume:
        checkpoint = last_checkpoint(output_dir)
        if checkpoint is None:
            raise ConfigError(
                [
                    Problem(
                        "--resume",
                        f"found no complete checkpoint-N folder in {output_dir}. Fix: "
                        "drop --resume to start a new run, or point output_dir at the earlier run.",
                    )
                ]
            )
        if algo is not None:
            from ..trainers.manifest import check_same_algorithm

            check_same_algorithm(output_dir, algo)
        return checkpoint
    if contents and not overwrite:
        shown = ", ".join(contents[:5]) + (", ..." if len(contents) > 5 else "")
        raise ConfigError(
            [
                Problem(
                    "output_dir",
                    f"{output_dir} is not empty ({shown}). Fix: --resume to continue "
                    "from its last checkpoint, --overwrite to delete it and start over, or another "
                    "output_dir.",
                )
            ]
        )
    return None


def run_inputs(run: Assembled) -> list[Input]:
    """Everything a run reads from disk: the config file, local data, the model, the reward model and modules."""
    from ..overwrite import inputs, model_inputs, reward_inputs

    cfg = run.config
    pairs: list[tuple[str, Path | str | None]] = [("the config file", run.path)]
    for key in ("dataset", "eval_dataset"):
        section = getattr(cfg, key, None)
        if section is not None and section.path:
            pairs.append((f"{key}.path {section.path}", run.base_dir / section.path))
    model = getattr(cfg, "model", None)
    if model is not None:
        pairs += model_inputs(f"model.name {model.name}", model.name, run.base_dir)
    pairs += reward_inputs(getattr(cfg, "reward", None), run.base_dir)
    return inputs(pairs)


def check_overwrite(run: Assembled, output_dir: Path) -> None:
    """Refuse `--overwrite` unless output_dir is an earlier run holding nothing this run reads."""
    from ..overwrite import check_replaceable

    check_replaceable(output_dir, run_inputs(run), kind="run", field="output_dir")
