"""TextRL adds no hidden behaviour (the same run through TRL directly logs the same numbers), and it learns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, TextRLConfig, load_model, reward_fn
from textrl.data import from_list

pytestmark = pytest.mark.slow

PROMPTS = ["Write a short poem.", "Explain gradient descent.", "Say something.", "Hello"]
WORDS = [
    "apple",
    "river",
    "sea",
    "dog",
    "tree",
    "stone",
    "cloud",
    "fire",
    "moon",
    "star",
    "rain",
    "wind",
    "sand",
    "leaf",
    "bird",
    "fish",
]
PAIRS = [{"prompt": f"Repeat the word: {w} ->", "chosen": f" {w}", "rejected": f" {WORDS[(i + 5) % 16]}"}
         for i, w in enumerate(WORDS)]  # fmt: skip
TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}
COMMON = {"max_steps": 3, "logging_steps": 1, "save_strategy": "no", "seed": 7, "learning_rate": 1e-3}


def lowercase_share(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    """Fraction of completion characters that are lowercase letters."""
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]


def _same_logs(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    assert len(ours) == len(theirs)
    for mine, raw in zip(ours, theirs, strict=True):
        assert set(mine) == set(raw)
        for key in set(mine) - TIMING:
            assert mine[key] == pytest.approx(raw[key], rel=1e-5, abs=1e-7), key


def test_grpo_parity_with_trl(tiny: Path, tmp_path: Path) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    online = {"num_generations": 4, "per_device_train_batch_size": 8, "max_completion_length": 8, "beta": 0.04}
    model, tok, _ = load_model(str(tiny), load_ref=False)
    cfg = TextRLConfig(algo="grpo", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False,
                       **COMMON, **online)  # fmt: skip
    ours = OnlineTrainer(model=model, tokenizer=tok, reward=reward_fn(lowercase_share),
                         train_dataset=from_list(PROMPTS * 4), config=cfg)  # fmt: skip
    ours.train()

    args = GRPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                      **COMMON, **online)  # fmt: skip
    raw = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny), reward_funcs=lowercase_share, args=args,
                      train_dataset=Dataset.from_list([{"prompt": p} for p in PROMPTS * 4]),
                      processing_class=AutoTokenizer.from_pretrained(tiny))  # fmt: skip
    raw.train()
    assert any("rewards/lowercase_share/mean" in h for h in ours.log_history)
    _same_logs(ours.log_history, raw.state.log_history)


def test_dpo_parity_with_trl(tiny: Path, tmp_path: Path) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    offline = {"per_device_train_batch_size": 8, "max_length": 32, "beta": 0.1}
    model, tok, ref = load_model(str(tiny))
    cfg = TextRLConfig(algo="dpo", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False,
                       **COMMON, **offline)  # fmt: skip
    ours = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(PAIRS), config=cfg)
    ours.train()

    args = DPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                     **COMMON, **offline)  # fmt: skip
    raw = DPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny), args=args,
                     train_dataset=Dataset.from_list(PAIRS), processing_class=AutoTokenizer.from_pretrained(tiny))  # fmt: skip
    raw.train()
    _same_logs(ours.log_history, raw.state.log_history)


def test_lora_dpo_parity_with_trl(tiny: Path, tmp_path: Path) -> None:
    """Raw TRL draws a LoRA adapter after set_seed(args.seed) (peft_config given to the trainer); TextRL's
    load_model draws it from the seed it is given: with the run's seed, the same adapter and the same logs. (TRL
    gives a ready PeftModel a frozen "ref" copy of its fresh adapter, which adds exactly zero to the base model.)"""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    offline = {"per_device_train_batch_size": 8, "max_length": 32, "beta": 0.1}
    lora = {"type": "lora", "r": 4, "target_modules": ["q_proj", "v_proj"]}
    model, tok, ref = load_model(str(tiny), peft=lora, seed=COMMON["seed"])
    cfg = TextRLConfig(algo="dpo", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False,
                       **COMMON, **offline)  # fmt: skip
    ours = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(PAIRS), config=cfg)
    ours.train()

    args = DPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                     **COMMON, **offline)  # fmt: skip
    peft_config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
                             task_type="CAUSAL_LM")  # fmt: skip
    raw = DPOTrainer(model=AutoModelForCausalLM.from_pretrained(tiny), args=args, peft_config=peft_config,
                     train_dataset=Dataset.from_list(PAIRS), processing_class=AutoTokenizer.from_pretrained(tiny))  # fmt: skip
    raw.train()
    assert ours.log_history[-2]["loss"] != ours.log_history[0]["loss"]  # the adapter trained
    _same_logs(ours.log_history, raw.state.log_history)


def test_grpo_learns(tiny: Path, tmp_path: Path) -> None:
    """Mean reward of the first 5 steps vs the last 5 of 60 (measured here: about 0.57 -> 0.78)."""
    model, tok, _ = load_model(str(tiny), load_ref=False)
    cfg = TextRLConfig(algo="grpo", output_dir=str(tmp_path), num_generations=8, per_device_train_batch_size=16,
                       max_steps=60, max_completion_length=12, learning_rate=3e-3, beta=0.0, logging_steps=1,
                       gradient_checkpointing=False, save_strategy="no", seed=0)  # fmt: skip
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=reward_fn(lowercase_share),
                            train_dataset=from_list(PROMPTS * 64), config=cfg)  # fmt: skip
    trainer.train()
    rewards = [h["reward"] for h in trainer.log_history if "reward" in h]
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    print(f"GRPO mean reward: first 5 steps {first:.3f}, last 5 steps {last:.3f}")
    assert last > first + 0.1, (first, last)


def test_dpo_learns(tiny: Path, tmp_path: Path) -> None:
    """rewards/accuracies over 40 steps of a copy task (measured here: 0.0 at step 1, 1.0 for the last steps)."""
    model, tok, ref = load_model(str(tiny))
    cfg = TextRLConfig(algo="dpo", output_dir=str(tmp_path), per_device_train_batch_size=16, max_steps=40,
                       learning_rate=2e-3, logging_steps=1, gradient_checkpointing=False, save_strategy="no", seed=0,
                       max_length=32)  # fmt: skip
    trainer = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(PAIRS * 4),
                                config=cfg)  # fmt: skip
    trainer.train()
    accuracy = [h["rewards/accuracies"] for h in trainer.log_history if "rewards/accuracies" in h]
    print(f"DPO rewards/accuracies: first 5 {accuracy[:5]}, last 5 {accuracy[-5:]}")
    assert sum(accuracy[-5:]) / 5 >= 0.9 > sum(accuracy[:5]) / 5
