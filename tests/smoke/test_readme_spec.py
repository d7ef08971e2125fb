"""Every code example of the README spec (shared/seeds), run as written on this CPU machine.

What is swapped, and only that: hub model names for TextRL's offline tiny models (`textrl:tiny`, and
`textrl:tiny-reward` or a 3-label tiny classifier for the reward models), hub datasets for local files or inline rows of
the same format, the placeholder bodies the spec leaves open (`return [...]`, `my_kto_dataset`, `rm_ds`, `prompts`),
and the size of the GRPO quickstart's prompt list (`* 32` becomes `* 1`, so that three epochs are 6 steps on two
cores instead of 192). What cannot run without a CUDA GPU (4-bit loading, flash attention, DeepSpeed, vLLM) is run up
to the error that says so, and the rest of the example runs without it; tests/gpu runs those parts on a GPU.
`bf16=True` runs as bfloat16 autocast on the CPU, as TRL runs it; its PrecisionWarning is tested in
tests/integration/test_trl_build.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from textrl import ConfigError

pytestmark = [
    pytest.mark.smoke,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::textrl.trl_support.build.PrecisionWarning"),
]

PAIRS = [{"prompt": f"Repeat the word: {w} ->", "chosen": f" {w}", "rejected": " stone"} for w in ("sea", "sky")] * 4


def test_grpo_with_a_callable_reward(workdir: Path) -> None:
    from textrl import OnlineTrainer, TextRLConfig, load_model, reward_fn
    from textrl.data import from_list

    @reward_fn
    def length_reward(prompts, completions, **_):  # type: ignore[no-untyped-def]
        return [-abs(len(c) - 64) / 64 for c in completions]

    model, tok, _ = load_model("textrl:tiny", peft={"type": "lora", "r": 16})

    cfg = TextRLConfig(
        algo="grpo",
        output_dir="out/grpo",
        num_generations=8,
        beta=0.04,
        learning_rate=5e-6,
        bf16=True,
    )

    trainer = OnlineTrainer(
        model=model,
        tokenizer=tok,
        reward=length_reward,
        train_dataset=from_list(["Write a short poem.", "Explain gradient descent."] * 1),
        config=cfg,
    )
    trainer.train()
    assert trainer.trl_trainer.state.global_step == 6  # two prompts, one per step (8 generations), three epochs
    assert (workdir / "out/grpo/report.svg").is_file()


def test_dpo_with_a_preference_dataset(workdir: Path) -> None:
    from textrl import PreferenceTrainer, TextRLConfig, load_model
    from textrl.data import from_hub

    (workdir / "ultrafeedback_binarized.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PAIRS))
    model, tok, ref = load_model("textrl:tiny", peft={"type": "lora", "r": 16}, quantization="4bit")  # on the CPU
    assert model.is_loaded_in_4bit

    cfg = TextRLConfig(algo="dpo", output_dir="out/dpo", beta=0.1, bf16=True)

    trainer = PreferenceTrainer(
        model=model,
        ref_model=ref,
        tokenizer=tok,
        train_dataset=from_hub("ultrafeedback_binarized.jsonl"),
        config=cfg,
    )
    trainer.train()
    assert ref is None and trainer.trl_trainer.state.global_step == 3  # 8 pairs, batch 8, three epochs


def test_kto_with_binary_feedback(workdir: Path) -> None:
    from textrl import PreferenceTrainer, TextRLConfig, load_model
    from textrl.data import from_list

    words = (("sea", "sea"), ("sky", "stone"), ("sun", "sun"), ("sand", "sea"))
    my_kto_dataset = from_list(
        [{"prompt": f"Repeat the word: {w} ->", "completion": f" {c}", "label": w == c} for w, c in words] * 2
    )

    cfg = TextRLConfig(algo="kto", output_dir="out/kto", beta=0.1, bf16=True)
    model, tok, ref = load_model("textrl:tiny")
    trainer = PreferenceTrainer(
        model=model, ref_model=ref, tokenizer=tok,
        train_dataset=my_kto_dataset,   # needs prompt/completion/label
        config=cfg,
    )  # fmt: skip
    trainer.train()
    assert trainer.trl_trainer.state.global_step == 3


def test_rloo_with_a_trained_reward_model(workdir: Path) -> None:
    from textrl import OnlineTrainer, RewardModelTrainer, TextRLConfig, load_model
    from textrl.data import from_list

    rm_ds = from_list([{"chosen": r["prompt"] + r["chosen"], "rejected": r["prompt"] + r["rejected"]} for r in PAIRS])
    prompts = from_list(["Write a short poem.", "Explain gradient descent.", "Say hi.", "Name a colour."] * 2)

    rm_cfg = TextRLConfig(algo="reward_model", output_dir="out/rm", bf16=True)
    rm_model, tok, _ = load_model("textrl:tiny-reward", load_ref=False)
    RewardModelTrainer(model=rm_model, tokenizer=tok, train_dataset=rm_ds, config=rm_cfg).train()

    model, tok, ref = load_model("textrl:tiny")
    cfg = TextRLConfig(algo="rloo", output_dir="out/rloo", bf16=True)
    OnlineTrainer(model=model, ref_model=ref, tokenizer=tok,
                  reward=rm_model, train_dataset=prompts, config=cfg).train()  # fmt: skip
    history = json.loads((workdir / "out/rloo/log_history.json").read_text())
    assert any("rewards/tiny-reward/mean" in h for h in history), history[0]


def test_reward_functions(workdir: Path) -> None:
    from textrl.rewards import compose, length_penalty, reward_fn

    @reward_fn
    def semantic_match(prompts, completions, **_):  # type: ignore[no-untyped-def]
        return [float(p.split()[-1] in c) for p, c in zip(prompts, completions, strict=True)]

    reward = compose(semantic_match, length_penalty, weights=[1.0, 0.1])
    assert reward(prompts=["Say sea"], completions=["sea" + "." * 61]) == [1.0]


def test_classifier_reward(workdir: Path, textrl_home: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from textrl.models import builtin_model

    # the offline stand-in for cardiffnlp/twitter-roberta-base-sentiment: a classifier with its three labels
    tiny = builtin_model("textrl:tiny")
    AutoModelForSequenceClassification.from_pretrained(tiny, num_labels=3).save_pretrained(
        "twitter-roberta-base-sentiment"
    )
    AutoTokenizer.from_pretrained(tiny).save_pretrained("twitter-roberta-base-sentiment")

    from transformers import pipeline

    from textrl.rewards import ClassifierReward

    sentiment = pipeline("sentiment-analysis", model="twitter-roberta-base-sentiment")
    reward = ClassifierReward(sentiment, target_label="LABEL_2")  # positive
    scores = reward(prompts=["p", "q"], completions=["what a lovely day", "awful"])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)


def test_model_loading(workdir: Path) -> None:
    from textrl import load_model

    # QLoRA loads on this CPU (bitsandbytes runs here); FlashAttention needs a CUDA GPU and flash-attn
    with pytest.raises(ConfigError, match=r"attn_implementation: got 'flash_attention_2', which needs the flash_attn "
                                          r"package and a CUDA GPU, missing here\. Fix: use 'sdpa'"):  # fmt: skip
        model, tok, ref = load_model(
            "textrl:tiny",
            peft={"type": "lora", "r": 16, "alpha": 32, "target_modules": "all-linear"},
            quantization="4bit",          # nf4 QLoRA
            torch_dtype="bfloat16",
            attn_implementation="flash_attention_2",
            load_ref=True,                 # False for GRPO/RLOO to save memory
        )  # fmt: skip
    model, tok, ref = load_model("textrl:tiny", peft={"type": "lora", "r": 16, "alpha": 32, "target_modules": "all-linear"},
                                 quantization="4bit", torch_dtype="bfloat16", attn_implementation="sdpa",
                                 load_ref=True)  # fmt: skip
    assert model.is_loaded_in_4bit and ref is None  # When peft is set, ref_model is None
    assert model.peft_config["default"].lora_alpha == 32 and tok.pad_token is not None


def test_distributed_and_vllm_settings(workdir: Path) -> None:
    import importlib.util

    from textrl import TextRLConfig
    from textrl.rollout.vllm import vllm_config
    from textrl.trl_build import build_trl_config

    cfg = TextRLConfig(algo="grpo", output_dir="out", distributed={"strategy": "deepspeed", "zero_stage": 3})
    if importlib.util.find_spec("deepspeed") is None:
        with pytest.raises(ConfigError, match=r"pip install 'textrl\[deepspeed\]'"):
            build_trl_config(cfg)

    cfg = TextRLConfig(
        algo="grpo", output_dir="out",
        extra={"use_vllm": True, "vllm_gpu_memory_utilization": 0.6},
    )  # fmt: skip
    assert cfg.use_vllm is True and cfg.vllm_gpu_memory_utilization == 0.6 and cfg.extra == {}  # type: ignore[attr-defined]
    options = vllm_config(mode="colocate", gpu_memory_utilization=0.6, check_installed=False)
    assert TextRLConfig(algo="grpo", output_dir="out", extra=options) == TextRLConfig(
        algo="grpo", output_dir="out", **options
    )


def test_example_yaml_trains_from_the_command_line(workdir: Path, textrl_home: Path) -> None:
    (workdir / "tldr.jsonl").write_text(
        "".join(json.dumps({"prompt": f"Summarize: text {i}."}) + "\n" for i in range(200))
    )
    (workdir / "my_rewards.py").write_text(
        "def length_reward(prompts, completions, **_):\n    return [-abs(len(c) - 64) / 64 for c in completions]\n"
    )
    (workdir / "cfg.yaml").write_text(
        """algo: grpo
output_dir: out/grpo
learning_rate: 5e-6
num_train_epochs: 1
num_generations: 8
beta: 0.04
bf16: true

model:
  name: textrl:tiny

dataset:
  path: tldr.jsonl
  split: train[:1%]

reward: my_rewards:length_reward
"""
    )
    env = {**__import__("os").environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([str(Path(sys.executable).parent / "textrl-train"), "--config", "cfg.yaml"],
                          capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 2" in done.stdout
