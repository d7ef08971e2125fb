"""QLoRA and 8-bit LoRA on the CPU: bitsandbytes (>= 0.45) runs 4-bit and 8-bit layers without a GPU, so TextRL's
quantized path trains for real here (TRL-NOTES.md, "Engines on CPU"). GRPO and DPO train through 4-bit and 8-bit
base weights, textrl-merge folds the adapter into the dequantized base (greedy generations equal the adapter
model's), and what bitsandbytes cannot do is refused with its reason."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, OnlineTrainer, PreferenceTrainer, load_model, spec
from textrl.data import from_list

from .conftest import fast, letters, rows_for

pytestmark = pytest.mark.slow

LAYERS = {"4bit": "Linear4bit", "8bit": "Linear8bitLt"}


def _train(algo: str, quantization: str, model_path: Path, out: Path) -> tuple[Any, list[dict[str, Any]], bool]:
    model, tok, ref = load_model(str(model_path), peft={"type": "lora", "r": 4}, quantization=quantization)
    assert ref is None  # the adapter switched off is the reference
    kinds = {type(m).__name__ for m in model.modules()}
    assert LAYERS[quantization] in kinds, kinds
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    assert all("lora_" not in n for n in frozen) and frozen, "the quantized base must be frozen, the adapter not"
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    rows = from_list(rows_for(spec.BY_NAME[algo].data_format))
    if algo == "grpo":
        trainer: Any = OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=rows,
                                     config=fast(algo, out))  # fmt: skip
    else:
        trainer = PreferenceTrainer(model=model, tokenizer=tok, ref_model=None, train_dataset=rows,
                                    config=fast(algo, out))  # fmt: skip
    trainer.train()
    trainer.save_model()
    moved = any(not p.detach().equal(before[n]) for n, p in model.named_parameters() if n in before)
    return model, trainer.log_history, moved


@pytest.mark.parametrize("quantization", ["4bit", "8bit"])
@pytest.mark.parametrize("algo", ["grpo", "dpo"])
def test_quantized_lora_trains(algo: str, quantization: str, tiny: Path, tmp_path: Path) -> None:
    _, history, moved = _train(algo, quantization, tiny, tmp_path / "out")
    steps = [h for h in history if "loss" in h]
    assert len(steps) == 2 and all(math.isfinite(h["loss"]) for h in steps), history
    assert ("reward" if algo == "grpo" else "rewards/accuracies") in steps[0]
    assert moved, "no LoRA weight changed"


@pytest.mark.parametrize("quantization", ["4bit", "8bit"])
def test_merge_of_a_quantized_run_generates_like_the_adapter_model(quantization: str, tiny: Path,
                                                                    tmp_path: Path) -> None:  # fmt: skip
    """The merged checkpoint is full precision and greedy-decodes exactly as the quantized base plus adapter did. The
    run is the Python API's, with a model the trainer was given: the manifest records the model's quantization.
    Merging into the original (never quantized) weights would not match: measured 0.09 apart in logits with other
    greedy tokens (the adapter learned to correct the quantized weights)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from textrl.cli.merge import merge

    model, _, _ = _train("grpo", quantization, tiny, tmp_path / "run")
    merged_dir = merge(tmp_path / "run", tmp_path / "merged")
    merged = AutoModelForCausalLM.from_pretrained(merged_dir, dtype=torch.float32).eval()
    assert not hasattr(merged.config, "quantization_config")
    assert {p.dtype for p in merged.parameters()} == {torch.float32}
    assert all(type(m).__name__ not in LAYERS.values() for m in merged.modules())
    tok = AutoTokenizer.from_pretrained(merged_dir)
    prompts = tok(["Repeat the word: sea ->", "Write a short poem."], return_tensors="pt", padding=True,
                  padding_side="left")  # fmt: skip
    model.eval()
    with torch.no_grad():
        want = model.generate(**prompts, max_new_tokens=12, do_sample=False, pad_token_id=tok.pad_token_id)
        got = merged.generate(**prompts, max_new_tokens=12, do_sample=False, pad_token_id=tok.pad_token_id)
        gap = (model(**prompts).logits - merged(**prompts).logits).abs().max().item()
    assert torch.equal(want, got)
    # 4-bit layers compute with the dequantized weights, so only float rounding differs; LLM.int8 also rounds each
    # activation to 8 bits (through float16), which no full-precision model repeats: measured 0.006 here
    bound = {"4bit": 1e-3, "8bit": 2e-2}[quantization]
    assert gap < bound, f"merged logits differ from the adapter model's by {gap}"


def test_quantization_without_bitsandbytes_names_the_extra(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bitsandbytes is installed here; the test hides it from importlib's lookup, as on a machine without it."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "bitsandbytes" else real(name, *a)
    )
    with pytest.raises(ConfigError, match=r"quantization: got '4bit', which needs bitsandbytes.*pip install 'textrl\[quant\]'"):  # fmt: skip
        load_model(str(tiny), quantization="4bit", peft={"type": "lora"})
    with pytest.raises(ConfigError, match=r"quantization: got '2bit'; allowed: '4bit', '8bit' or None"):
        load_model(str(tiny), quantization="2bit")


def test_what_bitsandbytes_cannot_run_is_refused_with_its_reason(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The trial layer really runs: on torch's `meta` device (no data) bitsandbytes fails, and that failure is the
    reason given. On this machine's CPU the same trial passes."""
    from textrl.engines import quantization

    assert quantization._trial("4bit", "cpu") is None and quantization._trial("8bit", "cpu") is None
    monkeypatch.setattr(quantization, "device", lambda: "meta")
    with pytest.raises(ConfigError) as caught:
        load_model(str(tiny), quantization="4bit", peft={"type": "lora"})
    message = str(caught.value)
    assert (
        "quantization: got '4bit', but bitsandbytes" in message
        and "cannot run 4bit layers on this machine's meta" in message
    )
    assert "Fix: run where bitsandbytes supports it" in message
