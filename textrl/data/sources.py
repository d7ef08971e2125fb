"""Where a dataset section's rows come from: a local `path` checked before `datasets` reads it (a hub id or a glob
written as a path, data_files beside a file), and `datasets`' failures to reach the hub or to find a folder's files
said in the section's own words."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["exception_chain", "load_or_explain", "local_path"]

_GLOB = re.compile(r"[*?\[]")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
# a path ending so is a file the user meant, never a hub id
_FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".arrow", ".txt")
_FOLDER_FIELDS = ("data_files", "data_dir")


def local_path(source: Any, base_dir: Path, where: str) -> Path:
    """A section's `path`, from the config's folder, checked: it exists, and data_files/data_dir come with a folder."""
    raw = str(source.path)
    path = Path(raw) if Path(raw).is_absolute() else base_dir / raw
    if not path.exists():
        raise _missing(raw, path, base_dir, where)
    picks = [k for k in _FOLDER_FIELDS if getattr(source, k, None) is not None]
    if picks and path.is_file():
        field = picks[0]
        raise DataError(
            f"{where}.{field}: {getattr(source, field)!r} was given with path: {raw}, which is a file; {field} picks "
            f"files inside a folder (path: a folder) or a hub dataset. Fix: drop {field} to read {raw}, or set path "
            f"to the folder that holds the files, e.g. path: {Path(raw).parent.as_posix()}, data_files: "
            f'["*{path.suffix}"].'
        )
    # datasets names a local dataset after its folder, and `.` has no name ("dataset_name should be specified")
    return path.resolve() if path.is_dir() else path


def _missing(raw: str, path: Path, base_dir: Path, where: str) -> DataError:
    base_dir = base_dir.resolve()  # `.` when the config is in the working folder: say which folder that is
    if _GLOB.search(raw):
        parts = Path(raw).parts
        cut = next(i for i, part in enumerate(parts) if _GLOB.search(part))
        head = Path(*parts[:cut]) if cut else Path(".")
        pattern = "/".join(parts[cut:])
        folder = (head if head.is_absolute() else base_dir / head).resolve()
        found = len(list(folder.glob(pattern))) if folder.is_dir() else 0
        return DataError(
            f"{where}.path: {raw!r} is a glob pattern (it matches {found} file{'' if found == 1 else 's'} in "
            f"{folder}); path names one file or folder. Fix: name the folder in path and the pattern in "
            f'data_files: path: {head.as_posix()}, data_files: ["{pattern}"].'
        )
    first = Path(raw).parts[0] if Path(raw).parts else raw
    if _HUB_ID.fullmatch(raw) and Path(raw).suffix.lower() not in _FILE_SUFFIXES and not (base_dir / first).exists():
        return DataError(
            f"{where}.path: {raw!r} is no file or folder under {base_dir} (paths are read from the config file's "
            f"folder); it looks like a hub dataset id. Fix: write hub: {raw} (or correct the path)."
        )
    return DataError(f"{where}.path: {path} does not exist. Fix: give a path relative to the config file.")


def exception_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and what caused it, outermost first: datasets wraps its readers' errors (DatasetGenerationError)."""
    causes = [exc]
    while (nxt := causes[-1].__cause__ or causes[-1].__context__) is not None and nxt not in causes:
        causes.append(nxt)
    return causes


def _listing(folder: Path) -> str:
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir()) if folder.is_dir() else []
    if not names:
        return "it is empty"
    return "it holds " + ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def load_or_explain(name: str, subset: str | None, split: str, field: str, where: str, **kwargs: Any) -> Any:
    """`datasets.load_dataset(name, subset, split=split, **kwargs)`; a hub it cannot reach, a folder without data
    files or data_files that match nothing is a DataError naming `field` (the source: `dataset.hub`) or the
    `where.data_files` beside it."""
    from datasets import load_dataset

    try:
        return load_dataset(name, subset, split=split, **kwargs)
    except Exception as exc:
        error = _explain(exc, name, field, where, kwargs)
        if error is None:
            raise
        raise error from None


def _explain(exc: Exception, name: str, field: str, where: str, kwargs: dict[str, Any]) -> DataError | None:
    from datasets import config
    from datasets.data_files import EmptyDatasetError
    from datasets.exceptions import DatasetNotFoundError

    causes = exception_chain(exc)
    folder = Path(name) if Path(name).is_dir() else None
    if folder is None and any(isinstance(c, ConnectionError) for c in causes):
        reason = (
            "offline mode is on (HF_HUB_OFFLINE or HF_DATASETS_OFFLINE)"
            if config.HF_HUB_OFFLINE
            else "the hub cannot be reached from here"
        )
        return DataError(
            f"{field}: {name!r}: {reason}, and the dataset is not in the local datasets cache "
            f"({config.HF_DATASETS_CACHE}). Fix: point path: at a local copy of the data (e.g. path: data/train.jsonl)"
            ", or load the dataset once where the hub is reachable (it is then cached, and HF_DATASETS_OFFLINE=1 reads "
            "it from the cache; HF_DATASETS_CACHE names another cache folder)."
        )
    if folder is None and isinstance(exc, DatasetNotFoundError):
        return DataError(
            f"{field}: {name!r} is not a dataset on the hub, or it is private or gated ({exc}). Fix: check the id "
            "(owner/name), log in for a private one, or use path: for a local file or folder."
        )
    files = {k: v for k in _FOLDER_FIELDS if (v := kwargs.get(k)) is not None}
    if folder is not None and isinstance(exc, EmptyDatasetError) and not files:
        return DataError(
            f"{field}: the folder {folder} holds no data files ({_listing(folder)}). Fix: put .jsonl, .json, .csv or "
            ".parquet files in it, or point path at one file."
        )
    if files and any(isinstance(c, FileNotFoundError) for c in causes):
        key, value = next(iter(files.items()))
        base = folder if folder is not None else Path(os.getcwd())
        read_from = "the path folder" if folder is not None else "the current folder, as datasets reads it"
        if key == "data_dir":
            return DataError(
                f"{where}.data_dir: {value!r}: no data files in {base / str(value)}; data_dir is read from {read_from}"
                f", {base} ({_listing(base)}). Fix: name a subfolder that holds .jsonl, .json, .csv or .parquet files."
            )
        return DataError(
            f"{where}.data_files: {value!r} matches no file; data_files is read from {read_from}, {base} "
            f'({_listing(base)}). Fix: give patterns relative to that folder (e.g. data_files: ["*.jsonl"]), or '
            "point path at the folder that holds the files."
        )
    return None
