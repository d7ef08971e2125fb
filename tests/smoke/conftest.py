"""The README spec's examples run in a scratch folder with TEXTRL_HOME there, so `textrl:tiny` is built once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def textrl_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("textrl_home")
    before = os.environ.get("TEXTRL_HOME")
    os.environ["TEXTRL_HOME"] = str(home)
    import torch

    torch.set_num_threads(1)  # 2 shared cores (shared/TRL-NOTES.md)
    yield home
    if before is None:
        os.environ.pop("TEXTRL_HOME", None)
    else:
        os.environ["TEXTRL_HOME"] = before


@pytest.fixture
def workdir(textrl_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples write out/...: each runs in a folder of its own."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
