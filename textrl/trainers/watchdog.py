"""The stall watchdog: when training makes no progress for `stall_timeout` seconds, write every thread's stack to
`output_dir/stall-rank<N>.txt`, say where, and exit with status 124.

A hung reward, a collective one process never joins, a deadlocked data loader: without this a run sits silent until a
scheduler kills it (and NCCL's own timeout, when it fires, dumps no Python stack). Each process runs its own watchdog
thread; in a multi-process run the others stall in their next collective, so every process writes its file. Progress
is any trainer event: an optimizer step, an evaluation batch, a save, a log line.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

STALLED = 124
"""Exit status of a run the watchdog stopped (as coreutils' `timeout`)."""
GRACE = 2.0
"""Seconds between writing the stacks and exiting, so that the other processes' watchdogs write theirs before this
process's exit breaks their collectives."""


def stall_file(output_dir: str | os.PathLike[str], rank: int) -> Path:
    return Path(output_dir) / f"stall-rank{rank}.txt"


class StallWatchdog(TrainerCallback):
    """A daemon thread, started with training, that fires when no trainer event came for `timeout` seconds."""

    def __init__(self, timeout: float, output_dir: str | os.PathLike[str]) -> None:
        self.timeout, self.output_dir = float(timeout), Path(output_dir)
        self.rank = int(os.environ.get("RANK", "0"))
        self._last = time.monotonic()
        self._step = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self, state: Any = None) -> None:
        self._last = time.monotonic()
        if state is not None:
            self._step = state.global_step

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.beat(state)
        self._done.clear()
        self._thread = threading.Thread(target=self._watch, name="textrl-stall-watchdog", daemon=True)
        self._thread.start()

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """End the watch: training is over, however it ended. A watch left running after train() raised would stop
        the process `timeout` seconds later (a notebook's kernel, a test worker)."""
        self._done.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _progress(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.beat(state)

    # every trainer event that shows progress restarts the clock
    on_step_begin = on_substep_end = on_step_end = on_prediction_step = on_evaluate = on_save = on_log = _progress

    def _watch(self) -> None:
        poll = min(1.0, self.timeout / 4)
        while not self._done.wait(poll):
            if time.monotonic() - self._last > self.timeout:
                self._fire()

    def _fire(self) -> None:
        path = stall_file(self.output_dir, self.rank)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            out.write(
                f"textrl stall watchdog: no training progress for {self.timeout:g} s (stall_timeout) after global step "
                f"{self._step}; process rank {self.rank}, pid {os.getpid()}, {time.strftime('%Y-%m-%d %H:%M:%S')}.\n"
                "Every thread's stack follows, most recent call first in each.\n\n"
            )
            out.flush()
            faulthandler.dump_traceback(file=out, all_threads=True)
        print(
            f"textrl-train: no training progress for {self.timeout:g} s after step {self._step} (stall_timeout); "
            f"every thread's stack of process {self.rank} is in {path}. Stopping with status {STALLED}. Fix: find "
            "the frame that waits (a reward, a collective, the data loader) in that file; if the run is only slow, "
            "raise stall_timeout (or set it to off).",
            file=sys.stderr,
            flush=True,
        )
        time.sleep(GRACE)
        os._exit(STALLED)
