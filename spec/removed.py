"""Algorithms TRL moved out or deleted, and keys renamed under users' feet. Sources: TRL's git history and wheels."""

from .model import Family, Removed, Renamed

REMOVED = (
    Removed(
        name="ppo",
        what_happened="PPOTrainer moved to trl.experimental in TRL 0.26 and was deleted from TRL in 1.13",
        replacement="algo='grpo' (critic-free, group-relative advantages) or algo='rloo'; with a learned reward "
        "model pass reward={model: path}",
    ),
    Removed(
        name="online_dpo",
        what_happened="OnlineDPOTrainer moved to trl.experimental in TRL 0.26 (`from trl import OnlineDPOTrainer` "
        "fails since 0.29); TextRL supports only TRL's stable trainers",
        replacement="algo='grpo' with your judge or reward model as the reward, or algo='dpo' on preference pairs "
        "you generate",
    ),
    Removed(
        name="orpo",
        what_happened="ORPOTrainer moved to trl.experimental in TRL 0.26 (`from trl import ORPOTrainer` fails "
        "since 0.29); TextRL supports only TRL's stable trainers",
        replacement="algo='dpo' with loss_type=['sigmoid', 'sft'] (RPO: a preference loss plus an SFT term like "
        "ORPO's, but with a reference model), or precompute_ref_log_probs=True to keep the reference out of memory",
    ),
    Removed(
        name="cpo",
        what_happened="CPOTrainer moved to trl.experimental in TRL 0.26 (`from trl import CPOTrainer` fails since "
        "0.29); TextRL supports only TRL's stable trainers",
        replacement="algo='dpo' with loss_type=['sigmoid', 'sft'], or precompute_ref_log_probs=True to avoid "
        "keeping a reference model in memory",
    ),
    Removed(
        name="simpo",
        what_happened="SimPO was CPOTrainer's loss_type='simpo'; CPOTrainer moved to trl.experimental in TRL 0.26 "
        "(`from trl import CPOTrainer` fails since 0.29)",
        replacement="algo='sigmoid_norm' (length-normalised sigmoid loss, SimPO's reward), or algo='dpo' with "
        "loss_type=['sigmoid_norm', 'sft']",
    ),
    Removed(
        name="bco",
        what_happened="BCOTrainer moved to trl.experimental in TRL 0.25 and was deleted from TRL in 1.14",
        replacement="algo='kto' for unpaired (prompt, completion, label) data, or algo='bco_pair' for paired data",
    ),
)

RENAMED = (
    Renamed(old="tokenizer", what_happened="TRL trainers renamed `tokenizer` to `processing_class` in 0.12 "
            "(the alias was gone by 0.16); it is a trainer argument, not a config option",
            replacement="pass tokenizer=... to the TextRL trainer (TextRL forwards it as processing_class)"),
    Renamed(old="processing_class", what_happened="`processing_class` is a trainer argument, not a config option",
            replacement="pass tokenizer=... to the TextRL trainer"),
    Renamed(old="max_prompt_length", what_happened="TRL removed max_prompt_length from DPOConfig in 0.29 and from "
            "GRPOConfig in 0.28", replacement="with DPO, KTO and reward models use max_length (prompt plus "
            "completion); with GRPO, RLOO and REINFORCE++ filter over-long prompts out of the dataset (TRL no longer "
            "truncates prompts)"),
    Renamed(old="max_completion_length", what_happened="TRL removed max_completion_length from DPOConfig in 0.29",
            replacement="max_length (prompt plus completion)", families=(Family.PAIRWISE, Family.BINARY,
            Family.REWARD_MODEL)),
    Renamed(old="rpo_alpha", what_happened="TRL removed rpo_alpha in 0.29; RPO is now a list of losses",
            replacement="algo='dpo', loss_type=['sigmoid', 'sft'], loss_weights=[1.0, <rpo_alpha>]"),
    Renamed(old="vllm_guided_decoding_regex", what_happened="TRL renamed it in 0.27 (old name removed in 0.28)",
            replacement="vllm_structured_outputs_regex", new_name="vllm_structured_outputs_regex"),
    Renamed(old="wandb_log_unique_prompts", what_happened="TRL renamed it in 0.26 (old name removed in 0.27)",
            replacement="log_unique_prompts=True", new_name="log_unique_prompts"),
    Renamed(old="torch_dtype", what_happened="the weight dtype is a model-loading setting, not a training option "
            "(TRL's ModelConfig renamed it dtype in 0.23; TextRL keeps torch_dtype in the model section)",
            replacement="model: {torch_dtype: bfloat16} in YAML, or load_model(..., torch_dtype='bfloat16') in "
            "Python"),
    Renamed(old="warmup_ratio", what_happened="transformers 5 folded warmup_ratio into warmup_steps",
            replacement="warmup_steps=0.1 (a value below 1 is a fraction of all steps)"),
    Renamed(old="evaluation_strategy", what_happened="transformers renamed it in 4.41",
            replacement="eval_strategy", new_name="eval_strategy"),
    Renamed(old="use_liger", what_happened="TRL's own use_liger (SFT, 2024) gave way to transformers' "
            "use_liger_kernel, which every TRL config inherits",
            replacement="use_liger_kernel", new_name="use_liger_kernel"),
    Renamed(old="max_seq_length", what_happened="TRL renamed SFTConfig's max_seq_length to max_length in 0.16 (the "
            "old name was removed in 0.20)", replacement="max_length", new_name="max_length",
            families=(Family.SUPERVISED,)),
    Renamed(old="peft_config", what_happened="LoRA settings belong to model loading",
            replacement="model: {peft: {type: lora, r: 16}} in YAML, or load_model(..., peft={'type': 'lora', "
            "'r': 16}) in Python"),
)  # fmt: skip
