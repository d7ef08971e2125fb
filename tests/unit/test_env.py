"""`textrl-train --env` (the version set for bug reports), `--print-schema`, and the tested-TRL-range check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from importlib import metadata
from pathlib import Path

import pytest

from textrl.trl_support.env import UntestedTRLWarning, trl_range_problem, warn_if_untested_trl

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "installed", ["1.13.0", "1.14.1", "1.15.0", "1.16.0", "1.16.3", "1.16.0.dev0", "1.16.1rc2", "1.16rc1"]
)
def test_tested_trl_releases_pass(installed: str) -> None:
    assert trl_range_problem(installed) is None


@pytest.mark.parametrize("installed", ["1.17.0", "1.12.2", "2.0.0rc1", "0.19.1", "1.17.0.dev0", "1.1rc6"])
def test_other_trl_releases_are_named_with_the_fix(installed: str) -> None:
    problem = trl_range_problem(installed)
    assert problem is not None
    assert f"trl {installed} is installed" in problem and "tested with trl>=1.13,<1.17" in problem
    assert "Fix: pip install 'trl>=1.13,<1.17'" in problem


def test_the_installed_trl_is_in_range_so_no_warning() -> None:
    assert trl_range_problem() is None, metadata.version("trl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_untested_trl()


def test_an_untested_trl_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    import textrl.trl_support.env

    monkeypatch.setattr(textrl.trl_support.env, "version", lambda package: "1.18.0" if package == "trl" else "1.0.0")
    with pytest.warns(UntestedTRLWarning, match=r"trl 1\.18\.0 is installed, but TextRL 1\.0\.0 was tested with"):
        warn_if_untested_trl()


def test_missing_trl_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    import textrl.trl_support.env

    monkeypatch.setattr(textrl.trl_support.env, "version", lambda package: None if package == "trl" else "1.0.0")
    assert trl_range_problem() == (
        "TRL is not installed; TextRL 1.0.0 needs trl>=1.13,<1.17. Fix: pip install 'trl>=1.13,<1.17'."
    )


def test_env_prints_the_version_set(tmp_path: Path) -> None:
    (tmp_path / "smollm2").mkdir()
    env = {**os.environ, "TEXTRL_HOME": str(tmp_path)}
    done = subprocess.run([str(BIN / "textrl-train"), "--env"], capture_output=True, text=True, check=True, env=env)
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines() if not line.startswith("trl check"))
    assert lines["trl"] == metadata.version("trl") and lines["torch"] == metadata.version("torch")
    for name in ("textrl", "transformers", "peft", "accelerate", "datasets", "bitsandbytes", "vllm", "cuda"):
        assert name in lines, done.stdout
    assert (
        f"trl check     trl {metadata.version('trl')} is in the tested window, 1.13 to 1.16 (CI trains on 1.13.0, "
        "1.14.1, 1.15.0, 1.16.0)" in done.stdout
    )
    assert lines["cache"] == f"{tmp_path} (textrl:smollm2)" and lines["gguf"] == metadata.version("gguf")


def test_print_schema_is_the_generated_schema() -> None:
    done = subprocess.run([str(BIN / "textrl-train"), "--print-schema"], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == json.loads((ROOT / "generated/schema/textrl.schema.json").read_text())


def test_version_agrees_with_importlib_metadata() -> None:
    """One listing of sys.path answers every name as importlib.metadata would, in any spelling, None when absent."""
    import textrl.trl_support.env as env

    names = [*env.PACKAGES, "PyYAML", "pyyaml", "typing-extensions", "typing_extensions", "huggingface-hub",
             "Jinja2", "no-such-distribution"]  # fmt: skip
    env.version.cache_clear()
    env._installed.cache_clear()
    for name in names:
        try:
            expected: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = None
        assert env.version(name) == expected, name


def test_version_takes_the_first_on_sys_path_and_reads_egg_info(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A folder ahead on sys.path shadows the installed release (the TRL-release legs of scripts/test.sh put one
    there); an .egg-info folder, whose name lacks the version, is read through its metadata."""
    front = tmp_path / "front"
    (front / "trl-1.13.0.dist-info").mkdir(parents=True)
    (front / "trl-1.13.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: trl\nVersion: 1.13.0\n")
    (front / "Old_Pkg.egg-info").mkdir()
    (front / "Old_Pkg.egg-info" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: old-pkg\nVersion: 0.3\n")
    import textrl.trl_support.env as env

    monkeypatch.setattr(sys, "path", [str(front), *sys.path])
    env.version.cache_clear()
    env._installed.cache_clear()
    try:
        assert env.version("trl") == "1.13.0" == metadata.version("trl")
        assert env.version("old-pkg") == "0.3"
    finally:  # the next caller lists the real sys.path again
        env.version.cache_clear()
        env._installed.cache_clear()
