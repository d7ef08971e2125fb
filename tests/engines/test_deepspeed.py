"""DeepSpeed ZeRO-2, ZeRO-3 and ZeRO-3 with the optimizer offloaded train GRPO and DPO on 2 CPU processes through
TextRL's own path (`--write-accelerate-config`, then `accelerate launch -m textrl.cli train`): the run says and
records that it is DeepSpeed, each process holds its share of the optimizer state, the final model is gathered and
saved whole, the logs follow a DDP run of the same seed, and a SIGTERM-then-`--resume` run continues exactly."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

from .conftest import BIN, LAUNCH, Launch, env, launch, prepare

pytestmark = pytest.mark.slow
if importlib.util.find_spec("deepspeed") is None:
    pytest.skip("DeepSpeed is not installed: run with PYTHONPATH=$(bash scripts/engines.sh)", allow_module_level=True)

GRPO = """algo: grpo
output_dir: out
num_generations: 4
per_device_train_batch_size: 4
max_completion_length: 8
learning_rate: 1e-3
beta: 0.04
max_steps: 4
logging_steps: 1
save_steps: 2
seed: 3
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: quickstart_prompts.jsonl}
reward: REWARD
"""
DPO = """algo: dpo
output_dir: out
per_device_train_batch_size: 2
max_length: 32
learning_rate: 1e-3
max_steps: 4
logging_steps: 1
save_steps: 2
seed: 3
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: pairs.jsonl}
"""
WORDS = ["sea", "sky", "sun", "sand", "stone", "salt", "snow", "star"]
PAIRS = "".join(json.dumps({"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": " no"}) + "\n" for w in WORDS)
STAGES = {
    "ddp": "",
    "zero2": "distributed: {strategy: deepspeed, zero_stage: 2}\n",
    "zero3": "distributed: {strategy: deepspeed, zero_stage: 3}\n",
    "zero3-offload": "distributed: {strategy: deepspeed, zero_stage: 3, offload: optimizer}\n",
}
ENGINE = {"ddp": "DDP, 2 processes", "zero2": "DeepSpeed ZeRO-2, 2 processes", "zero3": "DeepSpeed ZeRO-3, 2 processes",
          "zero3-offload": "DeepSpeed ZeRO-3 (optimizer offloaded), 2 processes"}  # fmt: skip
SLOW = """import time

def lowercase_share(prompts, completions, **_):
    time.sleep(0.5)  # room for the signal: the same scores as quickstart_rewards.lowercase_share
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
"""


def config(algo: str, stage: str, reward: str = "quickstart_rewards:lowercase_share") -> str:
    return (GRPO.replace("REWARD", reward) if algo == "grpo" else DPO) + STAGES[stage]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, textrl_home: Path) -> Callable[[str, str], Launch]:
    """Each (algorithm, stage) launched once, when a test first asks for it."""
    done: dict[tuple[str, str], Launch] = {}

    def get(algo: str, stage: str) -> Launch:
        if (algo, stage) not in done:
            folder = tmp_path_factory.mktemp(f"{algo}-{stage}")
            (folder / "pairs.jsonl").write_text(PAIRS, encoding="utf-8")
            done[algo, stage] = launch(folder, config(algo, stage), textrl_home)
        return done[algo, stage]

    return get


def _weights(folder: Path) -> dict[str, object]:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


@pytest.mark.parametrize("stage", ["zero2", "zero3", "zero3-offload"])
@pytest.mark.parametrize("algo", ["grpo", "dpo"])
def test_zero_trains_and_follows_ddp(algo: str, stage: str, runs: Callable[[str, str], Launch]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    run, ddp = runs(algo, stage), runs(algo, "ddp")
    assert f"textrl: training with {ENGINE[stage]}" in run.done.stderr
    assert json.loads((run.out / "textrl_manifest.json").read_text())["engine"] == ENGINE[stage]
    assert json.loads((ddp.out / "textrl_manifest.json").read_text())["engine"] == ENGINE["ddp"]
    # DeepSpeed's own checkpoint: each process wrote its share of the optimizer state (ZeRO-3: of the weights too)
    shards = sorted(p.name for p in (run.out / "checkpoint-2" / "global_step2").iterdir())
    assert [s for s in shards if "optim_states" in s] == [
        f"zero_pp_rank_{r}_mp_rank_00_optim_states.pt" for r in (0, 1)
    ]
    # the final model is whole: every tensor of the DDP run's, with its shape, and it loads and generates
    ours, theirs = _weights(run.out), _weights(ddp.out)
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        assert ours[name].shape == tensor.shape and ours[name].numel() > 0, name  # type: ignore[attr-defined]
        assert torch.allclose(ours[name], tensor, atol=2e-4), name  # type: ignore[call-overload]
    model = AutoModelForCausalLM.from_pretrained(run.out)
    tok = AutoTokenizer.from_pretrained(run.out)
    text = model.generate(**tok(["Repeat: sea ->"], return_tensors="pt"), max_new_tokens=4, do_sample=False)
    assert text.shape[1] > 3
    # the same trajectory as DDP: the same seed, data order and sums; only the order of float additions differs
    keys = ["loss", "grad_norm"] + (["reward", "reward_std"] if algo == "grpo" else ["rewards/margins"])
    assert [h["step"] for h in run.history] == [h["step"] for h in ddp.history] == [1, 2, 3, 4]
    for mine, base in zip(run.history, ddp.history, strict=True):
        for key in keys:
            assert mine[key] == pytest.approx(base[key], rel=1e-3, abs=1e-5), (key, mine, base)
        if stage != "zero3-offload":
            assert mine["learning_rate"] == pytest.approx(base["learning_rate"])
    if stage == "zero3-offload":  # DeepSpeed owns the scheduler there and is read after its step: logged one step on
        assert [h["learning_rate"] for h in run.history][:-1] == pytest.approx(
            [h["learning_rate"] for h in ddp.history][1:]
        )


def test_sigterm_then_resume_continues_a_zero3_run(tmp_path: Path, textrl_home: Path,
                                                    runs: Callable[[str, str], Launch]) -> None:  # fmt: skip
    """SIGTERM to the whole launch (as a scheduler's preemption sends it): every process stops at the same step
    and saves a checkpoint; the printed command resumes it, and the run ends where an uninterrupted one does."""
    (tmp_path / "slow_rewards.py").write_text(SLOW, encoding="utf-8")
    with (tmp_path / "out.txt").open("w") as out, (tmp_path / "err.txt").open("w") as errors:
        first = launch_in_background(tmp_path, config("grpo", "zero3", "slow_rewards:lowercase_share"), textrl_home,
                                     out, errors)  # fmt: skip
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and "| 1/4" not in (tmp_path / "err.txt").read_text():
            time.sleep(0.2)
        os.killpg(first.pid, signal.SIGTERM)
        first.wait(timeout=300)
    err = (tmp_path / "err.txt").read_text()
    assert first.returncode != 0, err[-3000:]
    assert err.count("textrl-train: stopped by SIGTERM at step ") == 1, err[-3000:]
    said = err.split("Resume with: ")[1].splitlines()[0]
    assert said == "accelerate launch --config_file acc.yaml -m textrl.cli train --config run.yaml --resume"
    saved = [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith("checkpoint-")]
    assert len(saved) == 1 and int(saved[0].split("-")[1]) < 4, saved
    resumed = subprocess.run([str(BIN / "accelerate"), *said.split()[1:]], cwd=tmp_path, env=env(textrl_home),
                             capture_output=True, text=True, timeout=900)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming from out/{saved[0]}" in resumed.stderr
    ours = Launch(resumed, tmp_path / "out").history
    full = runs("grpo", "zero3").history
    assert [h["step"] for h in ours] == [1, 2, 3, 4]
    for mine, theirs in zip(ours, full, strict=True):
        assert mine["loss"] == pytest.approx(theirs["loss"], abs=1e-6) and mine["reward"] == pytest.approx(
            theirs["reward"], abs=1e-6
        ), (mine, theirs)


def launch_in_background(
    folder: Path, text: str, textrl_home: Path, out: IO[str], err: IO[str]
) -> subprocess.Popen[str]:
    """Like conftest.launch, without waiting: in its own session, so that one signal reaches the whole launch."""
    e = prepare(folder, text, textrl_home)
    return subprocess.Popen([str(BIN / LAUNCH[0]), *LAUNCH[1:]], cwd=folder, env=e, stdout=out, stderr=err, text=True,
                            start_new_session=True)  # fmt: skip
