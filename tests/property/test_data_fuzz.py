"""Fuzzed data files: JSON Lines and CSV bytes built from valid rows with the faults users' files carry (other
encodings, stray bytes, duplicate keys, unclosed quotes, deep nesting, over-long rows) either load or raise
TextRL's DataError naming the file, never a raw UnicodeDecodeError, DatasetGenerationError or RecursionError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from textrl import DataError
from textrl.data import from_hub, jsonl_rows

SETTINGS = settings(derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip

TEXT = st.text(max_size=30) | st.sampled_from(["café", "naïve", "日本語", "x" * 5000, '"', '""', "a,b", "\n"])
FAULT_NAMES = ["none", "latin-1", "utf-16", "stray byte", "duplicate key", "unclosed", "deep", "bom"]
FAULTS = st.sampled_from(FAULT_NAMES)


def _jsonl(rows: list[str], fault: str) -> bytes:
    lines = [json.dumps({"prompt": r}, ensure_ascii=False) for r in rows]
    if fault == "duplicate key":
        lines[-1] = lines[-1][:-1] + ', "prompt": "again"}'
    if fault == "unclosed":
        lines[-1] = lines[-1][:-2]
    if fault == "deep":
        lines[-1] = '{"prompt": "a", "x": ' + "[" * 3000 + "]" * 3000 + "}"
    text = "\n".join(lines) + "\n"
    return _encode(text, fault)


def _encode(text: str, fault: str) -> bytes:
    if fault == "latin-1":
        return text.encode("latin-1", errors="replace")
    if fault == "utf-16":
        return text.encode("utf-16")
    if fault == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    raw = text.encode()
    return raw[: len(raw) // 2] + b"\xff" + raw[len(raw) // 2 :] if fault == "stray byte" else raw


def _csv(rows: list[str], fault: str) -> bytes:
    quoted = ['"' + r.replace('"', '""') + '"' for r in rows]
    if fault == "unclosed":
        quoted[-1] = quoted[-1][:-1]
    return _encode("prompt\n" + "\n".join(quoted) + "\n", fault)


def _loads_or_names(read: Any, path: Path) -> None:
    try:
        read()
    except DataError as error:
        assert str(path) in str(error) and "Fix" in str(error), str(error)


@SETTINGS
@given(rows=st.lists(TEXT, min_size=1, max_size=6), fault=FAULTS)
def test_jsonl_loads_or_names_the_file(tmp_path_factory: Any, rows: list[str], fault: str) -> None:
    path = Path(tmp_path_factory.mktemp("fuzz")) / "rows.jsonl"
    path.write_bytes(_jsonl(rows, fault))
    _loads_or_names(lambda: jsonl_rows(path), path)


@pytest.mark.parametrize("kind", ["csv", "json"])
@pytest.mark.parametrize("fault", FAULT_NAMES)
@settings(SETTINGS, max_examples=4)
@given(rows=st.lists(TEXT, min_size=1, max_size=4))
def test_files_read_by_datasets_load_or_name_the_file(
    tmp_path_factory: Any, rows: list[str], fault: str, kind: str
) -> None:
    path = Path(tmp_path_factory.mktemp("fuzz")) / f"rows.{kind}"
    path.write_bytes(_csv(rows, fault) if kind == "csv" else _jsonl(rows, fault))
    _loads_or_names(lambda: from_hub(str(path)), path)
