"""Checkpoints that are complete or absent: TRL writes each `checkpoint-N` into a staging folder, TextRL renames it.

transformers writes `output_dir/checkpoint-N` in place, file by file, so a kill during a save leaves a folder
that looks like a checkpoint and is not one. `AtomicCheckpoints` is mixed in front of the TRL trainer class
(textrl/trainers/base.py): while TRL saves, `_get_output_dir` points into `output_dir/.textrl-partial/`, and only
once every process has finished writing does the main process rename the folder into place (one `os.replace`,
atomic on one file system), then apply `save_total_limit` as transformers would. A run killed mid-save leaves
only the staging folder, which the next run removes and reports (`discard_partial`).

It also keeps a resumed run from training past `max_steps`: transformers, resumed from a checkpoint at `max_steps`
(the last one of a run stopped by a signal at its last step, or of a finished run), trains one step more and saves
`checkpoint-<max_steps + 1>` whenever `max_steps` is not a whole number of epochs.

This module imports nothing heavy at import time: the CLI uses `discard_partial` before torch is loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

STAGING = ".textrl-partial"


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` all or nothing: into a temporary file beside it that no other writer shares (its name
    carries this process and a random part), then renamed into place (one `os.replace`); removed if writing fails.
    Opened by name, so the file gets the umask's permissions (mkstemp would make it 0600)."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with partial.open("x", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_json(path: str | os.PathLike[str], payload: Any, *, indent: int | None = None) -> None:
    """`payload` as JSON (one line, or indented by `indent`), written all or nothing (`write_text`)."""
    write_text(path, json.dumps(payload, indent=indent) + "\n")


@contextmanager
def staged_folder(target: str | os.PathLike[str], *, finished: Callable[[], bool] | None = None) -> Iterator[Path]:
    """Build a folder in a private sibling of `target` (the body writes into the path it gets), then rename it into
    place: processes racing to build `target` never see half of it, and a failure or interrupt leaves nothing
    behind. `finished`: whether another process completed `target` meanwhile; then this build is dropped and the
    other kept. Whatever `target` held before is replaced."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    staging.mkdir()
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if finished is not None and finished():
        shutil.rmtree(staging, ignore_errors=True)
        return
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    staging.rename(target)


def discard_partial(output_dir: str | os.PathLike[str], *, prog: str = "textrl") -> list[str]:
    """Remove what a run killed while saving left in `output_dir/.textrl-partial`; returns the names removed."""
    staging = Path(output_dir) / STAGING
    if not staging.is_dir():
        return []
    names = sorted(p.name for p in staging.iterdir())
    for name in names:
        print(
            f"{prog}: removing {staging / name}: a save that was cut off (the run was killed while writing it); "
            "the checkpoints beside it are complete",
            file=sys.stderr,
        )
    shutil.rmtree(staging, ignore_errors=True)  # several ranks of a resumed run may clean up at once
    return names


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # some file systems do not open directories
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class AtomicCheckpoints:
    """Mixin placed before a transformers `Trainer` subclass in the MRO (by TextRLTrainer._trainer_class)."""

    _textrl_staging = False

    def _get_output_dir(self, trial: Any) -> str:
        run_dir: str = super()._get_output_dir(trial)  # type: ignore[misc]
        return os.path.join(run_dir, STAGING) if self._textrl_staging else run_dir

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        trainer: Any = self
        run_dir = self._get_output_dir(trial)
        name = f"checkpoint-{trainer.state.global_step}"
        staging_root = os.path.join(run_dir, STAGING)
        staged, final = os.path.join(staging_root, name), os.path.join(run_dir, name)
        self._textrl_staging = True
        try:
            super()._save_checkpoint(model, trial)  # type: ignore[misc]
        finally:
            self._textrl_staging = False
        # transformers may have pointed best_model_checkpoint at the staged folder, on every rank
        best = trainer.state.best_model_checkpoint
        if best and best.startswith(staging_root):
            trainer.state.best_model_checkpoint = os.path.join(run_dir, os.path.basename(best))
        trainer.accelerator.wait_for_everyone()  # every rank has written its RNG state into `staged`
        if trainer.args.should_save and os.path.isdir(staged):
            self._publish(staged, final, run_dir)
        trainer.accelerator.wait_for_everyone()
        if trainer.args.push_to_hub:
            super()._push_from_checkpoint(final)  # type: ignore[misc]

    def get_batch_samples(self, epoch_iterator: Any, num_batches: int, device: Any) -> tuple[list[Any], Any]:
        """No batch once `global_step` has reached `max_steps`, so the step loop ends before training one more.

        transformers checks `max_steps` only after a step (`DefaultFlowCallback.on_step_end`); a run resumed from a
        checkpoint at `max_steps` would otherwise train step `max_steps + 1` and save it. With no batch, the loop
        trains nothing, sees `should_training_stop` and ends as a finished run does (the checkpoint's weights).
        """
        trainer: Any = self
        if 0 < trainer.state.max_steps <= trainer.state.global_step:
            trainer.control.should_training_stop = True
            return [], None
        batches: tuple[list[Any], Any] = super().get_batch_samples(epoch_iterator, num_batches, device)  # type: ignore[misc]
        return batches

    def _push_from_checkpoint(self, checkpoint_folder: str) -> None:
        """While staging, pushing waits: the folder is renamed right after (pushed from its final place)."""
        if not self._textrl_staging:
            super()._push_from_checkpoint(checkpoint_folder)  # type: ignore[misc]

    def _publish(self, staged: str, final: str, run_dir: str) -> None:
        from transformers.trainer_utils import rotate_checkpoints

        trainer: Any = self
        state = trainer.state
        staging_root = os.path.join(run_dir, STAGING)
        state.save_to_json(os.path.join(staged, "trainer_state.json"))  # with the final best_model_checkpoint
        if os.path.isdir(final):  # the same step saved twice: keep the old one until the new one is in place
            old = os.path.join(staging_root, os.path.basename(final) + ".old")
            os.replace(final, old)
            os.replace(staged, final)
            shutil.rmtree(old)
        else:
            os.replace(staged, final)
        _fsync_dir(run_dir)
        if not os.listdir(staging_root):
            os.rmdir(staging_root)
        rotate_checkpoints(
            output_dir=run_dir,
            save_total_limit=trainer.args.save_total_limit,
            best_model_checkpoint=state.best_model_checkpoint,
            use_mtime=True,
        )
