"""One run feeds the next: an SFT run's output (a LoRA adapter, or full weights) is the model of a GRPO or DPO
run, merged by default or continued, and the next run's manifest names its parent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, OnlineTrainer, PreferenceTrainer, SupervisedTrainer, load_model

from .conftest import WORDS, fast, letters, rows_for

pytestmark = pytest.mark.slow

DEMOS = [{"prompt": f"Repeat the word: {w} ->", "completion": f" {w}"} for w in WORDS * 2]


@pytest.fixture(scope="module")
def sft_adapter(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LoRA SFT run's output_dir: adapter_config.json and the adapter's weights, the tokenizer, the manifest."""
    out = tmp_path_factory.mktemp("sft-lora")
    model, tok, _ = load_model(str(tiny), peft={"type": "lora", "r": 4}, load_ref=False)
    trainer = SupervisedTrainer(model=model, tokenizer=tok, config=fast("sft", out, max_steps=4), train_dataset=DEMOS)
    trainer.train()
    trainer.save_model()
    assert (out / "adapter_config.json").is_file() and not (out / "config.json").exists()
    return out


def _logits(model: Any, tok: Any) -> Any:
    import torch

    ids = tok("Repeat the word: sea ->", return_tensors="pt")
    with torch.no_grad():
        return model(**ids).logits


def test_an_adapter_is_merged_by_default(sft_adapter: Path, tmp_path: Path) -> None:
    """Merged: a plain model (no PEFT wrapper) whose outputs are the adapter model's; a new LoRA trains on top of
    it, GRPO from there names the SFT run as its parent."""
    from peft import AutoPeftModelForCausalLM

    merged, tok, ref = load_model(str(sft_adapter), load_ref=True)
    assert not hasattr(merged, "peft_config") and ref is not None
    with_adapter = AutoPeftModelForCausalLM.from_pretrained(sft_adapter)
    assert (_logits(merged, tok) - _logits(with_adapter, tok)).abs().max() < 1e-4
    assert (_logits(ref, tok) - _logits(merged, tok)).abs().max() < 1e-6  # DPO's reference is the SFT model

    model, tok, _ = load_model(str(sft_adapter), peft={"type": "lora", "r": 4}, load_ref=False)
    out = tmp_path / "grpo"
    OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=fast("grpo", out),
                  train_dataset=rows_for(fast("grpo", out).algorithm().data_format)).train()  # fmt: skip
    parent = json.loads((out / "textrl_manifest.json").read_text())["parent"]
    assert parent["path"] == str(sft_adapter.resolve()) and parent["algo"] == "sft"


def test_a_lora_trained_on_a_merged_adapter_reloads_as_the_whole_chain(sft_adapter: Path, tmp_path: Path) -> None:
    """SFT adapter, merged, then a new LoRA (SFT again here): the new adapter names the SFT folder as its base, so
    load_model and textrl-merge rebuild base + SFT + new adapter, not the first base with the last adapter alone."""
    from textrl.cli.merge import merge_main

    model, tok, _ = load_model(str(sft_adapter), peft={"type": "lora", "r": 4}, load_ref=False)
    out = tmp_path / "second"
    trainer = SupervisedTrainer(model=model, tokenizer=tok, config=fast("sft", out, max_steps=3), train_dataset=DEMOS)
    trainer.train()
    trainer.save_model()
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["base_model_name_or_path"] == str(sft_adapter.resolve())
    want = _logits(model.eval(), tok)
    again, tok2, _ = load_model(str(out), load_ref=False)
    assert (_logits(again, tok2) - want).abs().max() < 1e-5
    assert merge_main(["--adapter", str(out), "--output", str(tmp_path / "merged")]) == 0
    merged, tok3, _ = load_model(str(tmp_path / "merged"), load_ref=False)
    assert (_logits(merged, tok3) - want).abs().max() < 1e-5


def test_an_adapter_continues_when_asked(sft_adapter: Path, tmp_path: Path) -> None:
    model, tok, ref = load_model(str(sft_adapter), adapter="continue")
    assert hasattr(model, "peft_config") and ref is None  # TRL switches the adapter off for a reference pass
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    out = tmp_path / "dpo"
    trainer = PreferenceTrainer(model=model, tokenizer=tok, ref_model=None, config=fast("dpo", out),
                                train_dataset=rows_for(fast("dpo", out).algorithm().data_format))  # fmt: skip
    trainer.train()
    assert json.loads((out / "textrl_manifest.json").read_text())["parent"]["algo"] == "sft"


def test_an_adapter_mode_that_cannot_work_is_refused(sft_adapter: Path, tiny: Path) -> None:
    with pytest.raises(ConfigError, match=r"adapter: got 'continu'; allowed: merge, continue"):
        load_model(str(tiny), adapter="continu")
    with pytest.raises(ConfigError, match=r"is a LoRA adapter to continue \(adapter: continue\), and peft asks for a "
                       r"new one.*Fix: drop peft"):  # fmt: skip
        load_model(str(sft_adapter), adapter="continue", peft={"type": "lora", "r": 4})
    with pytest.raises(ConfigError, match=r"merging into 4-bit or 8-bit weights rounds the adapter away\. Fix: "
                       r"adapter: continue"):  # fmt: skip
        load_model(str(sft_adapter), quantization="4bit", peft={"type": "lora", "r": 4})


def test_full_weights_feed_the_next_run(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    sft_out = tmp_path / "sft"
    trainer = SupervisedTrainer(model=model, tokenizer=tok, config=fast("sft", sft_out), train_dataset=DEMOS)
    trainer.train()
    trainer.save_model()
    again, tok2, _ = load_model(str(sft_out), load_ref=False)
    assert (_logits(again, tok2) - _logits(model.eval(), tok)).abs().max() < 1e-5
    assert again.textrl_loaded_from == str(sft_out)
