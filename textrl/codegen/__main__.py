"""`python -m textrl.codegen [--check]`: write generated/ from spec/ and templates/, or check it is current."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .render import GENERATED, TEMPLATES, artifacts, compare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m textrl.codegen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 and list stale, missing or orphaned files")
    parser.add_argument(
        "--out", type=Path, default=GENERATED, help="the folder to write or check (default: generated/)"
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="re-take spec/trl_snapshots/<release>.json from the installed TRL (imports TRL), then regenerate; with an "
        "older release on the path (scripts/trl_release.sh) it writes that release's snapshot",
    )
    args = parser.parse_args(argv)
    out: Path = args.out
    if args.snapshot:
        from .trl_snapshot import write_snapshot

        print(f"wrote {write_snapshot()}; regenerate to apply it")
        return 0
    if not TEMPLATES.is_dir():
        print(f"templates/ not found at {TEMPLATES}: run the codegen from a source checkout (pip install -e .)")
        return 2
    expected = artifacts()
    missing, stale, orphaned = compare(expected, out)
    if args.check:
        for label, paths in (("missing", missing), ("stale", stale), ("orphaned", orphaned)):
            for path in paths:
                print(f"{label}: {out / path}")
        if missing or stale or orphaned:
            print(f"{out} is not current. Fix: python -m textrl.codegen")
            return 1
        print(f"{out} is current ({len(expected)} files)")
        return 0
    for artifact in expected:
        if artifact.path in missing or artifact.path in stale:
            target = out / artifact.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(artifact.text(), encoding="utf-8")
    for path in orphaned:
        (out / path).unlink()
    _remove_empty_dirs(out)
    print(f"wrote {len(missing) + len(stale)}, deleted {len(orphaned)}, {len(expected)} files in {out}")
    return 0


def _remove_empty_dirs(root: Path) -> None:
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if folder.name == "__pycache__":
            continue
        if not any(folder.iterdir()):
            folder.rmdir()


if __name__ == "__main__":
    sys.exit(main())
