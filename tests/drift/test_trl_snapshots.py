"""The installed TRL against its release's snapshot (spec/trl_snapshots/<release>.json). CI's release legs run this
file, with the other drift tests, on each older supported release (scripts/test.sh)."""

from __future__ import annotations

import json

import pytest

from textrl.codegen.trl_snapshot import snapshot_path, take_snapshot
from textrl.spec import trl_releases
from textrl.trl_support.env import version

pytestmark = pytest.mark.slow


def test_snapshot_is_the_installed_trl():
    """The snapshot of the installed release (spec/trl_snapshots/<release>.json; the newest is what the mirrored
    options come from) must be its config classes, field for field. Fix after a TRL upgrade: python -m
    textrl.codegen --snapshot, then python -m textrl.codegen."""
    installed = take_snapshot()
    snapshot_file = snapshot_path(installed["trl"])
    assert snapshot_file.is_file(), (
        f"no snapshot of TRL {installed['trl']}: {snapshot_file}. Fix: python -m textrl.codegen --snapshot"
    )
    committed = json.loads(snapshot_file.read_text())
    # the fields are what the options mirror; the snapshot's versions are a note (a newer patch release, same fields)
    differences: list[str] = []
    for path in committed["classes"].keys() | installed["classes"].keys():
        old, new = committed["classes"].get(path, []), installed["classes"].get(path, [])
        differences += [f"{path}: field {f} gone from the installed TRL" for f in old if f not in new]
        differences += [f"{path}: field {f} new in the installed TRL" for f in new if f not in old]
    for owner in committed["fields"].keys() & installed["fields"].keys():
        for name in committed["fields"][owner].keys() & installed["fields"][owner].keys():
            if committed["fields"][owner][name] != installed["fields"][owner][name]:
                differences.append(
                    f"{owner}.{name}: {committed['fields'][owner][name]} -> {installed['fields'][owner][name]}"
                )
    assert not differences, "the snapshot is not the installed TRL:\n" + "\n".join(differences[:40])


def test_the_installed_release_is_one_of_the_window() -> None:
    """A CI leg that installed a release the window does not list would test nothing the spec knows."""
    installed = version("trl")
    assert trl_releases.release_of(installed) is not None, (installed, trl_releases.RELEASES)
