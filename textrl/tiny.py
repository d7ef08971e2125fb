"""A tiny Llama-style model and a real tokenizer, built offline, for tests, the demo and benchmarks.

`build_tiny_model(path)` trains a byte-level BPE tokenizer on a small built-in corpus and saves a ~140k
parameter causal LM (and, with `reward=True`, its sequence-classification twin) with `save_pretrained`,
so `load_model(path)` reads it like any checkpoint with the hub switched off. Deterministic for a seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VOCAB_SIZE = 512
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]

# Enough English, digits and punctuation for a BPE vocabulary of 512; the text itself does not matter.
_CORPUS = """
The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step.
Write a short poem about the sea. Explain gradient descent in one sentence. What is two plus two? Four.
Repeat the word: apple -> apple. Repeat the word: river -> river. Summarize the text below in a few words.
Reinforcement learning trains a policy to maximise reward; preference optimisation learns from pairs.
The model answered yes or no, then gave a reason. Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 100 1000.
Questions, answers, lists and code: def f(x): return x * 2. print("hello world") # comment
a b c d e f g h i j k l m n o p q r s t u v w x y z A B C D E F G H I J K L M N O P Q R S T U V W X Y Z
""".strip().splitlines()


def _tokenizer(path: Path) -> None:
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(_CORPUS * 20, vocab_size=VOCAB_SIZE, min_frequency=1, special_tokens=SPECIAL_TOKENS)
    bpe.post_processor = processors.ByteLevel(trim_offsets=False)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer,
        bos_token=None,
        eos_token="<|im_end|>",
        unk_token=None,
        pad_token="<|pad|>",
        additional_special_tokens=["<|im_start|>", "<|endoftext|>"],
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.padding_side = "left"
    tok.save_pretrained(path)


def _llama_config(tok_path: Path) -> object:
    from transformers import AutoTokenizer, LlamaConfig

    tok = AutoTokenizer.from_pretrained(tok_path)
    return LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,  # rotary positions cost no weights; TRL's default completions (512) fit
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )


def build_tiny_model(path: str | Path, *, seed: int = 0, reward: bool = False) -> Path:
    """Write a tiny causal LM (or, with `reward=True`, a one-label sequence classifier) and its tokenizer.

    Reuses `path` when it already holds a model built with the same seed and kind.
    """
    import torch
    from transformers import LlamaForCausalLM, LlamaForSequenceClassification

    path = Path(path)
    stamp = {"textrl_tiny": 1, "seed": seed, "reward": reward}
    marker = path / "textrl_tiny.json"
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return path
    from .checkpoints.atomic import staged_folder

    def built() -> bool:  # by another process, meanwhile
        return marker.is_file() and json.loads(marker.read_text()) == stamp

    with staged_folder(path, finished=built) as staging:
        _tokenizer(staging)
        config = _llama_config(staging)
        torch.manual_seed(seed)
        model: Any
        if reward:
            config.num_labels = 1  # type: ignore[attr-defined]
            model = LlamaForSequenceClassification(config)  # type: ignore[arg-type]
        else:
            model = LlamaForCausalLM(config)  # type: ignore[arg-type]
        model.save_pretrained(staging, safe_serialization=True)
        (staging / marker.name).write_text(json.dumps(stamp))
    return path
