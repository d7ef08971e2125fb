"""The spec's data formats are the only statement of the columns a dataset needs: the runtime checks read them."""

from __future__ import annotations

from typing import Any

import pytest

from textrl import spec
from textrl.data import Rows, check_dataset
from textrl.errors import DataError
from textrl.spec.formats import SUPERVISED


def test_every_algorithm_format_is_registered_by_name() -> None:
    for algo in spec.ALGORITHMS:
        assert spec.FORMATS_BY_NAME[algo.data_format.name] == algo.data_format


@pytest.mark.parametrize(
    ("name", "required", "optional"),
    [
        ("prompt-only", ("prompt",), ()),
        ("preference (paired)", ("chosen", "rejected"), ("prompt",)),
        ("unpaired preference", ("prompt", "completion", "label"), ()),
        ("preference (implicit prompt allowed)", ("chosen", "rejected"), ("prompt",)),
    ],
)
def test_required_and_optional_columns(name: str, required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    fmt = spec.FORMATS_BY_NAME[name]
    assert (fmt.required, fmt.optional) == (required, optional)
    assert set(fmt.columns) == set(required) | set(optional)


def test_optional_column_must_be_one_of_the_columns() -> None:
    with pytest.raises(ValueError, match="optional prompt not among its columns"):
        spec.DataFormat(name="x", columns=("chosen",), optional=("prompt",), description="", example={})


@pytest.mark.parametrize("fmt", spec.FORMATS, ids=lambda f: f.name)
def test_example_row_passes_its_format_by_object_and_by_name(fmt: spec.DataFormat) -> None:
    rows = Rows([dict(fmt.example)])
    assert check_dataset(rows, fmt) is rows
    assert check_dataset(rows, fmt.name) is rows


@pytest.mark.parametrize("fmt", spec.FORMATS, ids=lambda f: f.name)
def test_optional_columns_may_be_left_out(fmt: spec.DataFormat) -> None:
    rows = Rows([{k: v for k, v in fmt.example.items() if k not in fmt.optional}])
    check_dataset(rows, fmt)


@pytest.mark.parametrize("fmt", spec.FORMATS, ids=lambda f: f.name)
def test_each_required_column_is_needed(fmt: spec.DataFormat) -> None:
    for column in fmt.required:
        rows = Rows([{k: v for k, v in fmt.example.items() if k != column} | {"other": "x"}])
        with pytest.raises(DataError, match=rf"missing column '{column}': the .* format needs columns "):
            check_dataset(rows, fmt)


@pytest.mark.parametrize("layout", SUPERVISED.layouts, ids=" and ".join)
def test_a_supervised_dataset_has_one_of_its_layouts(layout: tuple[str, ...]) -> None:
    values = {"text": "2 + 2 = 4", "messages": _chat("user", "assistant"), "prompt": "2 + 2 =", "completion": " 4"}
    assert check_dataset(Rows([{c: values[c] for c in layout}]), SUPERVISED) is not None
    with pytest.raises(DataError, match=r"the supervised format needs one of these column sets: prompt and completion; "
                       r"messages; text; the dataset has other\. .*Fix: rename or add the columns"):  # fmt: skip
        check_dataset(Rows([{"other": "x"}]), SUPERVISED)


def test_supervised_rows_read_as_their_layout_says() -> None:
    with pytest.raises(DataError, match=r"column 'messages', row 0: standard data; the supervised format reads "
                       r"'messages' as a list of \{role, content\} messages"):  # fmt: skip
        check_dataset(Rows([{"messages": "hello"}]), SUPERVISED)
    with pytest.raises(DataError, match=r"It has prompt without completion: a prompt-only dataset is for online"):
        check_dataset(Rows([{"prompt": "hello"}]), SUPERVISED)
    with pytest.raises(DataError, match=r"column 'body', row 1: empty text"):
        check_dataset(Rows([{"body": "a"}, {"body": " "}]), SUPERVISED, text_field="body")


def test_unknown_format_name() -> None:
    with pytest.raises(ValueError, match="unknown data format 'nope'"):
        check_dataset(Rows([{"prompt": "hi"}]), "nope")


def _chat(*roles: str) -> list[dict[str, str]]:
    return [{"role": role, "content": f"text of {role}"} for role in roles]


# (format, the row with a role no template knows, regex); each row's twin writes the role the message suggests
UNKNOWN_ROLES = [
    ("prompt-only", {"messages": _chat("system", "usr")},
     r"column 'messages', row 1, message 1: unknown role 'usr'\. Did you mean 'user'\? Allowed roles: system, user, "
     r"assistant, tool, developer, function, ipython; a chat template skips or misplaces a message of any other role\. "
     r"Fix: write 'user' in that row"),
    ("prompt-only", {"prompt": _chat("human")}, r"column 'prompt', row 1, message 0: unknown role 'human'\. Did you "
     r"mean 'user'\?"),
    ("preference (paired)", {"prompt": _chat("user"), "chosen": _chat("assistant"), "rejected": _chat("gpt")},
     r"column 'rejected', row 1, message 0: unknown role 'gpt'\. Did you mean 'assistant'\?"),
    ("unpaired preference", {"prompt": _chat("User"), "completion": _chat("assistant"), "label": True},
     r"column 'prompt', row 1, message 0: unknown role 'User'\. Did you mean 'user'\?"),
    ("prompt-only", {"prompt": _chat("narrator")}, r"unknown role 'narrator'\. Allowed roles: .* Fix: use one of those "
     r"roles in that row"),
]  # fmt: skip
FIXED = {"usr": "user", "human": "user", "gpt": "assistant", "User": "user", "narrator": "user"}


def _fixed(row: dict[str, Any]) -> dict[str, Any]:
    return {k: [{**m, "role": FIXED.get(m["role"], m["role"])} for m in v] if isinstance(v, list) else v
            for k, v in row.items()}  # fmt: skip


@pytest.mark.parametrize(("fmt", "row", "match"), UNKNOWN_ROLES, ids=list(FIXED))
def test_unknown_chat_role_is_refused(fmt: str, row: dict[str, Any], match: str) -> None:
    with pytest.raises(DataError, match=match) as info:
        check_dataset(Rows([_fixed(row), row]), fmt)  # row 0 is the twin: the same row with the role corrected
    assert info.value.row == 1 and info.value.column in row
    check_dataset(Rows([_fixed(row), _fixed(row)]), fmt)


def test_every_role_a_chat_template_reads_passes() -> None:
    """TRL's conversational roles, and those Llama 3 (ipython) and OpenAI-style templates (developer, function) read."""
    rows = Rows([{"prompt": _chat("developer", "system", "user", "assistant", "tool", "function", "ipython", "user")}])
    assert check_dataset(rows, "prompt-only") is rows
