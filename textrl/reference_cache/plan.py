"""Whether a run uses the reference cache, where it lives, and the dry run's forecast of a hit, all decided before
anything loads (no torch, no datasets import for a dry run's plain rows). The cache itself, its exact key and the
trainer wrapper that reads and fills it are in `reference_cache`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..checkpoints.atomic import write_json
from ..spec.reference_cache import BATCH_PAIRED_FIELDS, FORECAST_SECTIONS, REFERENCE_PASS_FIELDS
from ..validation.view import options, preference

if TYPE_CHECKING:
    from ..generated.view import PreferenceOptions
    from ..validation.config import TextRLConfig

FORMAT = 2
"""Version of the stored layout and of the key; a change makes every older entry a miss."""


def cache_folder(cfg: PreferenceOptions) -> Path:
    """The folder of the reference cache: the config's reference_cache_dir, else $TEXTRL_REFERENCE_CACHE, else
    $TEXTRL_HOME/reference-logps."""
    given = cfg.reference_cache_dir or os.environ.get("TEXTRL_REFERENCE_CACHE")
    if given:
        return Path(given).expanduser()
    from ..models.gguf import textrl_home

    return textrl_home() / "reference-logps"


def digest_of(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def libraries() -> dict[str, str | None]:
    """The releases that compute a reference pass: TRL's trainer, transformers' model code (a release can change
    a model's forward, e.g. its rotary scaling) and PEFT's adapter layers."""
    from ..trl_support.env import version

    return {name: version(name) for name in ("trl", "transformers", "peft")}


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


def forecast_key(cfg: TextRLConfig, datasets: dict[str, Any]) -> str:
    """What a run's reference pass depends on, known before anything loads: the reference-pass options, the model
    section and its files, the datasets' rows, the TRL version."""
    dumped = cfg.model_dump(mode="json")
    family = cfg.algorithm().family
    from ..spec import Family

    names = REFERENCE_PASS_FIELDS + (BATCH_PAIRED_FIELDS if family is Family.BINARY else ())
    model = options(cfg).model
    sections: dict[str, Any] = {n: dumped.get(n) for n in FORECAST_SECTIONS}
    if model is not None and model.peft is not None:
        if model.peft.use_dora or model.peft.modules_to_save:  # the reference runs TRL's copy of the adapter,
            names += ("seed",)  # drawn from the seed
        else:  # a fresh plain LoRA adapter adds exactly nothing: the reference is the base model
            sections["model"] = {**sections["model"], "peft": None}
    return digest_of(
        {
            "format": FORMAT,
            "algo_family": family.value,
            "options": {n: dumped[n] for n in names if n in dumped},
            "sections": sections,
            "model_files": _model_files(model.name) if model is not None else [],
            "rows": {k: rows_digest(d) for k, d in datasets.items() if d is not None},
            "libraries": libraries(),
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


def rows_seen(cfg: TextRLConfig, rows: int, processes: int) -> int:
    """How many training rows the run's optimizer steps draw (an epoch is `rows`)."""
    typed = options(cfg)
    if typed.max_steps > 0:
        per_step = typed.per_device_train_batch_size * typed.gradient_accumulation_steps * max(1, processes)
        return int(typed.max_steps * per_step)
    return int(typed.num_train_epochs * rows)


def decide(cfg: TextRLConfig, train: Any, evaluation: Any, processes: int) -> Decision:
    """Whether this run uses the reference cache (`reference_cache`: auto, on or off); see the option's text."""
    offline = preference(cfg)
    if offline is None:
        return Decision(False, f"{cfg.algo} has no reference log-probs to cache")
    setting = offline.reference_cache
    if setting == "off":
        return Decision(False, "reference_cache: off")
    if offline.sync_ref_model:
        return Decision(False, "sync_ref_model moves the reference, so its log-probs cannot be stored")
    if offline.distributed is not None and offline.distributed.zero3:
        return Decision(False, "ZeRO-3 partitions the weights as they load, so they cannot be fingerprinted")
    for name, data in (("dataset", train), ("eval_dataset", evaluation)):
        if data is not None and not hasattr(data, "__len__"):
            return Decision(False, f"{name} is streamed; TRL precomputes reference log-probs of map-style data only")
    folder = cache_folder(offline)
    key = forecast_key(cfg, {"train": train, "eval": evaluation})
    hit = _forecast_hit(folder, key)
    if setting == "on":
        return Decision(True, "reference_cache: on", folder, key, hit)
    if hit:
        return Decision(True, "auto: the cache holds this run's reference log-probs", folder, key, hit)
    if offline.precompute_ref_log_probs:
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


def write_forecast(folder: Path, forecast: str, entries: dict[str, str | None]) -> None:
    """Record which entries a run with forecast key `forecast` used (atomically: a temporary file renamed)."""
    target = folder / "forecast" / f"{forecast}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_json(target, {"entries": entries, "written": time.time()})
