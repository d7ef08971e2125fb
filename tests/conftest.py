"""Shared test set-up: one thread for torch (2 shared cores), and the repository root."""

from __future__ import annotations

import atexit
import os
import shutil
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
atexit.register(shutil.rmtree, os.environ["TEXTRL_REFERENCE_CACHE"], ignore_errors=True)


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


HEAVIEST_FIRST = (
    "tests/real/test_smollm2.py",
    "tests/cli/test_interrupt_stress.py",
    "tests/cli/test_careless_cli.py",
    "tests/cli/test_train_cli.py",
    "tests/cli/test_interrupt_cli.py",
    "tests/real/test_quantized_real.py",
    "tests/cli/test_resume_checks.py",
    "tests/cli/test_reference_cache_cli.py",
    "tests/property/test_schema_property.py",
    "tests/smoke/test_readme_spec.py",
)
"""The test files that take longest (pytest --durations, 2026-12-07), started first when the suite runs on several
workers (scripts/test.sh: pytest-xdist, a file per worker at a time), so that no long file starts last."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # one process: the files in their own order
    rank = {name: i for i, name in enumerate(HEAVIEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(item.path).relative_to(ROOT).as_posix(), len(rank)))
