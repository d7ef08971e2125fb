"""One training run in this process, through TextRL or through TRL directly; writes a JSON result to --out.

    .venv/bin/python bench/training.py --mode textrl|trl --algo grpo|dpo --tiny DIR --out FILE.json [options]

Used by bench/run.py, which runs each case in a fresh process (so peak memory is the run's own) and alternates
TextRL and TRL runs. Both sides get the same model files, data, seed and TRL settings; the parity test
(tests/integration/test_parity_and_learning.py) proves their logged metrics are identical, and the result
carries the log history so run.py checks that again.

Time per optimizer step is measured between `on_step_end` callbacks, leaving out the first `--warmup` steps.
Peak memory is the process's max RSS at the end of training (before TextRL writes its report).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from common import TIMING_KEYS

PROMPTS = ["Write a short poem.", "Explain gradient descent.", "Say something.", "Hello"]
WORDS = ["apple", "river", "sea", "dog", "tree", "stone", "cloud", "fire", "moon", "star", "rain", "wind", "sand",
         "leaf", "bird", "fish"]  # fmt: skip
PAIRS = [{"prompt": f"Repeat the word: {w} ->", "chosen": f" {w}", "rejected": f" {WORDS[(i + 5) % 16]}"}
         for i, w in enumerate(WORDS)]  # fmt: skip


def lowercase_share(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]


def waiting(name: str, seconds: float) -> Any:
    """A reward that waits like a verifier or judge call, then scores lowercase share."""

    def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        time.sleep(seconds)
        return lowercase_share(prompts, completions)

    reward.__name__ = name
    return reward


TOPICS = ["rivers", "bread", "stars", "bees", "rain", "clocks", "salt", "maps"]
VERBS = ["explain", "describe", "summarise", "teach"]


def long_pairs(n: int) -> list[dict[str, str]]:
    """`n` short chat pairs (about 45 tokens of prompt and answer): a helpful answer chosen, an off-topic one
    rejected."""
    pairs = []
    for i in range(n):
        topic, other, verb = TOPICS[i % 8], TOPICS[(i + 3) % 8], VERBS[(i // 8) % 4]
        pairs.append({
            "prompt": f"User: Please {verb} {topic} to a ten-year-old, with one everyday example.\nAssistant:",
            "chosen": f" Sure! {topic.capitalize()} are around us every day. For example, look for {topic} on your "
                      "way to school.",
            "rejected": f" I would rather talk about {other}; {topic} are dull. Ask me about {other} instead.",
        })  # fmt: skip
    return pairs


def chat_pairs(n: int) -> list[dict[str, Any]]:
    """The same `n` pairs in TRL's conversational form (lists of messages), so that the model's chat template (and
    SmolLM2's system prompt) is applied, as in a chat-tuning run."""
    return [
        {
            "prompt": [{"role": "user", "content": p["prompt"].removeprefix("User: ").removesuffix("\nAssistant:")}],
            "chosen": [{"role": "assistant", "content": p["chosen"].strip()}],
            "rejected": [{"role": "assistant", "content": p["rejected"].strip()}],
        }
        for p in long_pairs(n)
    ]


def settings(args: argparse.Namespace) -> dict[str, Any]:
    common: dict[str, Any] = {"max_steps": args.steps, "logging_steps": 1, "save_strategy": "no", "seed": 7,
                              "learning_rate": args.learning_rate}  # fmt: skip
    if args.algo == "grpo":
        g = args.num_generations
        return common | {"num_generations": g, "per_device_train_batch_size": g * 2, "beta": 0.04,
                         "max_completion_length": args.completion_length}  # fmt: skip
    if args.algo == "sft":
        return common | {"per_device_train_batch_size": 8, "max_length": args.max_length}
    return common | {"per_device_train_batch_size": 8, "max_length": args.max_length, "beta": args.beta}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["textrl", "trl"], required=True)
    parser.add_argument("--algo", choices=["grpo", "dpo", "sft"], required=True)
    parser.add_argument("--tiny", required=True, help="Folder of the tiny model (textrl.tiny.build_tiny_model).")
    parser.add_argument("--out", required=True, help="Where the JSON result goes (TRL prints its logs to stdout).")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--num-generations", type=int, default=4)
    parser.add_argument("--completion-length", type=int, default=16)
    parser.add_argument("--rewards", type=int, default=1, help="GRPO: this many rewards, composed.")
    parser.add_argument("--wait", type=float, default=0.0, help="GRPO: each reward waits this many seconds.")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--beta", type=float, default=0.1, help="DPO: beta.")
    parser.add_argument("--max-length", type=int, default=32, help="DPO: max_length.")
    parser.add_argument("--pairs", type=int, default=0, help="DPO: this many chat-length pairs (default: the words).")
    parser.add_argument("--chat", action="store_true", help="DPO: the --pairs as conversations (chat template).")
    parser.add_argument("--trl-precompute", action="store_true", help="DPO, TRL: precompute_ref_log_probs=True.")
    parser.add_argument("--reference-cache", help="DPO, TextRL: reference_cache on, in this folder.")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (both sides alike).")
    parser.add_argument("--lora", type=int, default=0, help="TextRL: a LoRA adapter of this rank (all linear layers).")
    parser.add_argument("--quantization", choices=["4bit", "8bit"], help="TextRL: bitsandbytes base weights (QLoRA).")
    parser.add_argument("--vllm", action="store_true", help="TextRL, GRPO: vLLM generates (colocate mode).")
    args = parser.parse_args()

    import torch
    from transformers import TrainerCallback

    torch.set_num_threads(args.threads)  # 2 shared cores: one thread is faster (shared/TRL-NOTES.md); same both sides

    class Clock(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.ends: list[float] = []
            self.peak_mb = 0.0
            self.training_peak_mb = 0.0

        def on_step_end(self, *a: Any, **k: Any) -> None:
            self.ends.append(time.perf_counter())

        def on_train_end(self, *a: Any, **k: Any) -> None:
            self.peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            self.training_peak_mb = _high_water_mb()

    clock = Clock()
    rewards = [waiting(f"r{i}", args.wait) for i in range(args.rewards)] if args.wait else [lowercase_share]
    options = settings(args)
    out = tempfile.mkdtemp(prefix=f"bench-{args.mode}-")
    start = time.perf_counter()
    if args.mode == "textrl":
        history = _textrl(args, options, rewards, out, clock)
    else:
        history = _trl(args, options, rewards, out, clock)
    total = time.perf_counter() - start
    steady = clock.ends[args.warmup :]
    per_step = (steady[-1] - steady[0]) / (len(steady) - 1)
    logged = [{k: v for k, v in h.items() if k not in TIMING_KEYS} for h in history]
    result = {"per_step_s": per_step, "peak_mb": clock.peak_mb, "total_s": total, "history": logged,
              "before_load_mb": BEFORE_LOAD_MB, "footprint_mb": FOOTPRINT_MB,
              "training_peak_mb": clock.training_peak_mb, "generation_s": GENERATION_S}  # fmt: skip
    Path(args.out).write_text(json.dumps(result), encoding="utf-8")


def demos(args: argparse.Namespace) -> list[dict[str, Any]]:
    """SFT rows: the pairs' prompts with their chosen completions (completion-only loss, TRL's default for them)."""
    return [{"prompt": p["prompt"], "completion": p["chosen"]} for p in pairs(args)]


def pairs(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.chat:
        return chat_pairs(args.pairs)
    return long_pairs(args.pairs) if args.pairs else PAIRS * 16


BEFORE_LOAD_MB = 0.0
"""The process's max RSS once torch, transformers and TRL are imported, before the model loads (TextRL mode)."""
GENERATION_S: list[float] = []
"""Seconds in each generation round (TextRL mode, GRPO)."""
FOOTPRINT_MB = 0.0
"""The loaded policy's parameters and buffers (transformers' get_memory_footprint), TextRL mode."""


def _load(args: argparse.Namespace, load_ref: bool) -> Any:
    global BEFORE_LOAD_MB, FOOTPRINT_MB
    import trl  # noqa: F401  (what a run imports anyway, so that the difference is the model's)

    from textrl import load_model

    BEFORE_LOAD_MB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peft = {"type": "lora", "r": args.lora} if args.lora else None
    loaded = load_model(args.tiny, peft=peft, quantization=args.quantization, load_ref=load_ref)
    FOOTPRINT_MB = loaded[0].get_memory_footprint() / 2**20
    import contextlib
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # glibc keeps freed heap (the float32 weights read before
        import ctypes  # quantizing); give it back, so that RSS shows what the run holds

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with contextlib.suppress(OSError):  # Linux: restart the RSS high-water mark (the training peak without loading's)
        Path("/proc/self/clear_refs").write_text("5")
    return loaded


def _high_water_mb() -> float:
    """The process's RSS high-water mark since the last reset (VmHWM, Linux), else its max RSS."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _textrl(args: argparse.Namespace, options: dict[str, Any], rewards: list[Any], out: str, clock: Any) -> Any:
    from textrl import TextRLConfig
    from textrl.data import from_list

    if args.algo == "dpo":  # the overhead rows compare the same work: TRL's default keeps its reference in the loop
        cache = args.reference_cache
        options = options | (
            {"reference_cache": "on", "reference_cache_dir": cache} if cache else {"reference_cache": "off"}
        )
    if args.vllm:
        options = options | {"use_vllm": True, "vllm_mode": "colocate", "vllm_max_model_length": 512}
    cfg = TextRLConfig(algo=args.algo, output_dir=out, gradient_checkpointing=False, report_to=["none"], **options)
    if args.algo == "grpo":  # each side imports what a script of that algorithm would
        from textrl import OnlineTrainer, reward_fn
        from textrl.rewards import compose

        model, tok, _ = _load(args, load_ref=False)
        reward = compose(*rewards) if len(rewards) > 1 else reward_fn(rewards[0])
        trainer: Any = OnlineTrainer(model=model, tokenizer=tok, reward=reward, train_dataset=from_list(PROMPTS * 64),
                                     config=cfg, callbacks=[clock])  # fmt: skip
    elif args.algo == "sft":
        from textrl import SupervisedTrainer

        model, tok, _ = _load(args, load_ref=False)
        trainer = SupervisedTrainer(model=model, tokenizer=tok, train_dataset=from_list(demos(args)), config=cfg,
                                    callbacks=[clock])  # fmt: skip
    else:
        from textrl import PreferenceTrainer

        model, tok, ref = _load(args, load_ref=not args.reference_cache)  # the cache needs no reference copy
        trainer = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(pairs(args)),
                                    config=cfg, callbacks=[clock])  # fmt: skip
    generate = getattr(trainer.trl_trainer, "_generate_single_turn", None)
    if generate is not None:  # GRPO (TRL >= 1.0): the time spent generating, vLLM or transformers

        def timed(*a: Any, **k: Any) -> Any:
            start = time.perf_counter()
            try:
                return generate(*a, **k)
            finally:
                GENERATION_S.append(time.perf_counter() - start)

        trainer.trl_trainer._generate_single_turn = timed
    trainer.train()
    return trainer.log_history


def _trl(args: argparse.Namespace, options: dict[str, Any], rewards: list[Any], out: str, clock: Any) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(args.tiny)
    tok = AutoTokenizer.from_pretrained(args.tiny)
    common: dict[str, Any] = {"output_dir": out, "bf16": False, "activation_checkpointing": False, "report_to": "none"}
    if args.algo == "grpo":
        from trl import GRPOConfig, GRPOTrainer

        trainer: Any = GRPOTrainer(model=model, reward_funcs=rewards, args=GRPOConfig(**common, **options),
                                   train_dataset=Dataset.from_list([{"prompt": p} for p in PROMPTS * 64]),
                                   processing_class=tok, callbacks=[clock])  # fmt: skip
    elif args.algo == "sft":
        from trl import SFTConfig, SFTTrainer

        trainer = SFTTrainer(model=model, args=SFTConfig(**common, **options), processing_class=tok,
                             train_dataset=Dataset.from_list(demos(args)), callbacks=[clock])  # fmt: skip
    else:
        from trl import DPOConfig, DPOTrainer

        config = DPOConfig(**common, **options, precompute_ref_log_probs=args.trl_precompute)
        trainer = DPOTrainer(model=model, args=config, processing_class=tok,
                             train_dataset=Dataset.from_list(pairs(args)), callbacks=[clock])  # fmt: skip
    trainer.train()
    return trainer.state.log_history


if __name__ == "__main__":
    main()
