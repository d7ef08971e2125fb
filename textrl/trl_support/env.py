"""The installed versions of TextRL's packages (the set that bug reports, manifests and fingerprints record), and
the check that the installed TRL is one TextRL was tested with. Reads package metadata only (the `--env` report is
textrl/cli/env_report.py)."""

from __future__ import annotations

import functools
import os
import re
import sys
import warnings
from importlib import metadata

# The TRL releases this TextRL release was tested with: spec/trl_releases.py's window (a test keeps the two equal;
# importing the spec here would cost `--help` its start-up), each a snapshot under spec/trl_snapshots and a CI leg.
TESTED_TRL = ((1, 13), (1, 17))  # >= 1.13, < 1.17
PACKAGES = ("textrl", "trl", "transformers", "peft", "accelerate", "datasets", "torch", "bitsandbytes", "vllm",
            "deepspeed", "gguf", "pydantic")  # fmt: skip


class UntestedTRLWarning(UserWarning):
    """The installed TRL is outside the range this TextRL release was tested with."""


def _key(name: str) -> str:
    """A distribution name as installers write it into `<name>-<version>.dist-info` (PEP 503 normalized, then '_')."""
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.cache
def _installed() -> tuple[dict[str, str | None], bool]:
    """Every distribution on sys.path, name -> version read from its `.dist-info` folder's name (None for an
    `.egg-info` folder, whose name may lack the version), the first one in sys.path order as importlib.metadata
    finds it; and whether some sys.path entry could not be listed (a zip file), where only importlib.metadata
    looks."""
    found: dict[str, str | None] = {}
    unlisted = False
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            unlisted = unlisted or os.path.isfile(entry)
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, release = name[: -len(".dist-info")].partition("-")
                found.setdefault(_key(dist), release or None)
            elif name.endswith(".egg-info"):
                found.setdefault(_key(name[: -len(".egg-info")].split("-")[0]), None)
    return found, unlisted


@functools.cache
def version(package: str) -> str | None:
    """The installed version of a distribution, or None. One listing of the sys.path folders answers every
    package (importlib.metadata scans them all again for each name it is asked, about 5 ms per name that is not
    installed); metadata is read only for a folder whose name lacks the version."""
    found, unlisted = _installed()
    key = _key(package)
    if key not in found and not unlisted:
        return None
    if found.get(key):
        return found[key]
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _release(text: str) -> tuple[int, ...]:
    """The leading numbers of a version: '1.16.0.dev0' -> (1, 16, 0), '1.16rc1' -> (1, 16)."""
    parts = []
    for piece in text.split(".")[:3]:
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:  # 1.17rc1, 1.16.0.dev0: stop at the pre-release tag
            break
    return tuple(parts)


def trl_range_problem(installed: str | None = None) -> str | None:
    """A sentence when the installed TRL is outside the tested range; None when it is inside."""
    found = installed if installed is not None else version("trl")
    low, high = TESTED_TRL
    span = f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
    if found is None:
        return f"TRL is not installed; TextRL {version('textrl')} needs trl{span}. Fix: pip install 'trl{span}'."
    if low <= _release(found)[:2] < high:
        return None
    return (
        f"trl {found} is installed, but TextRL {version('textrl')} was tested with trl{span}: options may have been "
        f"renamed or removed under it. Fix: pip install 'trl{span}', or upgrade TextRL."
    )


def warn_if_untested_trl() -> None:
    problem = trl_range_problem()
    if problem is not None:
        warnings.warn(problem, UntestedTRLWarning, stacklevel=2)
