"""Supervised fine-tuning (algo: sft) on the tiny model: TRL's data layouts, parity with raw TRL, and the checks
made before training of what the loss will train on."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, DataError, SupervisedTrainer, TextRLConfig, load_model
from textrl.data.lengths import LengthWarning

from .conftest import WORDS, fast

pytestmark = pytest.mark.slow

PAIRS = [{"prompt": f"Repeat the word: {w} ->", "completion": f" {w}"} for w in WORDS * 2]
TEXT = [f"Repeat the word: {w} -> {w}" for w in WORDS * 2]
CHATS = [{"messages": [{"role": "user", "content": f"Repeat the word: {w}"}, {"role": "assistant", "content": w}]}
         for w in WORDS * 2]  # fmt: skip
CHAT_PAIRS = [{"prompt": c["messages"][:1], "completion": c["messages"][1:]} for c in CHATS]
MARKED_CHATML = (
    "{% for message in messages %}{% if message['role'] == 'assistant' %}<|im_start|>assistant\n{% generation %}"
    "{{ message['content'] }}<|im_end|>{% endgeneration %}\n{% else %}<|im_start|>{{ message['role'] }}\n"
    "{{ message['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The tiny model's ChatML with the assistant's content and end-of-turn token marked for assistant_only_loss."""


@pytest.fixture(scope="module")
def loaded(tiny: Path) -> tuple[Any, Any]:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    return model, tok


def _train(loaded: tuple[Any, Any], rows: Any, out: Path, **options: Any) -> SupervisedTrainer:
    model, tok = loaded
    trainer = SupervisedTrainer(model=model, tokenizer=tok, config=fast("sft", out, **options), train_dataset=rows)
    trainer.train()
    return trainer


@pytest.mark.parametrize("rows", [TEXT, CHATS, PAIRS, CHAT_PAIRS], ids=["text", "messages", "prompt-completion",
                                                                          "chat-prompt-completion"])  # fmt: skip
def test_every_trl_layout_trains(rows: list[Any], loaded: tuple[Any, Any], tmp_path: Path) -> None:
    history = _train(loaded, rows, tmp_path).log_history
    steps = [h for h in history if "loss" in h]
    assert len(steps) == 2 and all(h["num_tokens"] > 0 and "mean_token_accuracy" in h for h in steps), history
    assert "Token accuracy (trained tokens predicted first)" in (tmp_path / "report.svg").read_text()


def test_dataset_text_field_names_the_text_column(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    rows = [{"content": t} for t in TEXT]
    with pytest.raises(DataError, match="set dataset_text_field to it"):
        _train(loaded, rows, tmp_path / "a")
    assert _train(loaded, rows, tmp_path / "b", dataset_text_field="content").log_history


def test_completion_only_loss_trains_on_fewer_tokens_than_whole_rows(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    """The default (completion only, for prompt and completion rows) against completion_only_loss=False: the same
    rows, fewer trained tokens; TRL's num_tokens counts every token, so the loss is what differs."""
    only = _train(loaded, PAIRS, tmp_path / "only", seed=3).log_history[0]
    whole = _train(loaded, PAIRS, tmp_path / "whole", seed=3, completion_only_loss=False).log_history[0]
    assert only["num_tokens"] == whole["num_tokens"] and only["loss"] != whole["loss"]


def test_completion_only_loss_needs_a_completion(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"completion_only_loss=True, but its rows have no completion \(they are text"):
        _train(loaded, TEXT, tmp_path, completion_only_loss=True)


def test_assistant_only_loss_needs_chat_rows(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    with pytest.raises(DataError, match="assistant_only_loss=True, but its rows are plain text"):
        _train(loaded, PAIRS, tmp_path, assistant_only_loss=True)


def test_assistant_only_loss_needs_generation_markers(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    """The tiny model's ChatML has no {% generation %} markers and TRL ships no training version of it: refused
    before TRL is called. With the markers (a template file, as users give it) the run trains."""
    with pytest.raises(DataError, match=r"does not mark the assistant's turns with \{% generation %\}"):
        _train(loaded, CHATS, tmp_path / "plain", assistant_only_loss=True)
    template = tmp_path / "marked.jinja"
    template.write_text(MARKED_CHATML, encoding="utf-8")
    tok = loaded[1]
    kept = tok.chat_template
    try:
        trainer = _train(loaded, CHATS, tmp_path / "marked", assistant_only_loss=True, chat_template_path=str(template))
    finally:
        tok.chat_template = kept  # TRL sets the file's template on the shared tokenizer
    assert trainer.log_history[0]["num_tokens"] > 0


def test_prompts_filling_max_length_leave_nothing_to_train(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    long = [{"prompt": "Repeat the words: " + " ".join(WORDS * 8), "completion": " sea"}] * 16
    with pytest.raises(DataError, match="the loss trains on no token of the first 16 rows"):
        _train(loaded, long, tmp_path, max_length=16)


def test_long_rows_and_a_tiny_trained_share_are_warned(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    rows = [{"prompt": "Repeat the last word: " + " ".join(WORDS * 20), "completion": " sea"}] * 16
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _train(loaded, rows, tmp_path, max_length=None)
    texts = [str(w.message) for w in seen if issubclass(w.category, LengthWarning)]
    assert any("the loss trains on 0." in t and "of the tokens (the completions)" in t for t in texts), texts
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _train(loaded, TEXT[:12] + [TEXT[0] * 40] * 4, tmp_path / "cut", max_length=32)
    texts = [str(w.message) for w in seen if issubclass(w.category, LengthWarning)]
    assert any("4 of 16 rows (25.0%; rows 12, 13, 14, 15) are longer than max_length=32" in t for t in texts), texts


@pytest.mark.parametrize("kernel", ["sdpa", "eager"])
def test_packed_rows_see_each_other_without_flash_attention(tiny: Path, kernel: str) -> None:
    """Why the packing rule exists: a padding-free batch keeps rows apart by position ids only, which sdpa and eager
    ignore. The second row's logits, packed behind a first row, differ from the row alone (by about 0.5 here)."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny, attn_implementation=kernel).eval()
    first, second = torch.randint(5, 500, (1, 7)), torch.randint(5, 500, (1, 9))
    positions = torch.cat([torch.arange(7), torch.arange(9)])[None]
    with torch.no_grad():
        alone = model(input_ids=second).logits[0]
        packed = model(input_ids=torch.cat([first, second], 1), position_ids=positions).logits[0, 7:]
    assert (packed - alone).abs().max() > 0.05


def test_packing_under_sdpa_is_refused(loaded: tuple[Any, Any], tmp_path: Path) -> None:
    """Measured on this machine: under sdpa a packed (padding-free) row's logits differ from the row alone, so TRL
    would train rows that see each other. The wrapped strategy, which concatenates rows on purpose, trains."""
    with pytest.raises(ConfigError, match=r"packing=True with packing_strategy='bfd' trains padding-free.*'sdpa'"):
        _train(loaded, TEXT, tmp_path / "bfd", packing=True)
    assert _train(loaded, TEXT, tmp_path / "wrapped", packing=True, packing_strategy="wrapped").log_history


def test_sft_parity_with_trl(tiny: Path, tmp_path: Path) -> None:
    """The same run through TRL's SFTTrainer directly logs the same numbers."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from .test_parity_and_learning import COMMON, _same_logs

    options = {"per_device_train_batch_size": 4, "max_length": 64}
    model, tok, _ = load_model(str(tiny), load_ref=False)
    cfg = TextRLConfig(algo="sft", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False, **COMMON,
                       **options)  # fmt: skip
    ours = SupervisedTrainer(model=model, tokenizer=tok, train_dataset=PAIRS, config=cfg)
    ours.train()
    args = SFTConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                     **COMMON, **options)  # fmt: skip
    raw = SFTTrainer(model=AutoModelForCausalLM.from_pretrained(tiny), args=args, train_dataset=Dataset.from_list(PAIRS),
                     processing_class=AutoTokenizer.from_pretrained(tiny))  # fmt: skip
    raw.train()
    assert any("mean_token_accuracy" in h for h in ours.log_history)
    _same_logs(ours.log_history, raw.state.log_history)
