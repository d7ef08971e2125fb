"""The README's commands run as written: the quickstart trains and improves, and every example config builds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_runs_and_reward_rises() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples/quickstart.py")], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mean reward: first 5 steps" in done.stdout


@pytest.mark.parametrize("path", sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("examples/smollm2/*.yaml")]),
                         ids=lambda p: str(p.relative_to(ROOT / "examples")))  # fmt: skip
def test_show_trl_config_on_every_example(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _load("show_trl_config").main(str(path)) == 0
    out = capsys.readouterr().out
    assert "valid, algo=" in out and "fields that differ from TRL's defaults" in out


def test_show_trl_config_reports_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("algo: grpo\noutput_dir: out\nnum_generations: 3\n")
    assert _load("show_trl_config").main(str(bad)) == 1
    assert "not divisible by num_generations=3" in capsys.readouterr().err
