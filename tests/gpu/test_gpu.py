"""A few real training steps on one CUDA GPU with the tiny model: QLoRA and 8-bit LoRA DPO, LoRA GRPO in bf16,
and GRPO generating with vLLM colocated in the training process; each records its peak GPU memory.

Run them with `bash bench/gpu_check.sh` (sized to finish well inside its 280 s cap). The tiny model (Llama:
hidden 64, 4 heads of 16, 2 KV heads, MLP 128) suits bitsandbytes (every quantized weight's size and input width
are multiples of its 64-value block) and vLLM: LlamaForCausalLM is a vLLM architecture, and head size 16 passes
the check of vLLM's FlashAttention backend (multiples of 8 up to 256) in the vLLM releases TRL 1.16 supports
(0.22-0.31); older vLLM releases listed 32 as the smallest head size.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, spec
from textrl.data import from_list
from textrl.models import load_section

from ..integration.conftest import fast, letters, rows_for
from .conftest import GpuRun

pytestmark = [
    pytest.mark.gpu,
    # bitsandbytes, vLLM and the CUDA kernels warn differently in every release; on the GPU check their warnings
    # are listed in pytest's summary instead of failing the run (the CPU suites keep filterwarnings = error).
    pytest.mark.filterwarnings("default"),
]

NO_BITSANDBYTES = "bitsandbytes is not installed: pip install -e '.[quant]'"
NO_VLLM = "vLLM is not installed: pip install -e '.[vllm]' (TRL 1.16 supports vllm 0.22-0.31)"


def _trainable(model: Any) -> dict[str, Any]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def _moved(model: Any, before: dict[str, Any]) -> bool:
    now = dict(model.named_parameters())
    return any(not now[n].detach().equal(v) for n, v in before.items())


def _steps(history: list[dict[str, Any]], expected: int, metric: str) -> None:
    steps = [h for h in history if "loss" in h]
    assert len(steps) == expected, history
    assert all(math.isfinite(h["loss"]) for h in steps), steps
    assert all(metric in h and math.isfinite(h[metric]) for h in steps), f"{metric} missing from {sorted(steps[0])}"


def _count_calls(target: Any, *names: str) -> dict[str, int]:
    """Wrap the named methods of `target` so that each call is counted in the returned dict."""
    calls = dict.fromkeys(names, 0)

    def counted(name: str) -> Any:
        original = getattr(target, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return original(*args, **kwargs)

        return call

    for name in names:
        setattr(target, name, counted(name))
    return calls


def _dpo(tiny: Path, out: Path, run: GpuRun, *, quantization: str, steps: int) -> tuple[Any, Any]:
    """LoRA DPO over base weights quantized by bitsandbytes; returns (model, trainer) after training."""
    model_section = {"name": str(tiny), "peft": {"type": "lora", "r": 8}, "quantization": quantization,
                     "torch_dtype": "bfloat16"}  # fmt: skip
    cfg = fast("dpo", out, max_steps=steps, bf16=True, model=model_section)
    model, tok, ref = load_section(cfg.model)
    assert ref is None, "with LoRA the reference is the adapter switched off, never a second model"
    trainable = _trainable(model)
    assert trainable and all("lora_" in n for n in trainable), sorted(trainable)
    trainer = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, config=cfg,
                                train_dataset=from_list(rows_for(spec.BY_NAME["dpo"].data_format, n=4 * steps)))  # fmt: skip
    assert trainer.trl_trainer.ref_model is None
    assert trainer.trl_config.bf16 is True
    trainer.train()
    run.steps = trainer.trl_trainer.state.global_step
    _steps(trainer.log_history, steps, "rewards/accuracies")
    assert _moved(model, trainable), "no LoRA weight changed"
    assert next(model.parameters()).device.type == "cuda"
    run.compare_plan(cfg, tiny, sum(v.numel() for v in trainable.values()))
    return model, trainer


def test_qlora_dpo_trains_a_lora_adapter_over_4bit_weights(tiny: Path, tmp_path: Path, gpu_run: GpuRun) -> None:
    bnb = pytest.importorskip("bitsandbytes", reason=NO_BITSANDBYTES)
    model, trainer = _dpo(tiny, tmp_path / "run", gpu_run, quantization="4bit", steps=5)
    quantized = [m for m in model.modules() if isinstance(m, bnb.nn.Linear4bit)]
    assert len(quantized) == 14, f"expected the 7 linear layers of both blocks in 4-bit, found {len(quantized)}"
    assert all(isinstance(m.weight, bnb.nn.Params4bit) and m.weight.quant_state is not None for m in quantized)
    assert all(m.weight.quant_state.quant_type == "nf4" for m in quantized)
    assert all(not p.requires_grad for m in quantized for p in m.parameters(recurse=False))
    saved = tmp_path / "adapter"
    trainer.save_model(str(saved))
    assert (saved / "adapter_config.json").is_file() and (saved / "adapter_model.safetensors").is_file()
    assert not (saved / "model.safetensors").exists(), "the adapter alone is saved, not the 4-bit base"
    assert gpu_run.peak_mib() < 1024, f"the tiny model peaked at {gpu_run.peak_mib():.0f} MiB"


def test_lora_dpo_over_8bit_weights(tiny: Path, tmp_path: Path, gpu_run: GpuRun) -> None:
    bnb = pytest.importorskip("bitsandbytes", reason=NO_BITSANDBYTES)
    model, _ = _dpo(tiny, tmp_path / "run", gpu_run, quantization="8bit", steps=2)
    assert sum(isinstance(m, bnb.nn.Linear8bitLt) for m in model.modules()) == 14


def test_lora_grpo_in_bf16(tiny: Path, tmp_path: Path, gpu_run: GpuRun) -> None:
    import torch

    cfg = fast("grpo", tmp_path / "run", max_steps=5, bf16=True,
               model={"name": str(tiny), "peft": {"type": "lora", "r": 8}, "torch_dtype": "bfloat16"})  # fmt: skip
    model, tok, _ = load_section(cfg.model)
    frozen = {p.dtype for p in model.parameters() if not p.requires_grad}
    assert frozen == {torch.bfloat16}, f"base weights should load in bf16, got {frozen}"
    trainable = _trainable(model)
    assert trainable and all("lora_" in n for n in trainable), sorted(trainable)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=cfg,
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format, n=20)))  # fmt: skip
    assert trainer.trl_config.bf16 is True
    trainer.train()
    gpu_run.steps = trainer.trl_trainer.state.global_step
    _steps(trainer.log_history, 5, "reward")
    assert "rewards/letters/mean" in trainer.log_history[0], sorted(trainer.log_history[0])
    assert _moved(model, trainable), "no LoRA weight changed"
    assert next(model.parameters()).device.type == "cuda"
    gpu_run.compare_plan(cfg, tiny, sum(v.numel() for v in trainable.values()))


@pytest.fixture
def restored_environ() -> Iterator[None]:
    """Put os.environ back after the test: TRL's colocate mode writes RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and
    MASTER_PORT into it for vLLM's single-process launcher (trl/generation/vllm_generation.py, `_init_vllm`)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_vllm_colocate_grpo_steps(tiny: Path, tmp_path: Path, gpu_run: GpuRun, restored_environ: None) -> None:
    """Two GRPO steps whose completions come from vLLM running inside this process: one generation per step and,
    at the second step, the trained weights pushed into vLLM.

    The distributed variables vLLM needs are not set here on purpose: TRL 1.16 sets them itself when it builds
    the engine, after the trainer's accelerator exists; a LOCAL_RANK set earlier would make accelerate start a
    process group of its own. vLLM loads the tiny model from its folder (LlamaForCausalLM, max positions 512;
    max_model_length 256 covers the prompts and 8-token completions).
    """
    pytest.importorskip("vllm", reason=NO_VLLM)
    import torch

    from textrl.rollout.vllm import vllm_config

    vllm = vllm_config(mode="colocate", gpu_memory_utilization=0.2, max_model_length=256)
    cfg = fast("grpo", tmp_path / "run", max_steps=2, bf16=True, model={"name": str(tiny), "torch_dtype": "bfloat16"},
               **vllm)  # fmt: skip
    model, tok, _ = load_section(cfg.model, load_ref=False)
    before = _trainable(model)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=cfg,
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format, n=8)))  # fmt: skip
    engine = trainer.trl_trainer.vllm_generation
    try:
        assert trainer.trl_config.use_vllm is True and trainer.trl_config.vllm_mode == "colocate"
        assert engine.llm is not None
        calls = _count_calls(engine, "generate", "sync_weights")
        trainer.train()
        gpu_run.steps = trainer.trl_trainer.state.global_step
        _steps(trainer.log_history, 2, "reward")
        assert calls["generate"] >= 2 and calls["sync_weights"] >= 1, calls
        assert _moved(model, before), "no weight changed"
        gpu_run.compare_plan(cfg, tiny, sum(v.numel() for v in before.values()))
        gpu_run.notes.append("vLLM's KV cache is included; vLLM may reset torch's peak counter while it profiles")
    finally:
        del trainer, model, engine  # the last references to the vLLM engine, before its memory is freed
        gc.collect()
        with contextlib.suppress(ImportError):  # frees the engine and its process group for the tests after this one
            from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

            cleanup_dist_env_and_memory()
        torch.cuda.empty_cache()
