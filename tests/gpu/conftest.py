"""GPU tests: skipped as a whole without CUDA; each run's peak GPU memory goes to a small report.

The report (one block per test: peak MiB, steps, seconds, and TextRL's dry-run memory plan beside it) is written
to $TEXTRL_GPU_REPORT, or to gpu_report.txt under pytest's temporary folder; `bench/gpu_check.sh` prints it.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

NO_CUDA = "no CUDA device: run bench/gpu_check.sh on a GPU machine"
MIB = 1024**2


@pytest.fixture(scope="session", autouse=True)
def _cuda() -> None:
    # session-scoped and autouse, so it runs before the session fixtures that build models
    import torch

    if not torch.cuda.is_available():
        pytest.skip(NO_CUDA)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from textrl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)


@pytest.fixture(scope="session")
def gpu_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report file, emptied once per session."""
    path = Path(os.environ.get("TEXTRL_GPU_REPORT") or tmp_path_factory.getbasetemp() / "gpu_report.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


@dataclass
class GpuRun:
    """What one GPU test measured: set `steps` after training; `compare_plan` adds the memory plan's line."""

    name: str
    start_mib: float
    started: float = field(default_factory=time.perf_counter)
    steps: int | None = None
    notes: list[str] = field(default_factory=list)

    def peak_mib(self) -> float:
        """Peak GPU memory allocated by torch since the test started (vLLM's KV cache included)."""
        import torch

        return torch.cuda.max_memory_allocated() / MIB

    def compare_plan(self, cfg: Any, model_dir: Path, trainable: int) -> None:
        """Note textrl.run.memory's plan for `cfg` (what `textrl-train --dry-run` would estimate) beside the measurement."""
        import torch

        from textrl.run.memory import GIB, parameters_on_disk, plan

        params = parameters_on_disk(model_dir)
        assert params, f"no safetensors weights in {model_dir}"
        device_gib = torch.cuda.get_device_properties(0).total_memory / GIB
        p = plan(cfg, params, device_gib)
        self.notes.append(
            f"plan (textrl.run.memory, before activations): {(p.total + p.vllm_share) / MIB:.1f} MiB = policy "
            f"{p.policy / MIB:.2f} + reference {p.reference / MIB:.2f} + optimizer/grads {p.optimizer / MIB:.2f} "
            f"+ vLLM {p.vllm_share / MIB:.1f}; trainable parameters planned {p.trainable}, actual {trainable}; "
            f"measured peak {self.peak_mib():.1f} MiB"
        )

    def lines(self) -> list[str]:
        steps = "-" if self.steps is None else str(self.steps)  # "-": the test stopped before training finished
        head = (
            f"{self.name:<40} peak {self.peak_mib():9.1f} MiB (at start {self.start_mib:.1f})  "
            f"steps {steps:>2}  {time.perf_counter() - self.started:6.1f} s"
        )
        return [head, *(f"    {note}" for note in self.notes)]


@pytest.fixture
def gpu_run(request: pytest.FixtureRequest, gpu_report: Path) -> Iterator[GpuRun]:
    """Reset the peak-memory counter, time the test, and append its lines to the report afterwards."""
    import torch

    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    run = GpuRun(request.node.name.removeprefix("test_"), torch.cuda.memory_allocated() / MIB)
    yield run
    torch.cuda.synchronize()
    with gpu_report.open("a", encoding="utf-8") as handle:
        handle.write("\n".join(run.lines()) + "\n")
