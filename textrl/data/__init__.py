"""Datasets: build them from lists, JSONL files or the hub, and check their shape before any model is loaded."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DataError
from .checks import check_dataset, from_list, list_rows, same_layout
from .csv_checks import explain_csv, read_header
from .sources import exception_chain, load_or_explain, local_path

__all__ = ["Rows", "check_dataset", "from_hub", "from_jsonl", "from_list", "from_section", "jsonl_rows", "list_rows",
           "load_split"]  # fmt: skip

_FILE_TYPES = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def from_jsonl(path: str | Path) -> Any:
    """A `datasets.Dataset` from a JSON Lines file; a malformed line is an error naming the line number."""
    from datasets import Dataset

    return Dataset.from_list(jsonl_rows(Path(path)))


PROGRESS_BYTES = 1 << 20  # files from this size on show a progress bar while they are read


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads keeps the last of two equal keys silently; a row with two `prompt`s is a broken row."""
    row: dict[str, Any] = {}
    for key, value in pairs:
        if key in row:
            raise _DuplicateKey(key)
        row[key] = value
    return row


def _decode(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); TextRL and "
            "datasets read data files as UTF-8. Fix: convert the file, e.g. iconv -f latin1 -t utf-8.",
            row=number,
        ) from None


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    from tqdm import tqdm

    rows = []
    size = path.stat().st_size
    with (
        path.open("rb") as handle,
        tqdm(
            total=size, desc=f"reading {path.name}", unit="B", unit_scale=True, disable=size < PROGRESS_BYTES
        ) as progress,
    ):
        for number, raw in enumerate(handle, start=1):
            progress.update(len(raw))
            line = _decode(raw, path, number).removeprefix("\ufeff") if number == 1 else _decode(raw, path, number)
            if not line.strip():
                continue
            try:
                row = json.loads(line, object_pairs_hook=_object_without_duplicates)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}:{number}: not valid JSON ({exc.msg} at column {exc.colno}). "
                    "Fix: correct or remove that line.",
                    row=number,
                ) from None
            except _DuplicateKey as exc:
                raise DataError(
                    f"{path}:{number}: key {exc.key!r} appears twice in one object; JSON readers silently keep the "
                    "last. Fix: keep one.",
                    column=exc.key,
                    row=number,
                ) from None
            except RecursionError:
                raise DataError(
                    f"{path}:{number}: nested too deeply to read. Fix: flatten that row.", row=number
                ) from None
            if not isinstance(row, dict):
                raise DataError(
                    f"{path}:{number}: a JSON {type(row).__name__}, expected an object (one row). "
                    'Fix: write each line as {"prompt": ...}.',
                    row=number,
                )
            rows.append(row)
    if not rows:
        raise DataError(f"{path}: no rows. Fix: add at least one JSON object per line.")
    same_layout(rows, str(path))
    return rows


def _first_bad_utf8(path: Path) -> DataError | None:
    """The first line of `path` that is not UTF-8, as the error to raise; None when the file decodes."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 24):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        return None
    except UnicodeDecodeError:
        pass  # find the line
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                _decode(raw, path, number)
            except DataError as error:
                return error
    return None


def _split_of_file(path: Path, split: str, rows: int) -> list[int] | None:
    """The row indices `split` selects from a local file (its one split is train, sliceable as train[:10%]);
    None for all of it."""
    if split == "train":
        return None
    from datasets import ReadInstruction

    try:
        parts = ReadInstruction.from_spec(split).to_absolute({"train": rows})
    except (ValueError, AssertionError) as exc:
        raise DataError(
            f"{path}: split {split!r}: {str(exc).rstrip('.')}. A local file has one split, train. Fix: use train, "
            "or slice it as train[:100] or train[:10%].",
        ) from None
    return [i for part in parts for i in range(part.from_, part.to)]


def _load_local(path: Path, kind: str, split: str, **kwargs: Any) -> Any:
    """A local data file through datasets; its reader's failures become DataErrors naming the file (and line)."""
    from datasets import load_dataset

    _split_of_file(path, split, 1)  # the split's name, checked before datasets reads the file

    if kind == "json":  # Arrow's JSON reader keeps invalid UTF-8 and fails only when a row is read
        bad = _first_bad_utf8(path)
        if bad is not None:
            raise bad
    # the file as written, unless the caller says how to split it
    header = read_header(path) if kind == "csv" and not {"sep", "delimiter"} & kwargs.keys() else None
    options = {**header.options, **kwargs} if header is not None else kwargs
    try:
        data = load_dataset(kind, data_files={"train": str(path)}, split=split, **options)
    except Exception as exc:
        causes = exception_chain(exc)
        if any(isinstance(c, UnicodeDecodeError) for c in causes):
            bad = _first_bad_utf8(path)
            if bad is not None:
                raise bad from None
        reader = next((c for c in causes if type(c).__name__ == "ParserError"), None)
        unclosed = reader is not None and "EOF inside string" in str(reader)
        ragged = None if unclosed else explain_csv(path, header)
        if ragged is not None:
            raise ragged from None
        if reader is not None:
            quote = " (a quote that is never closed)" if unclosed else ""
            raise DataError(
                f'{path}: the CSV reader stopped: {reader}{quote}. Fix: close or double the quote ("" inside a '
                "quoted field), or correct that row.",
            ) from None
        if any(isinstance(c, RecursionError) for c in causes):
            raise DataError(f"{path}: a row is nested too deeply to read. Fix: flatten that row.") from None
        if type(exc).__name__ in ("DatasetGenerationError", "ArrowInvalid", "JSONDecodeError", "ValueError"):
            root = causes[-1]
            raise DataError(
                f"{path}: could not be read as {kind}: {type(root).__name__}: {root}. Fix: check the file's format "
                f"(one {'row per line' if kind != 'parquet' else 'table'}).",
            ) from None
        raise
    ragged = explain_csv(path, header, data)
    if ragged is not None:
        raise ragged
    return data


class Rows:
    """Rows as plain dicts with the part of `datasets.Dataset` the format checks use; lets a dry run check a
    local JSONL file or inline list without importing `datasets`."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    @property
    def column_names(self) -> list[str]:
        return list(dict.fromkeys(k for row in self.rows for k in row))

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, column: str) -> list[Any]:
        return [row.get(column) for row in self.rows]

    def select(self, indices: Iterable[int]) -> Rows:
        return Rows([self.rows[i] for i in indices])

    def rename_column(self, old: str, new: str) -> Rows:
        return Rows([{(new if k == old else k): v for k, v in row.items()} for row in self.rows])


def from_hub(name: str, split: str = "train", subset: str | None = None, **kwargs: Any) -> Any:
    """A split of a hub dataset, a local dataset folder, or a local .jsonl/.json/.csv/.parquet file.

    `split` takes slicing such as `train[:1%]`. Extra keyword arguments go to `datasets.load_dataset`.
    """
    return _read(name, split, subset, "from_hub", "from_hub", **kwargs)


def _read(name: str, split: str, subset: str | None, field: str, where: str, **kwargs: Any) -> Any:
    """`from_hub`, with `field` (the source, e.g. `dataset.hub`) and `where` (its section) named in errors."""
    local = Path(name)
    if local.is_file():
        kind = _FILE_TYPES.get(local.suffix.lower())
        if kind is None:
            raise DataError(
                f"{name}: unknown file type {local.suffix!r}; allowed: {', '.join(_FILE_TYPES)}. Fix: convert the file."
            )
        if local.suffix.lower() == ".jsonl" and not kwargs:  # TextRL's reader: line numbers, duplicate keys
            data = from_jsonl(local)
            picked = _split_of_file(local, split, len(data))
            return data if picked is None else data.select(picked)
        return _load_local(local, kind, split, **kwargs)
    if local.is_dir():  # datasets names a local dataset after its folder, and `.` has no name
        name = str(local.resolve())
    return load_or_explain(name, subset, split, field, where, **kwargs)


def from_section(section: Any, base_dir: Path, *, light: bool = False, where: str = "dataset") -> Any:
    """The training rows a config's `dataset:` (or `eval_dataset:`) section describes, less any rows held out by
    `test_split_size`; relative paths are from base_dir.

    With `light=True`, inline lists and local JSONL files come back as `Rows` (no `datasets` import). `where` names
    the section in errors.
    """
    return load_split(section, base_dir, light=light, where=where)[0]


def load_split(section: Any, base_dir: Path, *, light: bool = False, where: str = "dataset") -> tuple[Any, Any]:
    """(training rows, held-out rows or None): a section's source or mixture, split by its test_split_size."""
    if section.mixture is not None:
        data = _mixture(section, base_dir, light, where)
    else:
        data = _source(section, base_dir, light, where)
    if section.test_split_size is None:
        return data, None
    return _hold_out(data, section.test_split_size, section.seed, where)


def _source(source: Any, base_dir: Path, light: bool, where: str) -> Any:
    """One source (a dataset section or a part of a mixture), its split, with only its `columns`."""
    kwargs = {k: v for k in ("data_files", "data_dir") if (v := getattr(source, k, None)) is not None}
    if getattr(source, "list", None) is not None:
        data = Rows(list_rows(source.list, f"{where}.list")) if light else from_list(source.list, where=f"{where}.list")
    elif source.path is not None:
        path = local_path(source, base_dir, where)
        if path.suffix.lower() == ".jsonl" and source.split == "train" and not kwargs:
            data = Rows(jsonl_rows(path)) if light else from_jsonl(path)
        else:
            data = _read(str(path), source.split, source.subset, f"{where}.path", where, **kwargs)
    else:
        data = _read(source.hub, source.split, source.subset, f"{where}.hub", where, **kwargs)
    if source.columns is None:
        return data
    missing = [c for c in source.columns if c not in data.column_names]
    if missing:
        raise DataError(
            f"{where}.columns: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the data; its "
            f"columns: {', '.join(data.column_names)}. Fix: list columns the data has."
        )
    if isinstance(data, Rows):
        return Rows([{c: row.get(c) for c in source.columns} for row in data.rows])
    return data.select_columns(source.columns)


def _mixture(section: Any, base_dir: Path, light: bool, where: str) -> Any:
    """The parts of `dataset.mixture`, sized by TRL's `fraction` or the recipe collections' `weight`, concatenated."""
    import random

    parts = [_source(p, base_dir, light, f"{where}.mixture[{i}]") for i, p in enumerate(section.mixture)]
    fractions = [p.fraction for p in section.mixture]
    if fractions[0] is not None:  # as TRL's get_dataset: first rows, the largest mixture that oversamples none
        shares = [f / sum(fractions) for f in fractions]
        total = min(len(d) / share for d, share in zip(parts, shares, strict=True))
        parts = [d.select(range(round(share * total))) for d, share in zip(parts, shares, strict=True)]
    for i, (data, part) in enumerate(zip(parts, section.mixture, strict=True)):
        if part.weight is not None:  # as alignment-handbook and open-r1: a seeded random share of the rows
            keep = int(len(data) * part.weight)
            if isinstance(data, Rows):
                parts[i] = data.select(random.Random(section.seed).sample(range(len(data)), keep))
            else:
                parts[i] = data.shuffle(seed=section.seed).select(range(keep))
    if all(isinstance(d, Rows) for d in parts):
        return Rows([row for d in parts for row in d.rows])
    from datasets import Dataset, concatenate_datasets

    tables = [Dataset.from_list(d.rows) if isinstance(d, Rows) else d for d in parts]
    layouts = {tuple(sorted(d.column_names)) for d in tables}
    if len(layouts) > 1:
        shown = "; ".join(f"[{i}] {', '.join(d.column_names)}" for i, d in enumerate(tables))
        raise DataError(
            f"{where}.mixture: the parts have different columns ({shown}). Fix: give each part the same columns, "
            "e.g. columns: [prompt, chosen, rejected]."
        )
    try:
        return concatenate_datasets(tables)
    except ValueError as exc:
        raise DataError(
            f"{where}.mixture: the parts cannot be joined: {exc}. Fix: give the columns one type."
        ) from None


def _hold_out(data: Any, size: float | int, seed: int, where: str) -> tuple[Any, Any]:
    """(train, test) as datasets' train_test_split cuts them (a share rounds the test part up), seeded."""
    import math
    import random

    total = len(data)
    test = math.ceil(size * total) if isinstance(size, float) else size
    if not 0 < test < total:
        raise DataError(
            f"{where}.test_split_size={size} leaves {test} of {total} rows for evaluation and {total - test} for "
            "training; both need at least one. Fix: a share such as 0.1, or fewer rows."
        )
    if not isinstance(data, Rows):
        halves = data.train_test_split(test_size=size, seed=seed)
        return halves["train"], halves["test"]
    order = list(range(total))
    random.Random(seed).shuffle(order)
    return data.select(order[test:]), data.select(order[:test])
