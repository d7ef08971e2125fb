"""Stopping cleanly on SIGINT/SIGTERM: finish the current step, save a checkpoint, then stop.

A second signal stops at once (the last complete checkpoint is left as it was): in a console command the process
ends on the spot (the signal's default action); in a Python session KeyboardInterrupt is raised.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from transformers import TrainerCallback

from ..engines import process_owner


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on a signal after saving `checkpoint`; continue with resume_from_checkpoint."""

    def __init__(self, signal_name: str, step: int, checkpoint: str | None) -> None:
        self.signal_name, self.step, self.checkpoint = signal_name, step, checkpoint
        super().__init__(f"stopped by {signal_name} at step {step}; checkpoint saved to {checkpoint}")


class GracefulStop(TrainerCallback):
    """Turns the first SIGINT/SIGTERM into "save at the end of this step and stop".

    `round_micro_steps`: for online algorithms, the micro-batches one generation round feeds (TRL's
    steps_per_generation x num_iterations); the stop then waits for the step that ends the round, because TRL keeps
    the round's completions only in memory and a run resumed mid-round would generate that round's prompts again,
    with new completions (the same prompts, but not the run an uninterrupted one would have been).
    """

    signals = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, round_micro_steps: int = 1, accumulation: int = 1) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        self.round_micro_steps, self.accumulation = max(1, round_micro_steps), max(1, accumulation)
        self._told = False

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._handle) for s in self.signals}

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:
            self.uninstall()
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}: stopping at once")
        self.received = signum
        print(
            f"textrl: got {signal.Signals(signum).name}; saving a checkpoint at the end of this step, then "
            "stopping (send it again to stop at once)",
            file=sys.stderr,
            flush=True,
        )
        if process_owner.console:
            # A Python handler runs only between bytecodes of the main thread, so it can wait for a reward in C code
            # or in a worker thread; the default action ends the process in the kernel. Checkpoints are renamed
            # into place whole (trainers/atomic.py), so nothing half-written is left.
            for sig in self.signals:
                signal.signal(sig, signal.SIG_DFL)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self._agree(args)
        if self.received is None:
            return control
        last = 0 < state.max_steps <= state.global_step
        if (state.global_step * self.accumulation) % self.round_micro_steps and not last:
            if not self._told:
                self._told = True
                print(
                    f"textrl: step {state.global_step} ends inside a generation round; stopping at the end of the "
                    "round, so that the resumed run continues it exactly",
                    file=sys.stderr,
                    flush=True,
                )
            return control
        control.should_save = True
        control.should_training_stop = True
        return control

    def _agree(self, args: Any) -> None:
        """With several processes, every one stops at the step where any one has a signal: a launcher relays the
        signal to its processes one after another, and a process that stopped alone would leave the others waiting
        in a collective (and the checkpoint half-written). One all-reduce of the signal number per step."""
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
            return
        import torch

        flag = torch.tensor([self.received or 0], dtype=torch.int64, device=args.device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if self.received is None and int(flag.item()):
            self.received = int(flag.item())

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else ""
