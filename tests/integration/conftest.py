"""One tiny offline model (and its reward-model twin) per test session, shared by the integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from textrl import spec
from textrl.rewards import reward_fn

PROMPTS = ["Write a short poem.", "Explain gradient descent.", "What is two plus two?", "Repeat the word: sea ->"]
WORDS = ["apple", "river", "sea", "dog", "tree", "stone", "cloud", "fire"]


def rows_for(data_format: spec.DataFormat, n: int = 16) -> list[dict[str, Any]]:
    """A small dataset in any of the spec's data formats (chosen by its columns, so new algorithms are covered); an
    optional prompt is given where the format's example row gives one."""
    columns = data_format.columns
    if data_format.layouts:  # supervised demonstrations: prompt and completion
        return [{"prompt": f"Repeat the word: {WORDS[i % 8]} ->", "completion": f" {WORDS[i % 8]}"} for i in range(n)]
    if columns == ("prompt",):
        return [{"prompt": PROMPTS[i % len(PROMPTS)]} for i in range(n)]
    if "label" in columns:
        return [{"prompt": f"Repeat the word: {WORDS[i % 8]} ->", "completion": f" {WORDS[(i // 2) % 8]}",
                 "label": i % 2 == 0} for i in range(n)]  # fmt: skip
    prompt = "prompt" in data_format.required or "prompt" in data_format.example
    return [
        {**({"prompt": f"Repeat the word: {w} ->"} if prompt else {}),
         "chosen": f" {w}" if prompt else f"Repeat the word: {w} -> {w}",
         "rejected": f" {WORDS[(i + 3) % 8]}" if prompt else f"Repeat the word: {w} -> {WORDS[(i + 3) % 8]}"}
        for i, w in enumerate(WORDS[i % 8] for i in range(n))
    ]  # fmt: skip


@reward_fn
def letters(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    """Fraction of completion characters that are lowercase letters: the integration tests' plain reward."""
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]


@pytest.fixture(scope="session", autouse=True)
def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)  # 2 shared cores: one thread is several times faster (shared/TRL-NOTES.md)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from textrl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)


@pytest.fixture(scope="session")
def tiny_rm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from textrl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny_rm"), seed=0, reward=True)


def fast(algo: str, output_dir: Path, **options: Any) -> Any:
    """A config for a 2-step run on the tiny model: small batches, short completions, no checkpoints."""
    from textrl import TextRLConfig

    base: dict[str, Any] = {"max_steps": 2, "logging_steps": 1, "save_strategy": "no", "gradient_checkpointing": False,
                            "per_device_train_batch_size": 4, "learning_rate": 1e-3, "report_to": ["none"]}  # fmt: skip
    family = spec.BY_NAME[algo].family
    if family is spec.Family.ONLINE:
        base |= {"num_generations": 4, "max_completion_length": 8}
    elif family is not spec.Family.REWARD_MODEL:
        base |= {"max_length": 64}
    return TextRLConfig(algo=algo, output_dir=str(output_dir), **(base | options))
