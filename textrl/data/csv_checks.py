"""CSV files as `datasets` (pandas) reads them, checked with Python's csv module: the header before the read
(delimiter, duplicate names, no rows), and a failed or suspicious read explained by the line that causes it.

pandas never says that a file is `;`-separated, that a row has one field too many (it silently turns the first
column into an index) or too few (the missing fields become None), or that two columns share a name (the second
becomes `prompt.1`); these checks say so before any model is loaded.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["CsvHeader", "explain_csv", "read_header"]

# Delimiters a spreadsheet writes where the comma is the decimal mark (`;`) or as its "text" export (tab). A header
# that has none of these commas but one of them is read with it: its names cannot mean anything else.
_OTHER_DELIMITERS = (";", "\t")


@dataclass(frozen=True)
class CsvHeader:
    """The first line of a CSV file, as the csv module splits it, and the delimiter it uses."""

    names: list[str]
    delimiter: str

    @property
    def options(self) -> dict[str, Any]:
        """What `load_dataset("csv", ...)` needs to read the file as it is written."""
        return {} if self.delimiter == "," else {"sep": self.delimiter}


def _records(path: Path, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, fields) of each record; blank lines are skipped, as pandas skips them."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        start = 1
        for fields in reader:
            if fields:
                yield start, fields
            start = reader.line_num + 1  # a quoted field may span lines: the next record starts after this one


def _shown(name: str) -> str:
    return {"\t": "a tab", ";": "';'", ",": "','"}.get(name, repr(name))


def read_header(path: Path) -> CsvHeader | None:
    """The header of `path`, checked: a file with no rows, or two columns of one name, is an error here. None when the
    start of the file is not UTF-8 text (the reader's own failure names that line)."""
    try:
        records = _records(path, ",")
        first = next(records, None)
        if first is None:
            raise DataError(f"{path}: empty file, no header line and no rows. Fix: write a header such as prompt,"
                            "chosen,rejected and one row per line, or point the config at the right file.")  # fmt: skip
        names, delimiter = first[1], ","
        if len(names) == 1:
            splits = {d: names[0].split(d) for d in _OTHER_DELIMITERS if d in names[0]}
            if splits:
                delimiter = max(splits, key=lambda d: len(splits[d]))
                records = _records(path, delimiter)
                names = next(records)[1]
        if next(records, None) is None:
            raise DataError(
                f"{path}: a header line ({', '.join(names)}) and no rows. Fix: add rows below the header, one per line."
            )
    except UnicodeDecodeError:
        return None
    except csv.Error:
        return None  # e.g. a NUL byte: pandas reports the line itself
    seen: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        if name in seen:
            raise DataError(
                f"{path}:1: column {name!r} appears twice in the header (fields {seen[name]} and {number}); the CSV "
                f"reader would silently rename the second to {name + '.1'!r}. Fix: rename or remove one of them.",
                column=name,
                row=1,
            )
        seen[name] = number
    return CsvHeader(names, delimiter)


def _ragged(path: Path, header: CsvHeader) -> DataError | None:
    """The first row whose number of fields differs from the header's, as the error to raise."""
    width = len(header.names)
    try:
        records = _records(path, header.delimiter)
        next(records, None)  # the header
        for line, fields in records:
            if len(fields) == width:
                continue
            names, sep = ", ".join(header.names), _shown(header.delimiter)
            if len(fields) > width:
                return DataError(
                    f"{path}:{line}: {len(fields)} fields, more than the header's {width} ({names}); the CSV reader "
                    f'cannot tell which field is which. Fix: quote a field that holds {sep} ("a, b"), or correct '
                    "that line.",
                    row=line,
                )
            return DataError(
                f"{path}:{line}: {len(fields)} field{'s' if len(fields) > 1 else ''}, fewer than the header's {width} "
                f"({names}); the CSV reader would fill the missing ones with None. Fix: add the missing fields (an "
                f"empty one is nothing between two {sep}), or correct that line.",
                row=line,
            )
    except (UnicodeDecodeError, csv.Error):
        return None
    return None


def explain_csv(path: Path, header: CsvHeader | None, data: Any = None) -> DataError | None:
    """After the reader failed (`data` None) or read `data`: the error a ragged row causes, or None.

    The scan reads the whole file, so a read that looks right (the header's columns, no missing values) skips it."""
    if header is None:
        return None
    if data is not None:
        table = data.data.table  # Arrow keeps the null count of each column: no pass over the rows
        if list(data.column_names) == header.names and not any(column.null_count for column in table.columns):
            return None
    return _ragged(path, header)
