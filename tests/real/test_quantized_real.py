"""QLoRA and 8-bit LoRA on the real SmolLM2-135M-Instruct, on this CPU (bitsandbytes' CPU kernels): GRPO steps run
through 4-bit nf4 weights, and DPO through 8-bit weights learns the preference (its loss falls below log 2)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, TextRLConfig, load_model
from textrl.data import from_list

from .test_smollm2 import PAIRS, PROMPTS, only_number

pytestmark = [pytest.mark.slow, pytest.mark.real]
COMMON = {"logging_steps": 1, "save_strategy": "no", "seed": 3, "report_to": ["none"], "bf16": False}


def _adapter(model: Any) -> dict[str, Any]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def test_qlora_grpo_on_the_real_model(smollm2: Path, tmp_path: Path) -> None:
    model, tok, ref = load_model(str(smollm2), peft={"type": "lora", "r": 8}, quantization="4bit")
    assert ref is None and model.is_loaded_in_4bit
    assert "Linear4bit" in {type(m).__name__ for m in model.modules()}
    before = _adapter(model)
    cfg = TextRLConfig(algo="grpo", output_dir=str(tmp_path), max_steps=2, num_generations=4,
                       per_device_train_batch_size=4, max_completion_length=16, learning_rate=1e-4, **COMMON)  # fmt: skip
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=only_number, train_dataset=from_list([{"prompt": p} for p in PROMPTS * 2]),
                            config=cfg)  # fmt: skip
    trainer.train()
    steps = [h for h in trainer.log_history if "loss" in h]
    assert len(steps) == 2 and all(math.isfinite(h["loss"]) and "reward" in h for h in steps), steps
    after = dict(model.named_parameters())
    assert any(not after[n].detach().equal(v) for n, v in before.items()), "no LoRA weight moved"


def test_8bit_lora_dpo_learns_on_the_real_model(smollm2: Path, tmp_path: Path) -> None:
    model, tok, ref = load_model(str(smollm2), peft={"type": "lora", "r": 8}, quantization="8bit")
    assert ref is None and model.is_loaded_in_8bit
    cfg = TextRLConfig(algo="dpo", output_dir=str(tmp_path), max_steps=4, per_device_train_batch_size=4,
                       max_length=128, learning_rate=5e-4, beta=0.1, **COMMON)  # fmt: skip
    trainer = PreferenceTrainer(model=model, ref_model=None, tokenizer=tok, train_dataset=from_list(PAIRS),
                                config=cfg)  # fmt: skip
    trainer.train()
    losses = [h["loss"] for h in trainer.log_history if "loss" in h]
    # the adapter starts at 0, so the first loss is near log 2 (LoRA dropout makes the policy differ a little)
    assert len(losses) == 4 and losses[0] == pytest.approx(math.log(2), abs=0.05), losses
    assert losses[-1] < losses[0] - 0.05, f"DPO through 8-bit weights did not learn the pairs: {losses}"
