"""The Python API in one file (README, "Python"): GRPO with a composed reward and LoRA, then DPO on pairs.

    .venv/bin/python examples/python_api.py        # seconds on a CPU; writes out/grpo and out/dpo

It runs offline on TextRL's tiny built-in model, two training steps each. For a real run, load a hub model
as the comments show and drop `tiny_run`.
"""

from textrl import OnlineTrainer, PreferenceTrainer, TextRLConfig, load_model, reward_fn
from textrl.data import from_list
from textrl.rewards import compose, length_penalty


@reward_fn
def length_reward(prompts, completions, **_):
    return [-abs(len(c) - 64) / 64 for c in completions]


# two steps, short completions, nothing saved: seconds on a CPU (drop it for a real run)
tiny_run = {"max_steps": 2, "per_device_train_batch_size": 4, "gradient_checkpointing": False, "save_strategy": "no"}

# a hub model (needs network): load_model("Qwen/Qwen2.5-0.5B", peft={"type": "lora", "r": 16})
# the real SmolLM2-135M-Instruct, fetched once then offline: load_model("textrl:smollm2", peft=...)
# a GGUF file, converted once to float32: load_model("model.Q4_K_M.gguf") or load_model(folder, gguf_file=...)
model, tok, _ = load_model("textrl:tiny", peft={"type": "lora", "r": 16})
cfg = TextRLConfig(
    algo="grpo", output_dir="out/grpo", num_generations=4, max_completion_length=8, beta=0.04, **tiny_run
)
OnlineTrainer(
    model=model,
    tokenizer=tok,
    reward=compose(length_reward, length_penalty(32), weights=[1.0, 0.5]),
    train_dataset=from_list(["Write a short poem.", "Explain gradient descent."] * 8),
    config=cfg,
).train()

# 4-bit QLoRA (pip install 'textrl[quant]'; a CUDA GPU, or an x86-64 CPU):
#   load_model("meta-llama/Llama-3.2-1B", peft={"type": "lora", "r": 16}, quantization="4bit")
model, tok, ref = load_model("textrl:tiny", peft={"type": "lora", "r": 16})
# a hub dataset instead: from textrl.data import from_hub; from_hub("trl-lib/ultrafeedback_binarized")
pairs = from_list([{"prompt": "Repeat the word: sea ->", "chosen": " sea", "rejected": " stone"}] * 8)
cfg = TextRLConfig(algo="dpo", output_dir="out/dpo", beta=0.1, max_length=64, **tiny_run)
PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=pairs, config=cfg).train()
