"""Dataset builders and the per-format checks: each mistake names the column, the row and the format, beside a
passing twin. Runs before any model is loaded (imports `datasets` only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrl import DataError
from textrl.data import check_dataset, from_hub, from_jsonl, from_list

CHAT = [{"role": "user", "content": "Hi"}]

# (id, format, the bad rows, regex, the good rows)
CASES: list[tuple[str, str, list[dict[str, Any]], str, list[dict[str, Any]]]] = [
    ("missing prompt", "prompt-only", [{"question": "hi"}],
     r"missing column 'prompt': the prompt-only format needs columns prompt; the dataset has question\. Fix: rename",
     [{"prompt": "hi"}]),
    ("messages become prompt", "prompt-only", [{"text": 1}], r"missing column 'prompt'", [{"messages": CHAT}]),
    ("wrong type", "prompt-only", [{"prompt": 3}, {"prompt": 4}],
     r"column 'prompt', row 0: got int 3; the prompt-only format needs a string or a list of \{role, content\} messages",
     [{"prompt": "ok"}, {"prompt": "three"}]),
    ("empty text", "prompt-only", [{"prompt": "ok"}, {"prompt": "  "}], r"column 'prompt', row 1: empty text",
     [{"prompt": "ok"}, {"prompt": "x"}]),
    ("pairs without rejected", "preference (paired)", [{"prompt": "p", "chosen": "a"}],
     r"missing column 'rejected': the preference \(paired\) format needs columns chosen, rejected",
     [{"prompt": "p", "chosen": "a", "rejected": "b"}]),
    ("implicit prompt", "preference (paired)", [{"chosen": "a", "rejected": None}], r"column 'rejected', row 0: got NoneType",
     [{"chosen": "q a", "rejected": "q b"}]),
    ("None label", "unpaired preference", [{"prompt": "p", "completion": "c", "label": True}, {"prompt": "p", "completion": "c", "label": None}],
     r"column 'label', row 1: got None \(NoneType\); the unpaired preference format needs true \(desirable\) or false",
     [{"prompt": "p", "completion": "c", "label": True}, {"prompt": "p", "completion": "c", "label": False}]),
    ("int label", "unpaired preference", [{"prompt": "p", "completion": "c", "label": 1}], r"column 'label', row 0: got 1 \(int\)",
     [{"prompt": "p", "completion": "c", "label": True}]),
    ("reward pairs", "preference (implicit prompt allowed)", [{"prompt": "p", "chosen": "a"}], r"missing column 'rejected'",
     [{"chosen": "a", "rejected": "b"}]),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "bad", "match", "good"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_format_check_pair(fmt: str, bad: list[dict[str, Any]], match: str, good: list[dict[str, Any]]) -> None:
    from datasets import Dataset

    with pytest.raises(DataError, match=match) as info:
        check_dataset(Dataset.from_list(bad), fmt)
    assert info.value.column is not None
    checked = check_dataset(Dataset.from_list(good), fmt)
    assert len(checked) == len(good)


def test_mixed_layouts_are_named_before_arrow_sees_them(tmp_path: Path) -> None:
    with pytest.raises(
        DataError,
        match=r"from_list: column 'prompt', row 1: chat messages, but row 0 is text; a column "
        r"holds one layout throughout",
    ):
        from_list([{"prompt": "plain"}, {"prompt": CHAT}])
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"prompt": "a", "label": true}\n{"prompt": "b", "label": "yes"}\n')
    with pytest.raises(DataError, match=r"mixed.jsonl: column 'label', row 1: text, but row 0 is boolean"):
        from_jsonl(mixed)
    assert len(from_list([{"prompt": CHAT}, {"prompt": CHAT}])) == 2


def test_zero_rows() -> None:
    from datasets import Dataset

    empty = Dataset.from_dict({"prompt": []})
    with pytest.raises(DataError, match=r"the dataset has no rows; the prompt-only format needs at least one"):
        check_dataset(empty, "prompt-only")


def test_from_list() -> None:
    ds = from_list(["a", "b"])
    assert ds.column_names == ["prompt"] and ds["prompt"] == ["a", "b"]
    assert from_list([{"prompt": "p", "chosen": "a", "rejected": "b"}]).column_names == ["prompt", "chosen", "rejected"]
    with pytest.raises(DataError, match=r"from_list: got both strings and mappings"):
        from_list(["a", {"prompt": "b"}])
    with pytest.raises(DataError, match=r"from_list: row 1 is int; allowed: a string \(a prompt\) or a mapping"):
        from_list(["a", 3])
    with pytest.raises(DataError, match=r"from_list: got no items"):
        from_list([])


def test_from_jsonl_names_the_broken_line(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text('{"prompt": "a"}\n\n{"prompt": "b"}\n')
    assert from_jsonl(good)["prompt"] == ["a", "b"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "a"}\n{"prompt": "b",}\n')
    with pytest.raises(DataError, match=rf"{bad}:2: not valid JSON .*Fix: correct or remove that line"):
        from_jsonl(bad)
    listed = tmp_path / "list.jsonl"
    listed.write_text('["a"]\n')
    with pytest.raises(DataError, match=r"list.jsonl:1: a JSON list, expected an object"):
        from_jsonl(listed)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_from_hub_reads_local_files_with_split_slicing(tmp_path: Path, suffix: str) -> None:
    source = from_list([f"prompt {i}" for i in range(10)])
    path = tmp_path / f"data{suffix}"
    {".jsonl": source.to_json, ".csv": source.to_csv, ".parquet": source.to_parquet}[suffix](str(path))
    part = from_hub(str(path), split="train[:30%]")
    assert part["prompt"] == ["prompt 0", "prompt 1", "prompt 2"]
    with pytest.raises(DataError, match=r"unknown file type '\.txt'"):
        (tmp_path / "x.txt").write_text("x")
        from_hub(str(tmp_path / "x.txt"))


# The bad-file catalogue: (id, file name, bytes, regex). Each is read through every path a run reads files
# (from_jsonl for .jsonl, from_hub for any local file, the dry run's light reader) and must be a DataError naming the
# file, never a raw UnicodeDecodeError, DatasetGenerationError or RecursionError.
BAD_FILES = [
    ("latin-1 jsonl", "d.jsonl", b'{"prompt": "ok"}\n{"prompt": "caf\xe9"}\n', r"d\.jsonl:2: not UTF-8 text \(byte 0xe9 at column 16\)"),
    ("latin-1 csv", "d.csv", b"prompt\nok\ncaf\xe9\n", r"d\.csv:3: not UTF-8 text \(byte 0xe9 at column 4\)"),
    ("latin-1 json", "d.json", b'{"prompt": "ok"}\n{"prompt": "caf\xe9"}\n', r"d\.json:2: not UTF-8 text"),
    ("utf-16 jsonl", "d.jsonl", '{"prompt": "ok"}\n'.encode("utf-16"), r"d\.jsonl:1: not UTF-8 text \(byte 0xff at column 1\)"),
    ("unclosed quote csv", "d.csv", b'prompt\n"hello\nworld\n', r"d\.csv: the CSV reader stopped: .*EOF inside string .*\(a quote that is never closed\)\. Fix: close or double the quote"),
    ("duplicate key", "d.jsonl", b'{"prompt": "a", "prompt": "b"}\n', r"d\.jsonl:1: key 'prompt' appears twice in one object"),
    ("duplicate nested key", "d.jsonl", b'{"prompt": [{"role": "user", "content": "a", "content": "b"}]}\n', r"d\.jsonl:1: key 'content' appears twice"),
    ("deep nesting", "d.jsonl", b'{"prompt": "a", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", r"d\.jsonl:1: nested too deeply to read"),
    ("unknown split", "d.jsonl", b'{"prompt": "a"}\n', r"d\.jsonl: split 'test': Unknown split \"test\"\. Should be one of \['train'\]\. A local file has one split"),
]  # fmt: skip
GOOD_FILES = {"d.jsonl": b'{"prompt": "ok"}\n{"prompt": "caf\xc3\xa9"}\n', "d.csv": b"prompt\nok\ncaf\xc3\xa9\n",
              "d.json": b'{"prompt": "ok"}\n{"prompt": "caf\xc3\xa9"}\n'}  # fmt: skip


@pytest.mark.parametrize(("name", "raw", "match"), [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_bad_files_are_named_errors(tmp_path: Path, name: str, raw: bytes, match: str) -> None:
    from textrl.data import from_section
    from textrl.spec.sections import DatasetSection

    path = tmp_path / name
    path.write_bytes(raw)
    split = "test" if "Unknown split" in match else "train"
    readers = [lambda: from_hub(str(path), split=split)]
    if name.endswith(".jsonl") and split == "train":
        readers += [lambda: from_jsonl(path), lambda: from_section(DatasetSection(path=name), tmp_path, light=True)]
    for read in readers:
        with pytest.raises(DataError, match=match):
            read()
    path.write_bytes(GOOD_FILES[name])
    assert list(from_hub(str(path))["prompt"]) == ["ok", "café"]


# --- mixtures (dataset.mixture), columns and held-out rows --------------------------------------------------------


def _numbered(path: Path, name: str, count: int) -> None:
    path.write_text("".join(json.dumps({"prompt": f"{name} {i}", "extra": i}) + "\n" for i in range(count)))


def test_mixture_with_fractions_is_trls_mixture(tmp_path: Path) -> None:
    """The same rows, in the same order, as TRL's own get_dataset for a DatasetMixtureConfig with fractions."""
    from trl import DatasetMixtureConfig, get_dataset
    from trl.scripts.utils import DatasetConfig

    from textrl.data import from_section
    from textrl.spec.sections import DatasetSection

    _numbered(tmp_path / "a.jsonl", "a", 30)
    _numbered(tmp_path / "b.jsonl", "b", 12)
    trl_rows = get_dataset(
        DatasetMixtureConfig(
            datasets=[
                DatasetConfig(path="json", data_files=str(tmp_path / "a.jsonl"), columns=["prompt"], fraction=0.7),
                DatasetConfig(path="json", data_files=str(tmp_path / "b.jsonl"), columns=["prompt"], fraction=0.3),
            ]
        )
    )["train"]
    section = DatasetSection(
        mixture=[
            {"path": "a.jsonl", "columns": ["prompt"], "fraction": 0.7},
            {"path": "b.jsonl", "columns": ["prompt"], "fraction": 0.3},
        ]
    )
    for light in (False, True):
        rows = from_section(section, tmp_path, light=light)
        assert list(rows["prompt"]) == list(trl_rows["prompt"]) and rows.column_names == ["prompt"]
    assert len(trl_rows) == 40  # b's 12 rows are 30 %: 28 of a's rows join them


def test_mixture_weights_and_held_out_rows(tmp_path: Path) -> None:
    """weight keeps a seeded random share of each dataset (the recipe collections' form); test_split_size holds
    rows out as datasets' train_test_split would, the same rows each time."""
    from textrl.data import load_split
    from textrl.spec.sections import DatasetSection

    _numbered(tmp_path / "a.jsonl", "a", 20)
    _numbered(tmp_path / "b.jsonl", "b", 10)
    section = DatasetSection(
        mixture=[{"path": "a.jsonl", "weight": 0.5}, {"path": "b.jsonl"}], test_split_size=0.2, seed=3
    )
    for light in (False, True):
        train, held = load_split(section, tmp_path, light=light)
        assert (len(train), len(held)) == (16, 4)  # 10 of a + 10 of b; a fifth held out, rounded up
        prompts = list(train["prompt"]) + list(held["prompt"])
        assert sum(p.startswith("a ") for p in prompts) == 10 and len(set(prompts)) == 20
        again = load_split(section, tmp_path, light=light)
        assert list(again[1]["prompt"]) == list(held["prompt"])  # seeded
    whole = DatasetSection(path="a.jsonl", test_split_size=25)
    with pytest.raises(DataError, match=r"test_split_size=25 leaves 25 of 20 rows for evaluation"):
        load_split(whole, tmp_path)


def test_mixture_parts_must_agree_on_columns(tmp_path: Path) -> None:
    from textrl.data import from_section
    from textrl.spec.sections import DatasetSection

    _numbered(tmp_path / "a.jsonl", "a", 4)
    (tmp_path / "b.jsonl").write_text(json.dumps({"prompt": "x"}) + "\n")
    section = DatasetSection(mixture=[{"path": "a.jsonl"}, {"path": "b.jsonl", "split": "train[:1]"}])
    with pytest.raises(DataError, match=r"dataset\.mixture: the parts have different columns \(\[0\] prompt, extra; "
                       r"\[1\] prompt\)\. Fix: give each part the same columns"):  # fmt: skip
        from_section(section, tmp_path)
    fixed = DatasetSection(mixture=[{"path": "a.jsonl", "columns": ["prompt"]}, {"path": "b.jsonl"}])
    assert len(from_section(fixed, tmp_path)) == 5
    with pytest.raises(DataError, match=r"dataset\.mixture\[1\]\.columns: answer is not in the data; its columns: "
                       r"prompt\. Fix"):  # fmt: skip
        from_section(DatasetSection(mixture=[{"path": "a.jsonl"}, {"path": "b.jsonl", "columns": ["answer"]}]),
                     tmp_path)  # fmt: skip
