"""The code the docs show works: every Python file a README/docs block names runs on the offline tiny model
(except docs/examples/legacy/, which only compiles: tests/unit/test_docs.py), and every YAML config passes
`textrl-train --dry-run`. The files come from the docs themselves, so a new block is run without a new test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..doc_blocks import ROOT, documented_files, runnable_python

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
TIMEOUT = 300


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The subprocesses' environment: TEXTRL_HOME with textrl:tiny built once (not the user's ~/.cache)."""
    from textrl.tiny import build_tiny_model

    home = tmp_path_factory.mktemp("textrl_home")
    build_tiny_model(home / "tiny")
    return {**os.environ, "TEXTRL_HOME": str(home), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def python_runs(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[Path, tuple[int, str, Path]]:
    """Each documented Python file started at once, in its own empty working directory; (status, stderr, cwd)."""
    started = {}
    for path in runnable_python():
        cwd = tmp_path_factory.mktemp(path.stem)
        process = subprocess.Popen(
            [sys.executable, str(path)], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        started[path] = (process, cwd)
    done = {}
    try:
        for path, (process, cwd) in started.items():
            _, stderr = process.communicate(timeout=TIMEOUT)
            done[path] = (process.returncode, stderr, cwd)
    finally:
        for process, _ in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return done


@pytest.mark.parametrize("path", runnable_python(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_python_runs(path: Path, python_runs: dict[Path, tuple[int, str, Path]]) -> None:
    status, stderr, cwd = python_runs[path]
    assert status == 0, f"{path.relative_to(ROOT)} failed:\n{stderr[-3000:]}"
    if ".train()" in path.read_text(encoding="utf-8"):  # it trained: each run leaves its manifest
        assert list(cwd.rglob("textrl_manifest.json")), f"{path.relative_to(ROOT)} trained but wrote no manifest"


@pytest.mark.parametrize("path", documented_files(".yaml"), ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_config_passes_the_dry_run(path: Path, env: dict[str, str], tmp_path: Path) -> None:
    done = subprocess.run([str(BIN / "textrl-train"), "--config", str(path), "--dry-run"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=TIMEOUT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "dry run: the run would start" in done.stdout
