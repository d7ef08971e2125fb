"""One run per output_dir: a run holds `output_dir/.textrl-lock` while it runs, and a second run is refused.

Two runs writing one folder mix their files (the checkpoints of one, the manifest of the other) or delete each
other's. The lock is an advisory `flock` on a file in the folder: the kernel drops it when the holding process
dies, however it dies, so a killed run never leaves the folder locked; the file it leaves behind says who held it
last and is ignored. The holder (command, pid, host, start time) is written into the file so that the refusal can
name the run that holds the folder.

Only process 0 of a multi-process launch takes the lock: the other processes are the same run. Within one process
the lock is re-entrant (textrl-train takes it before checking the folder; the trainer's `train()` then finds it
held). On a system without `fcntl` (Windows) no lock is taken. Imports nothing heavy: the dry run asks `holder`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError, Problem
from .files import LOCK

try:
    import fcntl
except ImportError:  # pragma: no cover - not on the Linux machines TextRL runs on
    fcntl = None  # type: ignore[assignment]

_HELD: dict[Path, tuple[int, int]] = {}
"""The folders this process holds: resolved path -> (file descriptor, how many times taken)."""
_MADE: set[Path] = set()
"""The outermost folder `acquire` created for each held folder: given back empty (a run stopped while loading),
the folders up to it are removed again."""


def _is_main_process() -> bool:
    return os.environ.get("RANK", "0") == "0"


def _describe(path: Path) -> str:
    """Who holds (or last held) the lock file at `path`, as the file says."""
    try:
        info: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "another process (it did not say which)"
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started", 0)))
    where = f"pid {info.get('pid', '?')} on {info.get('host', '?')}, since {started}"
    return f"{info.get('command', 'a TextRL run')} ({where})"


def _refusal(folder: Path, path: Path) -> ConfigError:
    return ConfigError(
        [
            Problem(
                "output_dir",
                f"{folder} is in use by another run: {_describe(path)}. Two runs writing one folder mix or delete "
                "each other's files. Fix: wait for that run to finish (or stop it), or choose another output_dir.",
            )
        ]
    )


def held(folder: str | os.PathLike[str]) -> bool:
    """Whether this process holds `folder` (textrl-train took it before loading the model)."""
    return Path(folder).resolve() in _HELD


def holder(folder: str | os.PathLike[str]) -> str | None:
    """Who holds `folder` now, or None when nobody does (or only this process). Creates nothing: the dry run uses it."""
    path = Path(folder) / LOCK
    if fcntl is None or not path.is_file() or Path(folder).resolve() in _HELD:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _describe(path)
    finally:
        os.close(fd)  # closing drops the shared lock taken to test
    return None


def check_free(folder: str | os.PathLike[str]) -> None:
    """Refuse, as a run would, when another run holds `folder` (the dry run's check; creates nothing)."""
    if holder(folder) is not None:
        raise _refusal(Path(folder), Path(folder) / LOCK)


def acquire(folder: str | os.PathLike[str], command: str | None = None) -> None:
    """Take `folder` for this run (creating it), or raise ConfigError naming the run that holds it."""
    key = Path(folder).resolve()
    if key in _HELD:
        fd, count = _HELD[key]
        _HELD[key] = (fd, count + 1)
        return
    if fcntl is None or not _is_main_process():  # held in name only: process 0 holds the lock for the run
        _HELD[key] = (-1, 1)
        return
    made = [p for p in [key, *key.parents] if not p.exists()]
    if made:
        _MADE.add(made[-1])  # the outermost folder this run creates
    key.mkdir(parents=True, exist_ok=True)
    path = key / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise _refusal(Path(folder), path) from None
        try:  # the holder before us may have removed the file between our open and our flock: take the new one
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    record = {
        "command": command or " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.time(),
    }
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps(record).encode())
    _HELD[key] = (fd, 1)


def release(folder: str | os.PathLike[str]) -> None:
    """Give `folder` back (after the last of nested `acquire`s): the lock file goes, then the lock."""
    key = Path(folder).resolve()
    if key not in _HELD:
        return
    fd, count = _HELD[key]
    if count > 1:
        _HELD[key] = (fd, count - 1)
        return
    del _HELD[key]
    if fd < 0:
        return
    try:  # unlinked while still locked, so that nobody can lock the old file after we let go
        if os.stat(key / LOCK).st_ino == os.fstat(fd).st_ino:
            os.unlink(key / LOCK)
        top = next((p for p in [key, *key.parents] if p in _MADE), None)
        if top is not None:  # a run stopped before it wrote anything leaves no folder behind
            _MADE.discard(top)
            for folder in [key, *key.parents]:
                folder.rmdir()  # only when empty (OSError otherwise, which ends the walk)
                if folder == top:
                    break
    except OSError:
        pass
    os.close(fd)


class OutputDirLock:
    """`with OutputDirLock(folder):` holds `folder` for the block."""

    def __init__(self, folder: str | os.PathLike[str], command: str | None = None) -> None:
        self.folder, self.command = folder, command

    def __enter__(self) -> OutputDirLock:
        acquire(self.folder, self.command)
        return self

    def __exit__(self, *exc: object) -> None:
        release(self.folder)
