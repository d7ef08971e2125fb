"""A regular (non-editable) install works: the wheel carries textrl.spec and textrl.generated, data files included."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from textrl import spec

CHECK = """
import json, sys
from importlib import resources
import textrl, textrl.spec, textrl.generated
from textrl import TextRLConfig
from textrl.configs import GrpoConfig
assert textrl.__file__.startswith(sys.argv[1]), textrl.__file__
assert textrl.spec.__file__.startswith(sys.argv[1]), textrl.spec.__file__
cfg = TextRLConfig(algo="ipo", output_dir="o")
schema = json.loads(resources.files("textrl.generated").joinpath("schema/textrl.schema.json").read_text())
docs = resources.files("textrl.generated").joinpath("docs/algorithms.md").read_text()
assert resources.files("textrl").joinpath("py.typed").is_file()
print(type(cfg).__name__, len(schema["discriminator"]["mapping"]), "ipo" in docs)
"""


@pytest.mark.slow
def test_wheel_installs_and_imports(tmp_path: Path, root: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    wheel = next(tmp_path.glob("textrl-1.0.0-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "textrl/spec/algorithms.py" in names and "textrl/generated/configs/grpo.py" in names
    assert "textrl/generated/schema/textrl.schema.json" in names and "textrl/py.typed" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # -S: no site-packages processing, so the editable install of this checkout cannot answer the import;
    # the dependencies come from the venv's site-packages, listed after the unpacked wheel.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]])}
    done = subprocess.run(
        [sys.executable, "-S", "-c", CHECK, str(site)], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    # the schema's discriminator maps every algorithm name and alias to its config class
    assert done.stdout.split() == ["IpoConfig", str(len(spec.BY_NAME)), "True"]


def test_licence_is_apache_2(root: Path) -> None:
    """The README spec says Apache 2.0: the LICENSE file and the package metadata agree with it."""
    import tomllib

    assert "Apache License" in (root / "LICENSE").read_text()[:200]
    assert "Version 2.0, January 2004" in (root / "LICENSE").read_text()[:200]
    assert tomllib.loads((root / "pyproject.toml").read_text())["project"]["license"] == {"text": "Apache-2.0"}
