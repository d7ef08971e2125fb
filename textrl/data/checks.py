"""Dataset shape checks: the columns an algorithm's data format needs (from the spec), and text columns that
hold either plain text or chat messages, one kind per column; and one layout per column across rows."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import DataError
from ..spec import FORMATS_BY_NAME, DataFormat
from ..spec.formats import PROMPT_ONLY

# The roles chat templates act on: TRL's conversational format (system, user, assistant, tool) and those that
# templates of Llama 3 (ipython), OpenAI-style models (developer, function) read. A template drops or misplaces a
# message whose role it does not know, without a word (Qwen's skips it), so any other role is refused.
ROLES = ("system", "user", "assistant", "tool", "developer", "function", "ipython")
# Roles of other conventions (ShareGPT's human/gpt, Gemma's model) and their names in TRL's format.
_ROLE_ALIASES = {"human": "user", "gpt": "assistant", "bot": "assistant", "model": "assistant", "ai": "assistant",
                 "chatbot": "assistant", "sys": "system"}  # fmt: skip


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


def _role_problem(role: Any, column: str, row: int, index: int) -> DataError:
    name = role.strip().lower() if isinstance(role, str) else ""
    guess = _ROLE_ALIASES.get(name) or next(iter(difflib.get_close_matches(name, ROLES, n=1, cutoff=0.5)), None)
    hint = f" Did you mean {guess!r}?" if guess else ""
    return DataError(
        f"column {column!r}, row {row}, message {index}: unknown role {role!r}.{hint} Allowed roles: "
        f"{', '.join(ROLES)}; a chat template skips or misplaces a message of any other role. Fix: "
        f"{f'write {guess!r}' if guess else 'use one of those roles'} in that row (and any like it).",
        column=column,
        row=row,
    )


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
        if kind == "conversational":
            for index, message in enumerate(value):
                if message["role"] not in ROLES:
                    raise _role_problem(message["role"], column, row, index)
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


def _as_dataset(dataset: Any, argument: str, example: str, string_column: str = "prompt") -> Any:
    """A plain list or tuple of rows as a `datasets.Dataset` (as `from_list` builds it, a string becoming a row of
    `string_column`); anything else without columns is an error naming the argument."""
    if isinstance(dataset, list | tuple):
        return from_list(dataset, where=argument, string_column=string_column)
    columns = getattr(dataset, "column_names", None)
    if isinstance(columns, list):
        return dataset
    allowed = "allowed: a datasets.Dataset, or a list of rows as textrl.data.from_list takes (strings or dicts)"
    if isinstance(dataset, Mapping) and isinstance(columns, Mapping):  # a DatasetDict: load_dataset without split=
        splits = ", ".join(map(str, dataset))
        raise DataError(
            f"{argument}: got a DatasetDict with splits {splits}; {allowed}. Fix: pass one split, e.g. "
            f"{example}=data[{next(iter(dataset), 'train')!r}], or load_dataset(..., split='train')."
        )
    if isinstance(dataset, Mapping):
        keys = ", ".join(map(str, list(dataset)[:6]))
        raise DataError(
            f"{argument}: got a dict (keys: {keys or 'none'}); {allowed}. Fix: a list of rows "
            "([{'prompt': ...}, ...]), or datasets.Dataset.from_dict(...) for a dict of columns."
        )
    if isinstance(dataset, str):  # a file name or hub id where the rows belong
        raise DataError(
            f"{argument}: got the string {dataset!r:.80}; {allowed}. Fix: read it first, e.g. "
            f"{example}=textrl.data.from_hub({dataset!r:.80}) for a local file or a hub dataset."
        )
    seen = (
        f"{dataset!r:.60} ({type(dataset).__name__})"
        if dataset is None or isinstance(dataset, int | float)
        else f"{'an' if type(dataset).__name__[0] in 'AEIOUaeiou' else 'a'} {type(dataset).__name__}"
    )
    raise DataError(
        f"{argument}: got {seen}; {allowed}. Fix: pass the rows, e.g. {example}=['Write a poem.', ...] or "
        f"{example}=load_dataset(..., split='train')."
    )


def _looks_like_data(name: str) -> bool:
    """A column name that reads as a value (a number, or a sentence): a CSV file's first row taken as its header."""
    text = str(name).strip()
    return bool(re.fullmatch(r"[-+]?\d+(\.\d+)?", text)) or (" " in text and (len(text) > 30 or text[-1] in ".?!:"))


def check_rows(config: Any, dataset: Any, name: str | None = None) -> Any:
    """`check_dataset` against a TextRL config's algorithm: its data format, and for SFT the text column it names
    (dataset_text_field). The trainers and the dry run both check rows through this."""
    from ..validation.view import supervised

    sft = supervised(config)
    text_field = sft.dataset_text_field if sft is not None else "text"
    return check_dataset(dataset, config.algorithm().data_format, name, text_field=text_field)


def layout_of(fmt: DataFormat, columns: Sequence[str], text_field: str = "text") -> tuple[str, ...] | None:
    """The layout of `fmt.layouts` a dataset with these columns is read as (TRL's order: prompt and completion, then
    messages, then the text column, named `text_field`); None when it has none of them. A format without layouts has
    the one, its required columns."""
    if not fmt.layouts:
        return fmt.required
    named = [tuple(text_field if c == "text" else c for c in layout) for layout in fmt.layouts]
    return next((layout for layout in named if all(c in columns for c in layout)), None)


def _missing_layout(fmt: DataFormat, columns: Sequence[str], text_field: str) -> DataError:
    options = "; ".join(" and ".join(text_field if c == "text" else c for c in layout) for layout in fmt.layouts)
    partial = [c for c in ("prompt", "completion") if c in columns]
    fix = (
        f" It has {partial[0]} without {'completion' if partial[0] == 'prompt' else 'prompt'}: a prompt-only dataset "
        "is for online algorithms (GRPO), which write the completions themselves."
        if len(partial) == 1
        else ""
    )
    if "text" in fmt.columns and text_field == "text" and not partial:
        fix += " A column of plain text under another name: set dataset_text_field to it."
    return DataError(
        f"the {fmt.name} format needs one of these column sets: {options}; the dataset has "
        f"{', '.join(columns) or 'none'}.{fix} Fix: rename or add the columns (dataset.rename_column(...)).",
        column=fmt.layouts[0][0],
    )


def check_dataset(
    dataset: Any, data_format: DataFormat | str, name: str | None = None, *, text_field: str = "text"
) -> Any:
    """Check every row against a data format of the spec (a `DataFormat`, or its name, e.g. 'prompt-only'); returns
    the dataset, ready for TRL. `name` is the argument it came in (e.g. train_dataset), for errors; `text_field` is
    the column a format's `text` is read from (SFT's dataset_text_field).

    A plain list or tuple of rows becomes a `datasets.Dataset` as `from_list` builds it. A prompt-only dataset with a
    `messages` column and no `prompt` column gets it renamed to `prompt`.
    """
    fmt = data_format if isinstance(data_format, DataFormat) else FORMATS_BY_NAME.get(data_format)
    if fmt is None:
        raise ValueError(f"unknown data format {data_format!r}")
    string_column = text_field if fmt.string_column == "text" else fmt.string_column
    dataset = _as_dataset(dataset, name or "train_dataset/eval_dataset", name or "train_dataset", string_column)
    format_name = fmt.name
    columns = list(dataset.column_names)
    renamed = format_name == PROMPT_ONLY.name and "prompt" not in columns and "messages" in columns
    if renamed:
        dataset = dataset.rename_column("messages", "prompt")
        columns = list(dataset.column_names)
    layout = layout_of(fmt, columns, text_field)
    if layout is None:
        raise _missing_layout(fmt, columns, text_field)
    needed = layout
    missing = [c for c in needed if c not in columns]
    if missing:
        read_as_header = [c for c in columns if _looks_like_data(c)]
        fix = (
            f" The column names look like data ({', '.join(map(repr, read_as_header))}): a CSV file's first line is "
            f"always read as its header. Fix: add a header line such as {','.join(fmt.columns)} at the top of the "
            "file."
            if read_as_header
            else " Fix: rename or add the column (dataset.rename_column(...))."
        )
        raise DataError(
            f"missing column {missing[0]!r}: the {format_name} format needs columns {', '.join(needed)}; the dataset "
            f"has {', '.join(columns) or 'none'}.{fix}",
            column=missing[0],
        )
    if len(dataset) == 0:
        raise DataError(
            f"the dataset has no rows; the {format_name} format needs at least one. Fix: check the "
            "split or the filter that produced it."
        )
    kinds: dict[str, tuple[str, int]] = {}
    read = ("prompt", "chosen", "rejected", "completion") if not fmt.layouts else layout
    for column in (c for c in read if c in columns):
        shown = "messages" if renamed and column == "prompt" else column  # the name the user wrote
        _check_text_column(column_values(dataset, column), shown, format_name, kinds)
    if fmt.layouts and len(layout) == 1:  # one column: messages must be chat messages, the text column plain text
        wanted = "conversational" if layout[0] == "messages" else "standard"
        if kinds["kind"][0] != wanted:
            row = kinds["kind"][1]
            other = "a list of {role, content} messages" if wanted == "conversational" else "a string"
            raise DataError(
                f"column {layout[0]!r}, row {row}: {kinds['kind'][0]} data; the {format_name} format reads "
                f"{layout[0]!r} as {other}. Fix: "
                + (
                    "put chat messages in 'messages'"
                    if wanted == "conversational"
                    else "name a column of chat messages 'messages'"
                )
                + ".",
                column=layout[0],
                row=row,
            )
    if "label" in needed:
        for row, label in enumerate(column_values(dataset, "label")):
            if not isinstance(label, bool):
                raise DataError(
                    f"column 'label', row {row}: got {label!r} ({type(label).__name__}); the {format_name} format "
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


def from_list(
    items: Iterable[str | Mapping[str, Any]], *, where: str = "from_list", string_column: str = "prompt"
) -> Any:
    """A `datasets.Dataset` from strings (each becomes a row of `string_column`: a prompt, or SFT's text) or mappings
    (rows as they are); `where` names the list in errors."""
    from datasets import Dataset

    return Dataset.from_list(list_rows(items, where, string_column))


def list_rows(
    items: Iterable[str | Mapping[str, Any]], where: str = "from_list", string_column: str = "prompt"
) -> list[dict[str, Any]]:
    """The rows of `from_list`; `where` names the list in errors (e.g. `dataset.list`, `train_dataset`)."""
    rows: list[dict[str, Any]] = []
    kinds = set()
    for i, item in enumerate(items):
        if isinstance(item, str):
            rows.append({string_column: item})
            kinds.add("str")
        elif isinstance(item, Mapping):
            rows.append(dict(item))
            kinds.add("mapping")
        else:
            raise DataError(
                f"{where}: row {i} is {type(item).__name__}; allowed: a string (a prompt) or a mapping "
                "(a row). Fix: convert that item.",
                row=i,
            )
    if len(kinds) > 1:
        raise DataError(
            f"{where}: got both strings and mappings; a dataset's rows must share one layout. Fix: "
            "write every item as a mapping, e.g. {'prompt': ...}."
        )
    if not rows:
        raise DataError(f"{where}: got no items. Fix: give at least one row.")
    same_layout(rows, where)
    return rows
