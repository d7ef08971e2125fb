"""docs/examples/legacy/trl_dpo.py in TextRL 1.0 (docs/migration.md, section 3; the tests run this file)."""

from textrl import PreferenceTrainer, TextRLConfig, load_model
from textrl.data import from_list

# "textrl:tiny" is the offline demo model; for a real run: load_model("Qwen/Qwen2.5-0.5B", torch_dtype="bfloat16")
model, tokenizer, ref = load_model("textrl:tiny")
cfg = TextRLConfig(
    algo="dpo",
    output_dir="out/dpo",
    beta=0.1,
    max_length=1024,  # max_prompt_length + max_completion_length
    loss_type=["sigmoid", "sft"],  # rpo_alpha=0.5
    loss_weights=[1.0, 0.5],
    eval_strategy="no",  # evaluation_strategy
    warmup_steps=0.1,  # warmup_ratio=0.1
    max_steps=2,  # a two-step demo; drop it for a real run
)
# for a real run: from textrl.data import from_hub; from_hub("trl-lib/ultrafeedback_binarized")
pairs = from_list([{"prompt": "Repeat the word: sea ->", "chosen": " sea", "rejected": " stone"}] * 8)
PreferenceTrainer(model=model, ref_model=ref, tokenizer=tokenizer, train_dataset=pairs, config=cfg).train()
