"""Shared test set-up: one thread for torch (2 shared cores), and the repository root."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# DPO and KTO runs fill the reference cache by default: the suite's own folder (its subprocesses inherit it), not
# the user's ~/.cache, and empty at the start of every session
os.environ["TEXTRL_REFERENCE_CACHE"] = tempfile.mkdtemp(prefix="textrl-reference-cache-")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
