"""A run's output_dir before the run starts: may a run write there, what does `--resume` continue from, and what
does a start over delete.

One rule for the CLI and the Python API: a non-empty output_dir needs `--resume` or `--overwrite` (in Python,
`train(resume_from_checkpoint=True)` or `train(overwrite=True)`); nothing is replaced silently. The exception is a
run that stopped before it saved anything (its folder holds only the manifest TextRL writes at the start): a plain
rerun replaces it, and says so. Imports no pydantic and no torch at import time (`textrl-train --help` imports it).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, Problem
from .files import CHECKPOINT, LOCK, MANIFEST, TRAINER_STATE


@dataclass(frozen=True)
class Wording:
    """How the fixes are spelled for the caller: flags for textrl-train, arguments for `trainer.train()`."""

    field: str
    resume: str
    overwrite: str
    resume_changed: str


CLI = Wording("output_dir", "--resume", "--overwrite", "--resume-changed")
PYTHON = Wording("output_dir", "train(resume_from_checkpoint=True)", "train(overwrite=True)", "resume_changed=True")

_START_FILES = re.compile(rf"^({re.escape(MANIFEST)}|{re.escape(LOCK)}|\.textrl-partial|stall-rank\d+\.txt|runs)$")
"""What a run writes before its first save: the manifest, the lock, an empty staging folder, stall reports and
tracker logs (TensorBoard's runs/)."""


def contents(output_dir: Path, ignore: frozenset[str] = frozenset()) -> list[str]:
    """The names in output_dir, less the lock file (held by a running run, or left by a killed one) and `ignore`."""
    if not output_dir.is_dir():
        return []
    return sorted(p.name for p in output_dir.iterdir() if p.name != LOCK and p.name not in ignore)


def stopped_before_saving(output_dir: Path, ignore: frozenset[str] = frozenset()) -> bool:
    """Whether output_dir holds a run that stopped before it saved a checkpoint or a model (only start files)."""
    names = contents(output_dir, ignore)
    return MANIFEST in names and all(_START_FILES.match(n) for n in names)


def clear(output_dir: Path, keep: frozenset[str] = frozenset()) -> None:
    """Delete what output_dir holds, but not the folder, its lock (the run that clears it holds the lock: a new
    lock file would let a second run in) or `keep`."""
    if int(os.environ.get("RANK", "0")) != 0 or not output_dir.is_dir():
        return
    for item in output_dir.iterdir():
        if item.name == LOCK or item.name in keep:
            continue
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item)
        else:
            item.unlink()


def check_writable(output_dir: Path, field: str = "output_dir") -> None:
    """Refuse an output_dir that cannot be created or written (a parent that is a file, a read-only folder), before
    anything is loaded. Tries a real write (and removes it): permission bits do not tell, e.g. for root or on a
    read-only mount."""
    try:
        parent = next(p for p in [output_dir, *output_dir.parents] if p.exists() or p.is_symlink())
        is_dir = parent.is_dir()
    except OSError as exc:  # a folder on the way that this user may not enter
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{output_dir} cannot be reached ({exc.strerror or exc}: {exc.filename}). Fix: choose a folder "
                    "you can write, e.g. under your home or the working directory.",
                )
            ]
        ) from None
    if not is_dir:
        what = "is a file" if parent == output_dir else f"lies under {parent}, which is a file (or a broken link)"
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{output_dir} {what}; output_dir is the folder for checkpoints, the model and the manifest. Fix: "
                    "choose a folder, e.g. out/run.",
                )
            ]
        )
    try:
        handle, probe = tempfile.mkstemp(prefix=".textrl-write-test-", dir=parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{output_dir} cannot be written: {parent} refuses new files ({exc.strerror or exc}). Fix: choose "
                    "a folder you can write, e.g. under your home or the working directory.",
                )
            ]
        ) from None


def last_checkpoint(output_dir: Path) -> Path | None:
    """The highest-numbered complete `checkpoint-N` folder, or None.

    transformers writes trainer_state.json last, so a folder without it was cut off mid-save: it is skipped,
    and said so.
    """
    if not output_dir.is_dir():
        return None
    if os.environ.get("RANK", "0") == "0":  # one process of a multi-GPU launch cleans up
        from .atomic import discard_partial  # not at import time: --help stays free of pydantic

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


_WEIGHTS = re.compile(r"^(model|adapter_model|pytorch_model)(-\d+-of-\d+)?\.(safetensors|bin)$")


def checkpoint_gaps(checkpoint: Path) -> tuple[list[str], list[str]]:
    """(what makes `checkpoint` unresumable, what resuming it would silently lose). transformers resumes a checkpoint
    without its optimizer, scheduler or random state without a word: the optimizer's moments start from zero, the
    learning-rate schedule from its first step, the data order and sampling from another random state."""
    names = {p.name for p in checkpoint.iterdir()}
    deepspeed = any(n.startswith("global_step") for n in names)  # DeepSpeed keeps weights and optimizer there
    fatal = []
    if not deepspeed and not any(_WEIGHTS.match(n) for n in names):
        fatal.append("no model weights (model.safetensors, its shards, or adapter_model.safetensors for a LoRA run)")
    lost = []
    if not deepspeed and not (
        {"optimizer.pt", "optimizer.bin"} & names or any(n.startswith("optimizer") for n in names)
    ):
        lost.append("optimizer.pt is missing: the optimizer's moments would start again from zero")
    if "scheduler.pt" not in names:
        lost.append("scheduler.pt is missing: the learning-rate schedule would start again from its first step")
    if not any(n == "rng_state.pth" or re.match(r"^rng_state_\d+\.pth$", n) for n in names):
        lost.append("rng_state.pth is missing: data order and sampling would continue from another random state")
    return fatal, lost


def check_output_dir(
    output_dir: Path,
    *,
    resume: bool,
    overwrite: bool,
    algo: str | None = None,
    resume_changed: bool = False,
    wording: Wording = CLI,
    ignore: frozenset[str] = frozenset(),
) -> Path | None:
    """The checkpoint to resume from, or None; refuses to clobber a non-empty output_dir silently and to resume a
    checkpoint that is not whole (unless `resume_changed`, which names each loss). `ignore`: names this run has
    made already (TRL creates some folders when its trainer is built)."""
    field = wording.field
    if resume and overwrite:
        raise ConfigError(
            [
                Problem(
                    wording.resume, f"{wording.resume} and {wording.overwrite} contradict each other. Fix: choose one."
                )
            ]
        )
    if output_dir.exists() and not output_dir.is_dir():
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{output_dir} is a file; output_dir is the folder for checkpoints, the model and the manifest. "
                    "Fix: choose a folder, e.g. out/run.",
                )
            ]
        )
    names = contents(output_dir, ignore)
    if resume:
        checkpoint = last_checkpoint(output_dir)
        if checkpoint is None:
            why = (
                " (it holds a run that stopped before its first checkpoint; a rerun without "
                f"{wording.resume} replaces it)"
                if stopped_before_saving(output_dir, ignore)
                else ""
            )
            raise ConfigError(
                [
                    Problem(
                        wording.resume,
                        f"found no complete checkpoint-N folder in {output_dir}{why}. Fix: drop {wording.resume} to "
                        "start a new run, or point output_dir at the earlier run.",
                    )
                ]
            )
        if algo is not None:
            from .manifest import check_same_algorithm

            check_same_algorithm(output_dir, algo)
        check_checkpoint(checkpoint, resume_changed=resume_changed, wording=wording)
        return checkpoint
    if names and not overwrite and not stopped_before_saving(output_dir, ignore):
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise ConfigError(
            [
                Problem(
                    field,
                    f"{output_dir} is not empty ({shown}). Fix: {wording.resume} to continue "
                    f"from its last checkpoint, {wording.overwrite} to delete it and start over, or another "
                    "output_dir.",
                )
            ]
        )
    return None


def check_checkpoint(checkpoint: Path, *, resume_changed: bool, wording: Wording = CLI) -> None:
    """Refuse a checkpoint without weights; one without optimizer, scheduler or random state only with
    `resume_changed`, which says what is lost."""
    fatal, lost = checkpoint_gaps(checkpoint)
    if fatal:
        raise ConfigError(
            [
                Problem(
                    wording.resume,
                    f"{checkpoint} has {'; '.join(fatal)}, so there is nothing to resume. Fix: resume from an "
                    "earlier checkpoint (delete this folder), or start a new run.",
                )
            ]
        )
    if lost and resume_changed:
        print(
            f"textrl: resuming {checkpoint.name} without all of its state ({wording.resume_changed}):", file=sys.stderr
        )
        print("\n".join(f"  - {line}" for line in lost), file=sys.stderr)
    elif lost:
        listed = "; ".join(lost)
        raise ConfigError(
            [
                Problem(
                    wording.resume,
                    f"{checkpoint} is not whole: {listed}. Fix: resume from an earlier whole checkpoint (delete this "
                    f"folder), or pass {wording.resume_changed} to continue with that loss.",
                )
            ]
        )


def note_replaced(output_dir: Path) -> None:
    """Say that a plain run replaces the files of a run that stopped before it saved anything."""
    print(
        f"textrl: {output_dir} holds a run that stopped before its first checkpoint "
        f"({', '.join(contents(output_dir))}); replacing it",
        file=sys.stderr,
    )
