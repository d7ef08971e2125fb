"""Dataset shape checks: the columns an algorithm's data format needs (from the spec), and text columns that
hold either plain text or chat messages, one kind per column; and one layout per column across rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .errors import DataError
from .spec import FORMATS_BY_NAME, DataFormat
from .spec.formats import PROMPT_ONLY


def column_values(dataset: Any, name: str) -> list[Any]:
    """A column's values as a list: through Arrow for a `datasets.Dataset` (row order and selections kept; about ten
    times faster than iterating its lazy column), as they are for the dry run's plain rows."""
    if hasattr(dataset, "with_format"):
        values: list[Any] = dataset.with_format("arrow")[name].to_pylist()
        return values
    return list(dataset[name])


def text_kind(value: Any) -> str | None:
    """'standard' for text, 'conversational' for a list of {role, content} messages, None otherwise."""
    if isinstance(value, str):
        return "standard"
    if (
        isinstance(value, list)
        and value
        and all(isinstance(m, Mapping) and "role" in m and "content" in m for m in value)
    ):
        return "conversational"
    return None


def _check_text_column(values: Sequence[Any], column: str, fmt: str, kinds: dict[str, tuple[str, int]]) -> None:
    for row, value in enumerate(values):
        kind = text_kind(value)
        if kind is None:
            raise DataError(
                f"column {column!r}, row {row}: got {type(value).__name__} {value!r:.60}; the {fmt} format needs a "
                "string or a list of {role, content} messages. Fix: correct that row or drop it.",
                column=column,
                row=row,
            )
        if (kind == "standard" and not value.strip()) or (
            kind == "conversational" and not str(value[-1]["content"]).strip()
        ):
            raise DataError(
                f"column {column!r}, row {row}: empty text. Fix: drop the row or fill it in.", column=column, row=row
            )
        first = kinds.setdefault("kind", (kind, row))
        if first[0] != kind:
            raise DataError(
                f"column {column!r}, row {row}: {kind} data, but row {first[1]} is {first[0]}; the {fmt} format "
                "needs one layout throughout (all plain text or all chat messages). Fix: convert the rows to one "
                "layout.",
                column=column,
                row=row,
            )


def check_dataset(dataset: Any, data_format: DataFormat | str) -> Any:
    """Check every row against a data format of the spec (a `DataFormat`, or its name, e.g. 'prompt-only'); returns
    the dataset, ready for TRL.

    A prompt-only dataset with a `messages` column and no `prompt` column gets it renamed to `prompt`.
    """
    fmt = data_format if isinstance(data_format, DataFormat) else FORMATS_BY_NAME.get(data_format)
    if fmt is None:
        raise ValueError(f"unknown data format {data_format!r}")
    name = fmt.name
    columns = list(dataset.column_names)
    if name == PROMPT_ONLY.name and "prompt" not in columns and "messages" in columns:
        dataset = dataset.rename_column("messages", "prompt")
        columns = list(dataset.column_names)
    needed = fmt.required
    missing = [c for c in needed if c not in columns]
    if missing:
        raise DataError(
            f"missing column {missing[0]!r}: the {name} format needs columns {', '.join(needed)}; the dataset "
            f"has {', '.join(columns) or 'none'}. Fix: rename or add the column (dataset.rename_column(...)).",
            column=missing[0],
        )
    if len(dataset) == 0:
        raise DataError(
            f"the dataset has no rows; the {name} format needs at least one. Fix: check the "
            "split or the filter that produced it."
        )
    kinds: dict[str, tuple[str, int]] = {}
    for column in (c for c in ("prompt", "chosen", "rejected", "completion") if c in columns):
        _check_text_column(column_values(dataset, column), column, name, kinds)
    if "label" in needed:
        for row, label in enumerate(column_values(dataset, "label")):
            if not isinstance(label, bool):
                raise DataError(
                    f"column 'label', row {row}: got {label!r} ({type(label).__name__}); the {name} format "
                    "needs true (desirable) or false (undesirable). Fix: set a boolean label on that row.",
                    column="label",
                    row=row,
                )
    return dataset


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "chat messages" if text_kind(value) == "conversational" else "list"
    return type(value).__name__


def same_layout(rows: Sequence[Mapping[str, Any]], where: str) -> None:
    """Arrow needs one type per column; say which row breaks it instead of Arrow's 'Expected bytes, got list'."""
    first: dict[str, tuple[str, int]] = {}
    for row_number, row in enumerate(rows):
        for column, value in row.items():
            kind = _kind(value)
            if kind == "null":
                continue
            seen = first.setdefault(column, (kind, row_number))
            if seen[0] != kind:
                raise DataError(
                    f"{where}: column {column!r}, row {row_number}: {kind}, but row {seen[1]} is {seen[0]}; a column "
                    "holds one layout throughout (e.g. all plain text or all chat messages). Fix: convert the rows "
                    "to one layout.",
                    column=column,
                    row=row_number,
                )
