"""The reference cache: the reference model's log-probabilities of a dataset, computed once and reused by every
later run whose reference weights, tokenized rows and reference-pass settings match (see `spec/reference_cache.py`).

TRL does the computing: with `precompute_ref_log_probs=True` its DPO and KTO trainers run the reference over the
dataset once, batched, with a progress bar (`_precompute_ref_logps`), and read the log-probabilities from the batch
afterwards; with no `ref_model` they use the policy's initial weights, so no reference copy is ever loaded. TRL
keeps the result only in the datasets library's cache of that process (a temporary folder for in-memory data).
TextRL adds the key and the persistent store: `with_reference_cache` wraps `_precompute_ref_logps` so that a stored
result is returned without running the reference, and a computed one is stored, atomically, for the next run.

Layout of the cache folder:

    entries/<key>/data/       the log-prob columns, one row per dataset row (datasets' save_to_disk)
    entries/<key>/meta.json   what the key covers (written before the folder is renamed into place)
    forecast/<forecast>.json  the entry keys a run with these options, model files and rows used (the dry run's
                              forecast, checked before anything loads)
    weights/<digest>.json     for a LoRA policy whose fresh adapter adds nothing: the digest of its base weights,
                              under TRL's digest of the whole model (see `reference_weights`)

Whether a run uses the cache, and the forecast, are decided in `plan` (through `decide_for_run`, once, before anything
loads); the exact key of an entry is taken in `key`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .key import exact_key
from .plan import Decision

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig


def load_entry(folder: Path, key: str, rows: int) -> Any:
    """The stored columns for `key` (a datasets.Dataset of `rows` rows), or None when absent or unreadable."""
    entry = folder / "entries" / key
    if not (entry / "meta.json").is_file():
        return None
    from datasets import load_from_disk

    try:
        columns = load_from_disk(str(entry / "data"), keep_in_memory=True)  # no cache files written into it
    except Exception as exc:  # a damaged entry is recomputed, not trusted
        print(
            f"textrl: ignoring the damaged reference-cache entry {entry}: {type(exc).__name__}: {exc}", file=sys.stderr
        )
        return None
    if len(columns) != rows:
        print(
            f"textrl: ignoring the reference-cache entry {entry}: {len(columns)} rows, expected {rows}", file=sys.stderr
        )
        return None
    return columns


STALE = {".partial-": 86400.0, ".trl-": 7 * 86400.0}
"""Staging folders older than this (seconds since made) are a killed writer's: a partial entry is written in
seconds, TRL's scratch of a precompute (see `_textrl_compute`) is written at its end, so it gets a week."""


def _sweep_stale(entries: Path) -> None:
    now = time.time()
    for left in entries.glob(".*-*"):
        age = next((limit for prefix, limit in STALE.items() if left.name.startswith(prefix)), None)
        try:
            if age is not None and now - left.stat().st_mtime > age:
                shutil.rmtree(left, ignore_errors=True)
        except OSError:  # another process removed it first
            pass


def store_entry(folder: Path, key: str, columns: Any, what: dict[str, Any]) -> Path:
    """Write `columns` as the entry `key`: into a staging folder first, renamed into place when complete, so a
    reader sees a whole entry or none. When another process (a parallel sweep job) has stored the same key
    meanwhile, its entry is kept: the same key means the same log-probabilities. Only a damaged entry is
    replaced, and it is first moved aside, so the rename never lands on a folder a reader is using."""
    entries = folder / "entries"
    final = entries / key
    _sweep_stale(entries)
    staging = entries / f".partial-{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    try:
        columns.flatten_indices(keep_in_memory=True).save_to_disk(str(staging / "data"))
        meta = {"key": key, "rows": len(columns), "columns": list(columns.column_names), "written": time.time()}
        (staging / "meta.json").write_text(json.dumps(meta | {"covers": what}, indent=1), encoding="utf-8")
        for _ in range(3):
            if load_entry(folder, key, len(columns)) is not None:
                break  # stored by another process: keep theirs
            if final.exists() and load_entry(folder, key, len(columns)) is None:  # damaged: aside, then drop it
                aside = entries / f".partial-{uuid.uuid4().hex}"
                try:
                    os.replace(final, aside)
                except OSError:
                    continue  # it moved meanwhile: look again
                shutil.rmtree(aside, ignore_errors=True)
            try:
                os.replace(staging, final)
                break
            except OSError:  # another process renamed its entry into place first: look again
                continue
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def agreed(decision: Decision, processes: int) -> Decision:
    """Process 0's decision, on every process: each reads the forecast from disk, and a node-local cache or a
    parallel job writing it could let them disagree (then some would wait in collectives others never make)."""
    if processes <= 1:
        return decision
    from accelerate.utils import broadcast_object_list

    shared = [decision]
    broadcast_object_list(shared, from_process=0)
    return shared[0]  # type: ignore[no-any-return]


def decide_for_run(cfg: TextRLConfig, train: Any, evaluation: Any) -> Decision:
    """Whether this run (every process of it alike) takes its reference log-probs from the cache or fills it, so
    that no reference copy needs loading: taken once, before the model loads, and handed to PreferenceTrainer."""
    from ..validation.config import processes
    from .plan import decide

    count = processes()
    return agreed(decide(cfg, train, evaluation, count), count)


def with_reference_cache(trainer_class: type, folder: Path, *, persist: bool = True) -> type:
    """`trainer_class` (TRL's DPOTrainer or KTOTrainer, or a subclass) whose precompute of reference log-probs
    reads and fills the cache in `folder`; `textrl_cache_used` on an instance maps each dataset name to (entry key,
    hit). With `persist=False` (TRL's precompute_ref_log_probs with the cache off) nothing is read or kept: a
    folder in `folder` (the run's output_dir) only carries TRL's result from process 0 to the others."""

    class ReferenceCached(trainer_class):  # type: ignore[valid-type,misc]
        def _precompute_ref_logps(self, dataset: Any, name: str, batch_size: int) -> Any:
            from accelerate.utils import broadcast_object_list
            from datasets import concatenate_datasets

            if not persist:
                return concatenate_datasets([dataset, self._textrl_compute(dataset, name, batch_size)], axis=1)
            key, what = exact_key(self, dataset, batch_size, folder)
            shared = [key]  # the weights hash may differ by rank (ZeRO-3 shards): rank 0's names the entry
            broadcast_object_list(shared, from_process=0)
            key = shared[0]
            if not hasattr(self, "textrl_cache_used"):
                self.textrl_cache_used = {}
            columns = load_entry(folder, key, len(dataset))
            hit = [columns is not None]
            broadcast_object_list(hit, from_process=0)
            if hit[0] and columns is None:
                raise RuntimeError(
                    f"reference cache: process {self.accelerator.process_index} cannot read the entry "
                    f"{folder / 'entries' / key} that process 0 found. Fix: put reference_cache_dir on a file "
                    "system every process sees, or set reference_cache: off."
                )
            if hit[0] and self.accelerator.is_main_process:
                print(
                    f"textrl: reference log-probs of the {name} set ({len(dataset)} rows) read from the "
                    f"reference cache ({folder / 'entries' / key[:12]}...); the reference model does not run",
                    file=sys.stderr,
                )
            if not hit[0]:
                columns = self._textrl_compute(dataset, name, batch_size, (key, what))
            self.textrl_cache_used[name] = (key, hit[0])
            return concatenate_datasets([dataset, columns], axis=1)

        def _textrl_compute(self, dataset: Any, name: str, batch_size: int, entry: Any = None) -> Any:
            """TRL's precompute; its result as columns held in memory (stored as `entry` = (key, what) first).

            TRL writes its result on process 0 into the datasets cache of `dataset` and every process reads it back:
            for in-memory data that is a temporary folder of each process's own, which the others cannot see (raw
            TRL fails there with more than one process). The file goes to a folder every process sees instead,
            named afresh for this run so that a file left by a killed run is never read."""
            from accelerate.utils import broadcast_object_list

            main = self.accelerator.is_main_process
            token = [uuid.uuid4().hex]
            broadcast_object_list(token, from_process=0)
            # a folder of its own: datasets writes cache files of its own beside the result
            scratch = folder / "entries" / f".trl-{token[0]}" if entry else folder / f".textrl-reference-{token[0]}"
            scratch.mkdir(parents=True, exist_ok=True)
            handoff = scratch / "logps.arrow"
            dataset._get_cache_file_path = lambda _fingerprint: str(handoff)
            try:
                result = super()._precompute_ref_logps(dataset, name, batch_size)
                added = result.select_columns([c for c in result.column_names if c not in dataset.column_names])
                if entry is None:
                    columns = added.flatten_indices(keep_in_memory=True)
                else:
                    if main:
                        where = store_entry(folder, entry[0], added, entry[1])
                        print(f"textrl: reference log-probs of the {name} set stored in {where}", file=sys.stderr)
                    self.accelerator.wait_for_everyone()
                    columns = load_entry(folder, entry[0], len(dataset))  # in memory: the hand-off file goes away
                    if columns is None:
                        raise RuntimeError(
                            f"reference cache: the entry {entry[0]} just written in {folder} is unreadable"
                        )
                self.accelerator.wait_for_everyone()
            finally:
                del dataset._get_cache_file_path
                if main:
                    shutil.rmtree(scratch, ignore_errors=True)
            return columns

    ReferenceCached.__name__ = ReferenceCached.__qualname__ = trainer_class.__name__
    return ReferenceCached
