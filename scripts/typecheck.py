"""Run mypy on the package as installed: textrl/ with spec/ and generated/ mapped in as textrl.spec and
textrl.generated (the wheel's layout), through a folder of symlinks, since mypy cannot read setuptools'
package-dir mapping."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="textrl-mypy-") as tmp:
        package = Path(tmp) / "textrl"
        package.mkdir()
        for entry in (ROOT / "textrl").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        (package / "spec").symlink_to(ROOT / "spec")
        (package / "generated").symlink_to(ROOT / "generated")
        cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "textrl"]
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        # show paths as they are in the checkout
        print(
            (done.stdout + done.stderr)
            .replace(f"{tmp}/textrl/spec/", "spec/")
            .replace(f"{tmp}/textrl/generated/", "generated/"),
            end="",
        )
        return done.returncode


if __name__ == "__main__":
    sys.exit(main())
