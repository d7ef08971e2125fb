"""Datasets a careless user gives (issue 31): a hub dataset offline, a path that is a hub id, a glob, an empty folder
or a file beside data_files, CSV files pandas misreads, and plain Python lists given to a trainer. Each mistake is a
DataError naming the field or line and the fix, beside a passing twin that does it right. Imports `datasets`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrl import DataError
from textrl.data import check_dataset, from_hub, from_section, load_split
from textrl.spec.sections import DatasetSection

pytestmark = pytest.mark.slow


def _jsonl(path: Path, *prompts: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))
    return path


def _read(section: dict[str, Any], base: Path) -> Any:
    return from_section(DatasetSection(**section), base)


# --- the hub, offline -------------------------------------------------------------------------------------------


def test_hub_dataset_offline_and_not_cached(tmp_path: Path) -> None:
    from datasets import config

    if not config.HF_HUB_OFFLINE:  # tests/conftest.py sets HF_HUB_OFFLINE=1; online, datasets would try the hub
        pytest.skip("needs HF_HUB_OFFLINE=1")
    offline = (
        r"dataset\.hub: 'someone/not-cached': offline mode is on \(HF_HUB_OFFLINE or HF_DATASETS_OFFLINE\), and the "
        r"dataset is not in the local datasets cache \(.+\)\. Fix: point path: at a local copy of the data .*"
        r"HF_DATASETS_OFFLINE=1 reads it from the cache"
    )
    with pytest.raises(DataError, match=offline):
        _read({"hub": "someone/not-cached"}, tmp_path)
    with pytest.raises(DataError, match=r"from_hub: 'someone/not-cached': offline mode is on"):
        from_hub("someone/not-cached")
    _jsonl(tmp_path / "train.jsonl", "a", "b")  # the fix: a local copy
    assert list(_read({"path": "train.jsonl"}, tmp_path)["prompt"]) == ["a", "b"]


def test_hub_dataset_that_does_not_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Online, a misspelt id is datasets' DatasetNotFoundError (simulated: this machine has no hub)."""
    import datasets
    from datasets.exceptions import DatasetNotFoundError

    def missing(name: str, *args: Any, **kwargs: Any) -> Any:
        raise DatasetNotFoundError(f"Dataset '{name}' doesn't exist on the Hub or cannot be accessed.")

    monkeypatch.setattr(datasets, "load_dataset", missing)
    with pytest.raises(DataError, match=r"dataset\.hub: 'trl-lib/tldrr' is not a dataset on the hub, or it is "
                       r"private or gated .*Fix: check the id"):  # fmt: skip
        _read({"hub": "trl-lib/tldrr"}, tmp_path)


# --- path: what it names ----------------------------------------------------------------------------------------


def test_path_holding_a_hub_id(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"dataset\.path: 'trl-lib/tldr' is no file or folder under .*; it looks like a "
                       r"hub dataset id\. Fix: write hub: trl-lib/tldr"):  # fmt: skip
        _read({"path": "trl-lib/tldr"}, tmp_path)
    with pytest.raises(DataError, match=r"dataset\.path: .*data/missing\.jsonl does not exist"):  # a local typo
        _read({"path": "data/missing.jsonl"}, tmp_path)
    _jsonl(tmp_path / "trl-lib/tldr/train.jsonl", "a")  # a local folder of that name is read as one
    assert list(_read({"path": "trl-lib/tldr"}, tmp_path)["prompt"]) == ["a"]


def test_path_holding_a_glob(tmp_path: Path) -> None:
    _jsonl(tmp_path / "data/a.jsonl", "a")
    _jsonl(tmp_path / "data/b.jsonl", "b")
    with pytest.raises(DataError, match=r"dataset\.path: 'data/\*\.jsonl' is a glob pattern \(it matches 2 files in "
                       r".*data\); path names one file or folder\. Fix: .* path: data, data_files: \[\"\*\.jsonl\"\]"):  # fmt: skip
        _read({"path": "data/*.jsonl"}, tmp_path)
    fixed = _read({"path": "data", "data_files": ["*.jsonl"]}, tmp_path)  # the fix, as the message writes it
    assert sorted(fixed["prompt"]) == ["a", "b"]


def test_path_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match=r"dataset\.path: the folder .*data holds no data files \(it is empty\)\. Fix: "
                       r"put \.jsonl, \.json, \.csv or \.parquet files in it"):  # fmt: skip
        _read({"path": "data"}, tmp_path)
    _jsonl(tmp_path / "data/train.jsonl", "a")
    assert list(_read({"path": "data"}, tmp_path)["prompt"]) == ["a"]


def test_data_files_that_match_nothing(tmp_path: Path) -> None:
    _jsonl(tmp_path / "data/train.jsonl", "a")
    with pytest.raises(DataError, match=r"dataset\.data_files: '\*\.csv' matches no file; data_files is read from the "
                       r"path folder, .*data \(it holds train\.jsonl\)\. Fix: give patterns relative to that folder"):  # fmt: skip
        _read({"path": "data", "data_files": "*.csv"}, tmp_path)
    with pytest.raises(DataError, match=r"dataset\.data_dir: 'nope': no data files in .*data/nope; data_dir is read "
                       r"from the path folder"):  # fmt: skip
        _read({"path": "data", "data_dir": "nope"}, tmp_path)
    assert list(_read({"path": "data", "data_files": "*.jsonl"}, tmp_path)["prompt"]) == ["a"]


def test_data_files_beside_a_file_path(tmp_path: Path) -> None:
    _jsonl(tmp_path / "data/train.jsonl", "a")
    (tmp_path / "data/more.csv").write_text("prompt\nb\n")
    with pytest.raises(DataError, match=r"dataset\.data_files: 'more\.csv' was given with path: data/train\.jsonl, "
                       r"which is a file; data_files picks files inside a folder .*Fix: drop data_files to read "
                       r"data/train\.jsonl, or set path to the folder"):  # fmt: skip
        _read({"path": "data/train.jsonl", "data_files": "more.csv"}, tmp_path)
    assert list(_read({"path": "data/train.jsonl"}, tmp_path)["prompt"]) == ["a"]
    assert list(_read({"path": "data", "data_files": "more.csv"}, tmp_path)["prompt"]) == ["b"]


def test_path_dot_with_data_files_reads_from_the_config_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`path: .` is the config's folder and data_files are relative to it; datasets itself fails on a folder named
    `.` ("dataset_name should be specified but got None"), as a config beside the working folder gives."""
    _jsonl(tmp_path / "data/a.jsonl", "a")
    monkeypatch.chdir(tmp_path)
    section = DatasetSection(path=".", data_files=["data/*.jsonl"], test_split_size=None)
    for light in (False, True):
        assert list(load_split(section, Path("."), light=light)[0]["prompt"]) == ["a"]
    with pytest.raises(DataError, match=r"dataset\.data_files: \['nope/\*\.jsonl'\] matches no file; data_files is "
                       r"read from the path folder, "):  # fmt: skip
        _read({"path": ".", "data_files": ["nope/*.jsonl"]}, Path("."))


# --- CSV files: what pandas would misread -----------------------------------------------------------------------

# (id, the file, the error or None when it now reads as written, a twin file that reads, its rows)
CSV_CASES: list[tuple[str, str, str | None, str, list[dict[str, Any]]]] = [
    ("semicolons", "prompt;chosen;rejected\nhi;a, b;c\n", None, "prompt,chosen,rejected\nhi,\"a, b\",c\n",
     [{"prompt": "hi", "chosen": "a, b", "rejected": "c"}]),
    ("tabs", "prompt\tchosen\trejected\nhi\ta\tc\n", None, "prompt,chosen,rejected\nhi,a,c\n",
     [{"prompt": "hi", "chosen": "a", "rejected": "c"}]),
    ("extra field, first row", "prompt,chosen,rejected\nhi, there,a,b\nyo,c,d\n",
     r"d\.csv:2: 4 fields, more than the header's 3 \(prompt, chosen, rejected\); the CSV reader cannot tell which "
     r"field is which\. Fix: quote a field that holds ',' \(\"a, b\"\), or correct that line",
     "prompt,chosen,rejected\n\"hi, there\",a,b\nyo,c,d\n",
     [{"prompt": "hi, there", "chosen": "a", "rejected": "b"}, {"prompt": "yo", "chosen": "c", "rejected": "d"}]),
    ("extra field, later row", "prompt,chosen,rejected\nyo,c,d\n\n\"two\nlines\",e,f\nhi, there,a,b\n",
     r"d\.csv:6: 4 fields, more than the header's 3", "prompt,chosen,rejected\nyo,c,d\n",
     [{"prompt": "yo", "chosen": "c", "rejected": "d"}]),
    ("missing field", "prompt,chosen,rejected\nyo,c,d\nhi,a\n",
     r"d\.csv:3: 2 fields, fewer than the header's 3 \(prompt, chosen, rejected\); the CSV reader would fill the "
     r"missing ones with None\. Fix: add the missing fields", "prompt,chosen,rejected\nhi,a,b\n",
     [{"prompt": "hi", "chosen": "a", "rejected": "b"}]),
    ("header only", "prompt,chosen,rejected\n",
     r"d\.csv: a header line \(prompt, chosen, rejected\) and no rows\. Fix: add rows below the header",
     "prompt,chosen,rejected\nhi,a,b\n", [{"prompt": "hi", "chosen": "a", "rejected": "b"}]),
    ("empty", "", r"d\.csv: empty file, no header line and no rows\. Fix:", "prompt,chosen,rejected\nhi,a,b\n",
     [{"prompt": "hi", "chosen": "a", "rejected": "b"}]),
    ("duplicate header", "prompt,prompt,chosen,rejected\nhi,ho,a,b\n",
     r"d\.csv:1: column 'prompt' appears twice in the header \(fields 1 and 2\); the CSV reader would silently rename "
     r"the second to 'prompt\.1'\. Fix: rename or remove one of them",
     "prompt,context,chosen,rejected\nhi,ho,a,b\n",
     [{"prompt": "hi", "context": "ho", "chosen": "a", "rejected": "b"}]),
    ("no header", "What is 2+2?,four,five\nWhat is 3+3?,six,seven\n",
     r"missing column 'chosen': .*the dataset has What is 2\+2\?, four, five\. The column names look like data "
     r"\('What is 2\+2\?'\): a CSV file's first line is always read as its header\. Fix: add a header line such as "
     r"prompt,chosen,rejected", "prompt,chosen,rejected\nWhat is 2+2?,four,five\n",
     [{"prompt": "What is 2+2?", "chosen": "four", "rejected": "five"}]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "match", "good", "rows"), [c[1:] for c in CSV_CASES], ids=[c[0] for c in CSV_CASES])
def test_csv_files_pandas_misreads(
    tmp_path: Path, text: str, match: str | None, good: str, rows: list[dict[str, Any]]
) -> None:
    path = tmp_path / "d.csv"
    path.write_text(text)
    readers = [lambda: from_hub(str(path)), lambda: from_section(DatasetSection(path="d.csv"), tmp_path, light=True)]
    for read in readers:
        if match is None:  # read as it is written: the columns the header names, each row's fields in place
            data = read()
            assert data.to_list() == rows
            check_dataset(data, "preference (paired)")
        else:
            with pytest.raises(DataError, match=match):
                check_dataset(read(), "preference (paired)")
    path.write_text(good)
    assert from_hub(str(path)).to_list() == rows


def test_csv_with_empty_fields_reads_without_a_full_scan_error(tmp_path: Path) -> None:
    """An empty field is a missing value, not a short row: the scan that a missing value starts finds no fault, and
    the format check names the row."""
    path = tmp_path / "d.csv"
    path.write_text("prompt,chosen,rejected\nhi,a,b\nyo,,b\n")
    with pytest.raises(DataError, match=r"column 'chosen', row 1: got NoneType None"):
        check_dataset(from_hub(str(path)), "preference (paired)")


# --- a trainer's train_dataset in Python ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "rows"),
    [
        (["Say hi.", "Say bye."], [{"prompt": "Say hi."}, {"prompt": "Say bye."}]),
        (("Say hi.",), [{"prompt": "Say hi."}]),
        ([{"prompt": "Say hi."}], [{"prompt": "Say hi."}]),
    ],
)
def test_check_dataset_takes_a_plain_list(given: Any, rows: list[dict[str, Any]]) -> None:
    from datasets import Dataset

    checked = check_dataset(given, "prompt-only", "train_dataset")
    assert isinstance(checked, Dataset) and checked.to_list() == rows


@pytest.mark.parametrize(
    ("given", "match"),
    [
        (
            None,
            r"train_dataset: got None \(NoneType\); allowed: a datasets\.Dataset, or a list of rows as "
            r"textrl\.data\.from_list takes \(strings or dicts\)\. Fix: pass the rows",
        ),
        (3, r"train_dataset: got 3 \(int\); allowed: a datasets\.Dataset"),
        ({"prompt": ["a"]}, r"train_dataset: got a dict \(keys: prompt\); .*Fix: a list of rows .*Dataset\.from_dict"),
        (
            "data.jsonl",
            r"train_dataset: got the string 'data\.jsonl'; .*Fix: read it first, e\.g\. "
            r"train_dataset=textrl\.data\.from_hub\('data\.jsonl'\)",
        ),
        (iter(["a"]), r"train_dataset: got a list_iterator; "),
        (["a", 3], r"train_dataset: row 1 is int; allowed: a string \(a prompt\) or a mapping"),
        ([], r"train_dataset: got no items"),
    ],
    ids=["None", "int", "dict", "str", "iterator", "bad item", "empty"],
)
def test_check_dataset_names_the_argument(given: Any, match: str) -> None:
    with pytest.raises(DataError, match=match):
        check_dataset(given, "prompt-only", "train_dataset")


def test_check_dataset_refuses_a_dataset_dict() -> None:
    from datasets import Dataset, DatasetDict

    split = Dataset.from_list([{"prompt": "a"}])
    with pytest.raises(DataError, match=r"eval_dataset: got a DatasetDict with splits train, test; .*Fix: pass one "
                       r"split, e\.g\. eval_dataset=data\['train'\]"):  # fmt: skip
        check_dataset(DatasetDict(train=split, test=split), "prompt-only", "eval_dataset")
    with pytest.raises(DataError, match=r"train_dataset/eval_dataset: got None"):  # no name given: both arguments
        check_dataset(None, "prompt-only")
    assert check_dataset(DatasetDict(train=split)["train"], "prompt-only") is split


def test_online_trainer_takes_a_plain_list_of_prompts(tiny: Path, tmp_path: Path) -> None:
    """README's own example passes train_dataset=prompts, a list of strings."""
    from datasets import Dataset

    from textrl import OnlineTrainer, load_model

    from .conftest import fast, letters

    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=fast("grpo", tmp_path),
                            train_dataset=["Say hi."] * 4, eval_dataset=("Say bye.",))  # fmt: skip
    assert isinstance(trainer.train_dataset, Dataset) and trainer.train_dataset["prompt"] == ["Say hi."] * 4
    assert trainer.eval_dataset["prompt"] == ["Say bye."]
    with pytest.raises(DataError, match=r"got None \(NoneType\); allowed: a datasets\.Dataset, or a list of rows"):
        OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=fast("grpo", tmp_path), train_dataset=None)
