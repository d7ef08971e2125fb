"""An evaluation shows its progress bar as it starts (issue 31): transformers opened it after the first batch, and
with generation a batch took the main job 56 s of silence at eval_on_start. A real GRPO run on the tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl import OnlineTrainer, load_model
from textrl.data import from_list

from .conftest import fast, letters

pytestmark = pytest.mark.slow


def test_the_evaluation_bar_opens_before_the_first_batch(
    tiny: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    prompts = from_list(["Say hi.", "Say yes.", "Say no.", "Say ok."] * 2)
    config = fast("grpo", tmp_path, max_steps=1, eval_strategy="steps", eval_steps=1, eval_on_start=True,
                  per_device_eval_batch_size=4)  # fmt: skip
    OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=prompts, eval_dataset=prompts,
                  config=config).train()  # fmt: skip
    err = capfd.readouterr().err
    assert "evaluating:   0%|          | 0/8" in err, err[-2000:]  # 8 prompts x 4 generations / 4 per batch
    assert err.index("evaluating:   0%") < err.index("evaluating: 100%")
