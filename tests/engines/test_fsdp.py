"""`strategy: fsdp` on CPUs is refused before a model loads, with the same message from the dry run, a plain run and
an `accelerate launch` of the config TextRL writes: accelerate 1.16 shards with FSDP only on GPU-class devices and
would run CPU processes as plain DDP (measured: MULTI_CPU, a DistributedDataParallel model, every parameter whole in
each process). Never DDP under an FSDP name; the sharded path on CPUs is DeepSpeed ZeRO-3 (test_deepspeed.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import BIN, ROOT, TINY_GRPO, env

pytestmark = pytest.mark.slow

CONFIG = TINY_GRPO + "distributed: {strategy: fsdp}\n"
REFUSAL = (
    "distributed.strategy: got 'fsdp' on a machine without a GPU: accelerate shards with FSDP only on GPU-class "
    "devices (CUDA, XPU, NPU, HPU) and runs CPU processes as plain DDP, each holding the whole model. Fix: strategy "
    "deepspeed with zero_stage 3 (shards on CPUs too), strategy ddp, or run on GPUs."
)


def test_fsdp_on_cpus_is_refused_before_launch_and_at_start(tmp_path: Path, textrl_home: Path) -> None:
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        (tmp_path / name).write_bytes((ROOT / "examples" / name).read_bytes())
    (tmp_path / "run.yaml").write_text(CONFIG, encoding="utf-8")
    e = env(textrl_home)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=tmp_path, env=e, capture_output=True, text=True, timeout=600)

    dry = run(str(BIN / "textrl-train"), "--config", "run.yaml", "--dry-run")
    plain = run(str(BIN / "textrl-train"), "--config", "run.yaml")
    for done in (dry, plain):
        assert done.returncode == 2 and REFUSAL in done.stderr, done.stderr[-2000:]
        assert "the run would start" not in done.stdout
    # the launch config is still written (it is for the GPU machines), and launching it here is refused the same way
    wrote = run(str(BIN / "textrl-train"), "--config", "run.yaml", "--write-accelerate-config", "acc.yaml",
                "--num-processes", "2")  # fmt: skip
    assert wrote.returncode == 0 and "distributed_type: FSDP" in (tmp_path / "acc.yaml").read_text()
    launched = run(str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train",
                   "--config", "run.yaml")  # fmt: skip
    assert launched.returncode != 0 and launched.stderr.count(REFUSAL) == 2, launched.stderr[-3000:]  # each process
    assert not (tmp_path / "out").exists()
