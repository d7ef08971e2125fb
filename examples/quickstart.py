"""Train GRPO on a tiny model that TextRL builds offline, and show the mean reward moving.

    .venv/bin/python examples/quickstart.py            # about 20 s on 2 CPU cores

The reward prefers completions made of lowercase letters; with a real model, swap the path for a hub id
(e.g. "Qwen/Qwen2.5-0.5B") and the reward for yours.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch

from textrl import OnlineTrainer, TextRLConfig, load_model, reward_fn
from textrl.data import from_list
from textrl.tiny import build_tiny_model


@reward_fn
def lowercase_share(prompts: list[str], completions: list[str], **_: object) -> list[float]:
    """Fraction of completion characters that are lowercase letters."""
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]


def main(workdir: Path, steps: int = 60) -> tuple[float, float]:
    torch.set_num_threads(1)  # small models on few cores run fastest single-threaded
    model, tokenizer, _ = load_model(str(build_tiny_model(workdir / "tiny-model")), load_ref=False)
    config = TextRLConfig(
        algo="grpo",
        output_dir=str(workdir / "grpo"),
        num_generations=8,
        per_device_train_batch_size=16,
        max_completion_length=12,
        learning_rate=3e-3,
        beta=0.0,
        max_steps=steps,
        logging_steps=1,
        save_strategy="no",
        gradient_checkpointing=False,
    )
    prompts = ["Write a short poem.", "Explain gradient descent.", "Say something.", "Hello"] * 64
    trainer = OnlineTrainer(
        model=model, tokenizer=tokenizer, reward=lowercase_share, train_dataset=from_list(prompts), config=config
    )
    trainer.train()
    rewards = [h["reward"] for h in trainer.log_history if "reward" in h]
    first, last = sum(rewards[:5]) / 5, sum(rewards[-5:]) / 5
    print(f"mean reward: first 5 steps {first:.3f} -> last 5 steps {last:.3f} ({len(rewards)} steps)")
    return first, last


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="textrl-quickstart-") as tmp:
        first, last = main(Path(tmp))
    sys.exit(0 if last > first else 1)
