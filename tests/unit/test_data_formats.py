"""The spec's data formats are the only statement of the columns a dataset needs: the runtime checks read them."""

from __future__ import annotations

import pytest

from textrl import spec
from textrl.data import Rows, check_dataset
from textrl.errors import DataError


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


def test_unknown_format_name() -> None:
    with pytest.raises(ValueError, match="unknown data format 'nope'"):
        check_dataset(Rows([{"prompt": "hi"}]), "nope")
