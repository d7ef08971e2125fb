"""Long steps show progress: reading a large JSON Lines file draws a bar on stderr; a small one stays quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textrl.data import PROGRESS_BYTES, jsonl_rows


def test_large_jsonl_shows_a_progress_bar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big.jsonl"
    line = json.dumps({"prompt": "x" * 200}) + "\n"
    path.write_text(line * (PROGRESS_BYTES // len(line) + 10), encoding="utf-8")
    rows = jsonl_rows(path)
    assert len(rows) == PROGRESS_BYTES // len(line) + 10
    err = capsys.readouterr().err
    assert "reading big.jsonl: 100%" in err, err[-500:]


def test_small_jsonl_is_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "small.jsonl"
    path.write_text('{"prompt": "hi"}\n' * 10, encoding="utf-8")
    assert len(jsonl_rows(path)) == 10
    assert capsys.readouterr().err == ""
