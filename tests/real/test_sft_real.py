"""SFT on the real model: a LoRA run on SmolLM2-135M-Instruct learns the answer format from a few chat
demonstrations, and its adapter is the model of a GRPO run (parity with TRL's SFTTrainer: the tiny model's test in
tests/integration/test_supervised.py, and the bench's SFT rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl import OnlineTrainer, SupervisedTrainer, TextRLConfig, load_model

from .test_smollm2 import PROMPTS, only_number

pytestmark = [pytest.mark.slow, pytest.mark.real]

DEMOS = [{"prompt": p, "completion": [{"role": "assistant", "content": str(s)}]}
         for p, s in zip(PROMPTS, (12, 7, 11, 12), strict=True)] * 4  # fmt: skip


def test_lora_sft_learns_and_feeds_grpo(smollm2: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model("textrl:smollm2", peft={"type": "lora", "r": 8}, load_ref=False)
    cfg = TextRLConfig(algo="sft", output_dir=str(tmp_path / "sft"), max_steps=6, per_device_train_batch_size=4,
                       learning_rate=5e-4, logging_steps=1, save_strategy="no", seed=3, max_length=64,
                       gradient_checkpointing=False)  # fmt: skip
    trainer = SupervisedTrainer(model=model, tokenizer=tok, train_dataset=DEMOS, config=cfg)
    trainer.train()
    trainer.save_model()
    steps = [h for h in trainer.log_history if "loss" in h]
    assert steps[-1]["loss"] < steps[0]["loss"] - 0.5, steps  # the bare sums, from about 2.5 nats to well under 1
    assert steps[-1]["mean_token_accuracy"] > steps[0]["mean_token_accuracy"], steps
    model, tok, _ = load_model(str(tmp_path / "sft"), peft={"type": "lora", "r": 8}, load_ref=False)
    grpo = TextRLConfig(algo="grpo", output_dir=str(tmp_path / "grpo"), max_steps=1, num_generations=4,
                        per_device_train_batch_size=4, max_completion_length=6, logging_steps=1, save_strategy="no",
                        gradient_checkpointing=False, beta=0.0)  # fmt: skip
    online = OnlineTrainer(model=model, tokenizer=tok, reward=only_number, train_dataset=[{"prompt": p} for p in PROMPTS],
                           config=grpo)  # fmt: skip
    online.train()
    # after SFT the sampled replies are mostly bare numbers already (the base model's are sentences)
    assert online.log_history[0]["rewards/only_number/mean"] > 0.5, online.log_history[0]
