"""DPO as written for TRL 0.11 and transformers 4.44: the "Before" of docs/migration.md, section 3.

Every commented argument has since been renamed or removed from TRL or transformers, so the tests only
compile this file. docs/examples/migration_trl_dpo.py is the same run in TextRL 1.0, and it runs.
"""

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import DPOConfig, DPOTrainer

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype="bfloat16")
tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-0.5B")
args = DPOConfig(
    output_dir="out/dpo",
    beta=0.1,
    max_prompt_length=512,  # removed in TRL 0.29
    max_completion_length=512,  # removed from DPOConfig in TRL 0.29
    rpo_alpha=0.5,  # removed in TRL 0.29
    evaluation_strategy="no",  # eval_strategy since transformers 4.41
    warmup_ratio=0.1,  # gone in transformers 5
)
trainer = DPOTrainer(
    model=model,
    ref_model=None,
    args=args,
    train_dataset=load_dataset("trl-lib/ultrafeedback_binarized", split="train"),
    tokenizer=tokenizer,  # processing_class since TRL 0.12
)
trainer.train()
