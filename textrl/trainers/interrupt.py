"""Stopping cleanly on SIGINT/SIGTERM: finish the current step, save a checkpoint, then stop.

A second signal stops at once (the last complete checkpoint is left as it was).
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

from transformers import TrainerCallback


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped on a signal after saving `checkpoint`; continue with resume_from_checkpoint."""

    def __init__(self, signal_name: str, step: int, checkpoint: str | None) -> None:
        self.signal_name, self.step, self.checkpoint = signal_name, step, checkpoint
        super().__init__(f"stopped by {signal_name} at step {step}; checkpoint saved to {checkpoint}")


class GracefulStop(TrainerCallback):
    """Turns the first SIGINT/SIGTERM into "save at the end of this step and stop"."""

    signals = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

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

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.received is not None:
            control.should_save = True
            control.should_training_stop = True
        return control

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.received).name if self.received is not None else ""
