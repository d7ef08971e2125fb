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

This module imports nothing heavy at import time: the dry run uses `decide`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..spec.reference_cache import BATCH_PAIRED_FIELDS, FORECAST_SECTIONS, REFERENCE_PASS_FIELDS

FORMAT = 1
"""Version of the stored layout and of the key; a change makes every older entry a miss."""


def cache_folder(cfg: Any) -> Path:
    """The folder of the reference cache: the config's reference_cache_dir, else $TEXTRL_REFERENCE_CACHE, else
    $TEXTRL_HOME/reference-logps."""
    given = getattr(cfg, "reference_cache_dir", None) or os.environ.get("TEXTRL_REFERENCE_CACHE")
    if given:
        return Path(given).expanduser()
    from ..gguf_models import textrl_home

    return textrl_home() / "reference-logps"


def _sha(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _trl_version() -> str:
    from importlib.metadata import version

    return version("trl")


# ---------------------------------------------------------------------------------------------- the forecast


def _model_files(name: str) -> list[Any]:
    """Names, sizes and modification times of a local model's files (a built-in model's folder included); [] for
    a hub id, which the model section's name and revision stand for."""
    if name.startswith("textrl:"):
        from ..models import builtin_path

        folder = builtin_path(name)
        path = folder if folder is not None else Path(name)
    else:
        path = Path(name).expanduser()
    if path.is_file():
        stat = path.stat()
        return [[path.name, stat.st_size, stat.st_mtime_ns]]
    if not path.is_dir():
        return []
    return [
        [p.name, p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(path.iterdir())
        if p.is_file() and not p.name.startswith(".")
    ]


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


_ROWS_DIGESTS: dict[tuple[int, str], str] = {}


def rows_digest(data: Any) -> str:
    """SHA-256 of a dataset's rows in order, the same for a `datasets.Dataset` and for the dry run's plain `Rows`
    of the same file (keys with None values are left out: arrow fills a key a row lacks with None). Remembered per
    Dataset object and datasets fingerprint: textrl-train decides before loading the model and again in the trainer."""
    memo = (id(data), str(getattr(data, "_fingerprint", "")))
    if memo[1] and memo in _ROWS_DIGESTS:
        return _ROWS_DIGESTS[memo]
    digest = hashlib.sha256()
    batches: Iterable[list[Any]]
    if hasattr(data, "with_format"):
        batches = (b.to_pylist() for b in data.with_format("arrow").iter(batch_size=4096))
    else:
        batches = [list(data.rows)]
    for batch in batches:
        for row in batch:
            digest.update(json.dumps(_plain(row), sort_keys=True, default=str).encode("utf-8"))
    if memo[1]:
        _ROWS_DIGESTS[memo] = digest.hexdigest()
    return digest.hexdigest()


def forecast_key(cfg: Any, datasets: dict[str, Any]) -> str:
    """What a run's reference pass depends on, known before anything loads: the reference-pass options, the model
    section and its files, the datasets' rows, the TRL version."""
    options = cfg.model_dump(mode="json")
    family = cfg.algorithm().family
    from ..spec import Family

    names = REFERENCE_PASS_FIELDS + (BATCH_PAIRED_FIELDS if family is Family.BINARY else ())
    model = getattr(cfg, "model", None)
    return _sha(
        {
            "format": FORMAT,
            "algo_family": family.value,
            "options": {n: options[n] for n in names if n in options},
            "sections": {n: options.get(n) for n in FORECAST_SECTIONS},
            "model_files": _model_files(model.name) if model is not None else [],
            "rows": {k: rows_digest(d) for k, d in datasets.items() if d is not None},
            "trl": _trl_version(),
        }
    )


def _forecast_hit(folder: Path, key: str) -> bool:
    try:
        record = json.loads((folder / "forecast" / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    entries = [k for k in record.get("entries", {}).values() if k]
    return bool(entries) and all((folder / "entries" / k / "meta.json").is_file() for k in entries)


@dataclass(frozen=True)
class Decision:
    """Whether a run uses the reference cache, why, and (when it does) whether the forecast says it will hit."""

    active: bool
    reason: str
    folder: Path | None = None
    forecast: str | None = None
    hit: bool = False

    def line(self) -> str:
        """One line for the dry run and the start of a run."""
        if not self.active:
            return f"reference cache: off ({self.reason})"
        state = "hit: the reference model will not run" if self.hit else "miss: computed once, then stored"
        return f"reference cache: on, {state} ({self.reason}; {self.folder})"


def rows_seen(cfg: Any, rows: int, processes: int) -> int:
    """How many training rows the run's optimizer steps draw (an epoch is `rows`)."""
    steps = getattr(cfg, "max_steps", -1)
    if steps is not None and steps > 0:
        per_step = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps * max(1, processes)
        return int(steps * per_step)
    return int(float(getattr(cfg, "num_train_epochs", 1.0)) * rows)


def decide(cfg: Any, train: Any, evaluation: Any, processes: int) -> Decision:
    """Whether this run uses the reference cache (`reference_cache`: auto, on or off); see the option's text."""
    setting = getattr(cfg, "reference_cache", None)
    if setting is None:
        return Decision(False, f"{cfg.algo} has no reference log-probs to cache")
    if setting == "off":
        return Decision(False, "reference_cache: off")
    if getattr(cfg, "sync_ref_model", False):
        return Decision(False, "sync_ref_model moves the reference, so its log-probs cannot be stored")
    for name, data in (("dataset", train), ("eval_dataset", evaluation)):
        if data is not None and not hasattr(data, "__len__"):
            return Decision(False, f"{name} is streamed; TRL precomputes reference log-probs of map-style data only")
    folder = cache_folder(cfg)
    key = forecast_key(cfg, {"train": train, "eval": evaluation})
    hit = _forecast_hit(folder, key)
    if setting == "on":
        return Decision(True, "reference_cache: on", folder, key, hit)
    if hit:
        return Decision(True, "auto: the cache holds this run's reference log-probs", folder, key, hit)
    if getattr(cfg, "precompute_ref_log_probs", False):
        return Decision(True, "auto: precompute_ref_log_probs is on, so storing them costs nothing", folder, key)
    seen = rows_seen(cfg, len(train), processes)
    if seen >= len(train):
        why = f"auto: the run draws {seen} training rows, at least every one of the {len(train)} once"
        return Decision(True, why, folder, key)
    return Decision(
        False,
        f"auto: the run draws {seen} of the {len(train)} training rows, so computing all of them would cost more "
        "reference forwards than the run makes; set reference_cache: on to fill the cache for the runs after it",
    )


# ------------------------------------------------------------------------------------ the exact key and store


def _update(digest: Any, column: Any) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        digest.update(pc.list_value_length(column).fill_null(-1).to_numpy(zero_copy_only=False).tobytes())
        _update(digest, column.flatten())
    elif (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)) and column.null_count == 0:
        digest.update(str(column.type).encode())
        digest.update(column.to_numpy(zero_copy_only=False).tobytes())
    else:
        digest.update(json.dumps(column.to_pylist(), default=str).encode("utf-8"))


def tokenized_digest(dataset: Any) -> str:
    """SHA-256 of every column of a tokenized dataset, in row order (token ids hashed as arrays)."""
    digest = hashlib.sha256(json.dumps(dataset.column_names).encode())
    for batch in dataset.with_format("arrow").iter(batch_size=8192):
        for name in dataset.column_names:
            digest.update(name.encode())
            _update(digest, batch.column(name).combine_chunks())
    return digest.hexdigest()


def exact_key(trainer: Any, dataset: Any, batch_size: int) -> tuple[str, dict[str, Any]]:
    """The key of one dataset's reference log-probs inside a TRL trainer: the reference weights (TRL's
    `hash_module`), the tokenized rows, the reference-pass fields as TRL resolved them, the TRL version; for KTO
    also the batch its KL term pairs within."""
    weights = getattr(trainer, "_precompute_model_hash", None)
    if weights is None:
        from trl.trainer.utils import hash_module

        weights = hash_module(trainer.ref_model or trainer.model)
    args = trainer.args
    what: dict[str, Any] = {
        "format": FORMAT,
        "trainer": next(c.__name__ for c in type(trainer).__mro__ if c.__module__.startswith("trl.")),
        "trl": _trl_version(),
        "weights": weights,
        "rows": tokenized_digest(dataset),
        "fields": {f: getattr(args, f) for f in REFERENCE_PASS_FIELDS if hasattr(args, f)},
    }
    if hasattr(trainer, "calculate_KL"):
        what["kl_pairs"] = {"calculate_kl": trainer.calculate_KL, "batch_size": batch_size}
    return _sha(what), what


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


def store_entry(folder: Path, key: str, columns: Any, what: dict[str, Any]) -> Path:
    """Write `columns` as the entry `key`: into a staging folder first, renamed into place when complete, so a
    reader sees a whole entry or none."""
    final = folder / "entries" / key
    for left in (folder / "entries").glob(".*-*"):  # staging left by a killed writer, a day old: nobody's now
        if time.time() - left.stat().st_mtime > 86400:
            shutil.rmtree(left, ignore_errors=True)
    staging = folder / "entries" / f".partial-{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    try:
        columns.flatten_indices(keep_in_memory=True).save_to_disk(str(staging / "data"))
        meta = {"key": key, "rows": len(columns), "columns": list(columns.column_names), "written": time.time()}
        (staging / "meta.json").write_text(json.dumps(meta | {"covers": what}, indent=1), encoding="utf-8")
        if final.exists():  # a damaged entry left by an older writer, or another process won the race
            shutil.rmtree(final, ignore_errors=True)
        os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def write_forecast(folder: Path, forecast: str, entries: dict[str, str | None]) -> None:
    """Record which entries a run with forecast key `forecast` used (atomically: a temporary file renamed)."""
    target = folder / "forecast" / f"{forecast}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
    partial.write_text(json.dumps({"entries": entries, "written": time.time()}), encoding="utf-8")
    os.replace(partial, target)


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
            key, what = exact_key(self, dataset, batch_size)
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
