"""Every validation rule, in pairs: a config that breaks it raises a ConfigError naming the field and the fix,
and its twin that keeps it passes. No torch is imported here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, TextRLConfig, spec

# (id, the breaking kwargs, regex the message must match, the passing twin)
ONLINE = ", ".join(spec.algorithms_with_option("num_generations"))  # from the spec: a new online algorithm joins it

PAIRS: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    ("stall timeout", {"algo": "grpo", "stall_timeout": 0},
     r"stall_timeout: stall_timeout=0\.0; allowed: a number of seconds above 0, or \"off\". Fix: e\.g\. 1800, or off\.",
     {"algo": "grpo", "stall_timeout": "off"}),
    ("eval batch and generations", {"algo": "grpo", "eval_strategy": "steps", "per_device_eval_batch_size": 6},
     r"per_device_eval_batch_size: the evaluation batch \(per_device_eval_batch_size × processes = 6\) is not divisible by num_generations=8; TRL refuses it",
     {"algo": "grpo", "eval_strategy": "steps", "per_device_eval_batch_size": 6, "num_generations_eval": 3}),
    ("accelerator_config keys", {"algo": "dpo", "accelerator_config": {"split_batchez": True}},
     r"accelerator_config: accelerator_config has key\(s\) 'split_batchez'; allowed: split_batches, dispatch_batches",
     {"algo": "dpo", "accelerator_config": {"split_batches": True}}),
    ("unknown key did you mean", {"algo": "grpo", "lerning_rate": 1e-5},
     r"lerning_rate: unknown option for algo='grpo', and not a field of trl\.GRPOConfig in TRL 1\.16\.0\. Did you mean 'learning_rate'\? Fix: rename it",
     {"algo": "grpo", "learning_rate": 1e-5}),
    ("option of another algorithm", {"algo": "dpo", "num_generations": 4},
     rf"num_generations: does not apply to algo='dpo'; it is an option of {ONLINE}\. Fix: remove",
     {"algo": "grpo", "num_generations": 4}),
    ("reward only for online", {"algo": "kto", "reward": "my_rewards:length"},
     rf"reward: does not apply to algo='kto'; it is an option of {ONLINE}",
     {"algo": "rloo", "reward": "my_rewards:length"}),
    ("loss fixed by algorithm", {"algo": "ipo", "loss_type": ["ipo"]},
     r"loss_type: is fixed to \['ipo'\] by algo='ipo'\. Fix: remove loss_type, or use algo='dpo'",
     {"algo": "dpo", "loss_type": ["ipo"]}),
    ("renamed key", {"algo": "dpo", "rpo_alpha": 1.0},
     r"rpo_alpha: is not a TextRL option: TRL removed rpo_alpha in 0\.29.*Fix: algo='dpo', loss_type=\['sigmoid', 'sft'\]",
     {"algo": "dpo", "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 1.0]}),
    ("renamed max_prompt_length", {"algo": "grpo", "max_prompt_length": 128},
     r"max_prompt_length: is not a TextRL option.*0\.28.*Fix: with DPO, KTO and reward models use max_length.*with GRPO",
     {"algo": "dpo", "max_length": 128}),
    ("DPO max_completion_length", {"algo": "dpo", "max_completion_length": 128},
     r"max_completion_length: is not a TextRL option: TRL removed max_completion_length from DPOConfig in 0\.29\. Fix: max_length",
     {"algo": "grpo", "max_completion_length": 128}),
    ("plateau scheduler needs evaluation", {"algo": "grpo", "lr_scheduler_type": "reduce_lr_on_plateau"},
     r"lr_scheduler_type: lr_scheduler_type='reduce_lr_on_plateau' changes the rate .* eval_strategy is 'no' .*Fix: set eval_strategy",
     {"algo": "grpo", "lr_scheduler_type": "reduce_lr_on_plateau", "eval_strategy": "steps"}),
    ("whole logging steps", {"algo": "kto", "logging_steps": 2.5},
     r"logging_steps: logging_steps=2\.5: a value above 1 counts steps and must be whole.*Fix: use 2 or 3",
     {"algo": "kto", "logging_steps": 0.25}),
    ("whole save steps", {"algo": "kto", "save_steps": 1.5}, r"save_steps: save_steps=1\.5: a value above 1",
     {"algo": "kto", "save_steps": 100.0}),
    ("whole eval steps", {"algo": "kto", "eval_strategy": "steps", "eval_steps": 7.5}, r"eval_steps: eval_steps=7\.5",
     {"algo": "kto", "eval_strategy": "steps", "eval_steps": 7}),
    ("ZeRO-3 with a 4-bit model", {"algo": "dpo", "model": {"name": "m", "quantization": "4bit", "peft": {"type": "lora"}},
                                   "distributed": {"strategy": "deepspeed", "zero_stage": 3}},
     r"distributed: distributed\.zero_stage=3 with model\.quantization='4bit': ZeRO-3 partitions every parameter.*Fix: use zero_stage 2",
     {"algo": "dpo", "model": {"name": "m", "quantization": "4bit", "peft": {"type": "lora"}},
      "distributed": {"strategy": "deepspeed", "zero_stage": 2}}),
    ("quantization needs an adapter", {"algo": "grpo", "model": {"name": "m", "quantization": "8bit"}},
     r"model: model\.quantization='8bit' without model\.peft: quantized weights are frozen.*Fix: add model\.peft",
     {"algo": "grpo", "model": {"name": "m", "quantization": "8bit", "peft": {"type": "lora"}}}),
    ("vLLM server without use_vllm", {"algo": "grpo", "vllm_mode": "server"},
     r"use_vllm: vllm_mode='server' is set but use_vllm is false, so TRL generates with transformers.*Fix: set use_vllm: true",
     {"algo": "grpo", "vllm_mode": "server", "use_vllm": True}),
    ("vLLM colocate with an 8-bit model", {"algo": "grpo", "use_vllm": True,
                                           "model": {"name": "m", "quantization": "8bit", "peft": {"type": "lora"}}},
     r"use_vllm: use_vllm with vllm_mode='colocate' and model\.quantization='8bit': vLLM cannot load bitsandbytes 8-bit.*Fix: model\.quantization: 4bit",
     {"algo": "grpo", "use_vllm": True, "model": {"name": "m", "quantization": "4bit", "peft": {"type": "lora"}}}),
    ("best checkpoint needs a metric", {"algo": "dpo", "save_strategy": "best"},
     r"save_strategy: save_strategy='best' needs metric_for_best_model",
     {"algo": "dpo", "save_strategy": "best", "metric_for_best_model": "eval_loss"}),
    ("GRPO loss literal", {"algo": "grpo", "loss_type": "foo"},
     r"loss_type: got 'foo' \(str\); allowed: one of 'grpo', 'dr_grpo', 'dapo'.*Fix: use one of the allowed values",
     {"algo": "grpo", "loss_type": "dr_grpo"}),
    ("DPO loss list literal", {"algo": "dpo", "loss_type": ["sigmoid", "foo"]},
     r"loss_type\[1\]: got 'foo' \(str\); allowed: one of 'sigmoid', 'hinge'",
     {"algo": "dpo", "loss_type": ["sigmoid", "bco_pair", "sft"], "loss_weights": [0.8, 0.2, 1.0]}),
    ("KTO loss literal", {"algo": "kto", "loss_type": "sigmoid"},
     r"loss_type: got 'sigmoid' \(str\); allowed: one of 'kto', 'apo_zero_unpaired'",
     {"algo": "kto", "loss_type": "apo_zero_unpaired"}),
    ("scale_rewards literal", {"algo": "grpo", "scale_rewards": "groups"},
     r"scale_rewards: got 'groups' \(str\); allowed: one of 'group', 'batch', 'none' \(or true for 'group', false for 'none'\)",
     {"algo": "grpo", "scale_rewards": True}),
    ("num_generations >= 2", {"algo": "grpo", "num_generations": 1},
     r"num_generations: got 1 \(int\); allowed: an integer >= 2\. Fix: set num_generations to an integer >= 2",
     {"algo": "grpo", "num_generations": 2}),
    ("generation batch divisible", {"algo": "grpo", "num_generations": 3, "per_device_train_batch_size": 8},
     r"num_generations: the generation batch .* = 8 completions on one process\) is not divisible by "
     r"num_generations=3.*Allowed num_generations for this batch: 2, 4, 8\. Fix:",
     {"algo": "grpo", "num_generations": 3, "per_device_train_batch_size": 6}),
    ("generation batch with accumulation", {"algo": "rloo", "num_generations": 4, "per_device_train_batch_size": 2},
     r"per_device_train_batch_size × gradient_accumulation_steps = 2 × 1 = 2",
     {"algo": "rloo", "num_generations": 4, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 2}),
    ("generation_batch_size multiple of the batch", {"algo": "grpo", "generation_batch_size": 12},
     r"generation_batch_size=12 is not a multiple of the global batch \(per_device_train_batch_size × processes = 8\)\. Fix: use a multiple of 8",
     {"algo": "grpo", "generation_batch_size": 16}),
    ("generation_batch_size by group", {"algo": "grpo", "generation_batch_size": 12, "num_generations": 8,
                                        "per_device_train_batch_size": 4},
     r"\(generation_batch_size = 12 completions on one process\) is not divisible by num_generations=8",
     {"algo": "grpo", "generation_batch_size": 16, "num_generations": 8, "per_device_train_batch_size": 4}),
    ("generation batch two ways", {"algo": "grpo", "generation_batch_size": 16, "steps_per_generation": 2},
     r"generation_batch_size=16 and steps_per_generation=2 are both set.*Fix: set only one",
     {"algo": "grpo", "steps_per_generation": 2}),
    ("exo_pair needs smoothing", {"algo": "exo_pair", "label_smoothing": 0.0},
     r"label_smoothing: loss exo_pair needs label_smoothing > 0, got 0\.0\. Fix: .*1e-3",
     {"algo": "exo_pair", "label_smoothing": 1e-3}),
    ("exo_pair in a dpo list", {"algo": "dpo", "loss_type": ["exo_pair", "sft"]},
     r"loss exo_pair needs label_smoothing > 0", {"algo": "dpo", "loss_type": ["exo_pair", "sft"],
                                                 "label_smoothing": 1e-3}),
    ("robust smoothing < 0.5", {"algo": "robust_dpo", "label_smoothing": 0.5},
     r"loss robust needs 0 <= label_smoothing < 0\.5, got 0\.5", {"algo": "robust_dpo", "label_smoothing": 0.25}),
    ("loss_weights length", {"algo": "dpo", "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0]},
     r"loss_weights: loss_weights has 1 values \[1\.0\] for 2 losses in loss_type \['sigmoid', 'sft'\]\. Fix: give",
     {"algo": "dpo", "loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, 0.5]}),
    ("loss listed twice", {"algo": "dpo", "loss_type": ["sigmoid", "sigmoid"]},
     r"loss_type lists sigmoid more than once", {"algo": "dpo", "loss_type": ["sigmoid"]}),
    ("f-divergence losses", {"algo": "dpo", "loss_type": ["bco_pair"], "f_divergence_type": "js_divergence"},
     r"f_divergence_type='js_divergence' is not defined for loss bco_pair; it works only with sigmoid",
     {"algo": "dpo", "loss_type": ["sigmoid"], "f_divergence_type": "js_divergence"}),
    ("use_weighting with aot", {"algo": "dpo", "loss_type": ["aot"], "use_weighting": True},
     r"use_weighting=True is not implemented for loss aot", {"algo": "dpo", "loss_type": ["aot"]}),
    ("reference cache needs whole weights", {"algo": "kto", "reference_cache": "on",
                                             "distributed": {"strategy": "deepspeed", "zero_stage": 3}},
     r"reference_cache: reference_cache='on' with distributed\.zero_stage=3: ZeRO-3 partitions the weights.*Fix: set reference_cache: auto",
     {"algo": "kto", "reference_cache": "on", "distributed": {"strategy": "deepspeed", "zero_stage": 2}}),
    ("ref sync vs precompute", {"algo": "kto", "sync_ref_model": True, "precompute_ref_log_probs": True},
     r"sync_ref_model=True and precompute_ref_log_probs=True are both set", {"algo": "kto", "sync_ref_model": True}),
    ("bf16 and fp16", {"algo": "reward_model", "bf16": True, "fp16": True},
     r"bf16=True and fp16=True are both set", {"algo": "reward_model", "bf16": False, "fp16": True}),
    ("bf16 type", {"algo": "grpo", "bf16": "yes"},
     r"bf16: got 'yes' \(str\); allowed: true or false or 'auto'", {"algo": "grpo", "bf16": "auto"}),
    ("strict numbers", {"algo": "grpo", "learning_rate": "5e-6"},
     r"learning_rate: got '5e-6' \(str\); allowed: a number > 0", {"algo": "grpo", "learning_rate": 5e-6}),
    ("bounds", {"algo": "grpo", "top_p": 1.5}, r"top_p: got 1\.5 \(float\); allowed: a number > 0 and <= 1",
     {"algo": "grpo", "top_p": 0.9}),
    ("report_to target", {"algo": "dpo", "report_to": "wandbb"}, r"report_to\[0\]: got 'wandbb' \(str\); allowed: one of 'none', 'all', 'tensorboard', 'wandb'",
     {"algo": "dpo", "report_to": "wandb"}),
    ("lora on lm_head", {"algo": "dpo", "model": {"name": "m", "peft": {"target_modules": ["q_proj", "lm_head"]}}},
     r"model: model\.peft\.target_modules includes lm_head.*Fix: drop lm_head",
     {"algo": "dpo", "model": {"name": "m", "peft": {"target_modules": ["q_proj"]}}}),
    ("nested type", {"algo": "grpo", "model": {"name": "m", "peft": {"r": "16"}}},
     r"model\.peft\.r: got '16' \(str\); allowed: an integer >= 1", {"algo": "grpo", "model": {"name": "m", "peft": {"r": 16}}}),
    ("nested unknown key", {"algo": "grpo", "model": {"name": "m", "quantisation": "4bit"}},
     r"model\.quantisation: unknown key\. Did you mean 'quantization'\?", {"algo": "grpo", "model": {"name": "m", "quantization": "4bit", "peft": {"type": "lora"}}}),
    ("nested literal", {"algo": "grpo", "model": {"name": "m", "quantization": "3bit"}},
     r"model\.quantization: got '3bit' \(str\); allowed: one of '4bit', '8bit' or null",
     {"algo": "grpo", "model": {"name": "m", "quantization": "8bit", "peft": {"type": "lora"}}}),
    ("nested missing", {"algo": "grpo", "model": {"peft": {"r": 8}}}, r"model\.name: is required in this section",
     {"algo": "grpo", "model": {"name": "m", "peft": {"r": 8}}}),
    ("dataset one source", {"algo": "grpo", "dataset": {"hub": "a/b", "path": "x.jsonl"}},
     r"dataset: a dataset needs exactly one of hub, path, list or mixture; got hub, path", {"algo": "grpo", "dataset": {"path": "x.jsonl"}}),
    ("held-out rows and eval_dataset", {"algo": "dpo", "dataset": {"hub": "a/b", "test_split_size": 0.1}, "eval_dataset": {"hub": "a/b", "split": "test"}},
     r"dataset: dataset\.test_split_size=0\.1 holds rows out as the evaluation set, and eval_dataset gives one too\. Fix: keep one",
     {"algo": "dpo", "dataset": {"hub": "a/b", "test_split_size": 0.1}}),
    ("mixture fraction on some parts", {"algo": "dpo", "dataset": {"mixture": [{"hub": "a/b", "fraction": 0.7}, {"hub": "c/d"}]}},
     r"dataset: dataset\.mixture: fraction is set on 1 of 2 parts; TRL's shares are normalised across all of them\. Fix: set fraction on every part",
     {"algo": "dpo", "dataset": {"mixture": [{"hub": "a/b", "fraction": 0.7}, {"hub": "c/d", "fraction": 0.3}]}}),
    ("mixture fraction and weight", {"algo": "dpo", "dataset": {"mixture": [{"hub": "a/b", "fraction": 0.7, "weight": 0.5}]}},
     r"fraction \(TRL's share of the mixture\) and weight \(a share of each dataset's rows\) are two ways of sizing a mixture\. Fix: use one",
     {"algo": "dpo", "dataset": {"mixture": [{"hub": "a/b", "weight": 0.5}]}}),
    ("mixture part one source", {"algo": "dpo", "dataset": {"mixture": [{"hub": "a/b", "path": "x.jsonl"}]}},
     r"dataset\.mixture\[0\]: a dataset needs exactly one of hub or path; got hub, path",
     {"algo": "dpo", "dataset": {"mixture": [{"path": "x.jsonl"}]}}),
    ("test split share", {"algo": "dpo", "dataset": {"hub": "a/b", "test_split_size": 1.5}},
     r"dataset: dataset\.test_split_size=1\.5: a share of the rows is below 1, and a number of rows is a whole number .*Fix: e\.g\. 0\.1, or 500",
     {"algo": "dpo", "dataset": {"hub": "a/b", "test_split_size": 2}}),
    ("eval rows held out", {"algo": "dpo", "eval_dataset": {"hub": "a/b", "test_split_size": 0.5}},
     r"eval_dataset: eval_dataset\.test_split_size=0\.5: rows held out of the evaluation set would be used by nothing\. Fix: drop it",
     {"algo": "dpo", "eval_dataset": {"hub": "a/b"}}),
    ("reward reference", {"algo": "grpo", "reward": "my_rewards.length"},
     r"reward: got 'my_rewards\.length' \(str\); allowed: a string module:function", {"algo": "grpo", "reward": "my_rewards:length"}),
    ("reward list item", {"algo": "grpo", "reward": ["a:b", "c"]}, r"reward\[1\]: got 'c'", {"algo": "grpo", "reward": ["a:b", "c:d"]}),
    ("composed weights", {"algo": "grpo", "reward": {"compose": ["a:b", "c:d"], "weights": [1.0]}},
     r"reward: reward\.weights has 1 values for 2 rewards", {"algo": "grpo", "reward": {"compose": ["a:b", "c:d"], "weights": [1.0, 0.5]}}),
    ("composed key typo", {"algo": "grpo", "reward": {"compose": ["a:b"], "wieghts": [1.0]}},
     r"reward\.wieghts: unknown key\. Did you mean 'weights'\?", {"algo": "grpo", "reward": {"compose": ["a:b"]}}),
    ("zero stage needs deepspeed", {"algo": "dpo", "distributed": {"strategy": "ddp", "zero_stage": 3}},
     r"distributed\.zero_stage=3 applies only to strategy 'deepspeed'", {"algo": "dpo", "distributed": {"strategy": "deepspeed", "zero_stage": 3}}),
    ("parameter offload needs sharding", {"algo": "dpo", "distributed": {"strategy": "deepspeed", "zero_stage": 2,
                                                                          "offload": "optimizer_and_parameters"}},
     r"offload='optimizer_and_parameters' needs sharded parameters",
     {"algo": "dpo", "distributed": {"strategy": "deepspeed", "zero_stage": 3, "offload": "optimizer_and_parameters"}}),
    ("offload needs deepspeed or fsdp", {"algo": "dpo", "distributed": {"offload": "optimizer"}},
     r"distributed\.offload='optimizer' needs DeepSpeed or FSDP", {"algo": "dpo", "distributed": {"strategy": "fsdp", "offload": "optimizer"}}),
    ("reward_errors policy", {"algo": "grpo", "reward_errors": "ignore"}, r"reward_errors: got 'ignore' \(str\); allowed: one of 'raise', 'skip'",
     {"algo": "grpo", "reward_errors": "skip"}),
    ("extra is a mapping", {"algo": "grpo", "extra": ["log_unique_prompts"]}, r"extra: got \['log_unique_prompts'\] \(list\); allowed: a mapping",
     {"algo": "grpo", "extra": {"log_unique_prompts": True}}),
    ("output_dir required", {"algo": "grpo", "output_dir": None}, r"output_dir: got None \(NoneType\); allowed: a non-empty string",
     {"algo": "grpo"}),
    ("padding_free switched off by TRL", {"algo": "dpo", "padding_free": True},
     r"padding_free: padding_free=True: TRL 1\.13 to 1\.16 accept it for DPO and then switch it off.*Fix: drop padding_free",
     {"algo": "dpo", "padding_free": False}),
    ("SFT packing without max_length", {"algo": "sft", "packing": True, "packing_strategy": "wrapped", "max_length": None},
     r"packing: packing=True with max_length=None: packing fills sequences of max_length tokens.*Fix: set max_length",
     {"algo": "sft", "packing": True, "packing_strategy": "wrapped", "max_length": 512}),
    ("SFT padding-free without packing truncates nothing", {"algo": "sft", "padding_free": True},
     r"padding_free: padding_free=True without packing, with max_length=1024: padding-free batches are not truncated.*Fix: packing: true",
     {"algo": "sft", "padding_free": True, "max_length": None}),
    ("SFT packing under sdpa", {"algo": "sft", "packing": True, "model": {"name": "m"}},
     r"packing: packing=True with packing_strategy='bfd' trains padding-free.*model\.attn_implementation is None.*Fix: model: \{attn_implementation: flash_attention_2\}",
     {"algo": "sft", "packing": True, "model": {"name": "m", "attn_implementation": "flash_attention_2"}}),
    ("SFT chunked_nll", {"algo": "sft", "loss_type": "chunked_nll"},
     r"loss_type: .*chunked_nll.*SFTTrainer refuses it from TRL 1\.15 on",
     {"algo": "sft", "loss_type": "dft"}),
    ("tool iterations without tools", {"algo": "grpo", "max_tool_calling_iterations": 3},
     r"max_tool_calling_iterations: max_tool_calling_iterations=3 bounds the loop .* gives TRL no tools.*Fix: remove it",
     {"algo": "grpo", "max_tool_calling_iterations": None}),
    ("reward_weights per reward", {"algo": "rloo", "reward": ["a:b", "c:d"], "reward_weights": [1.0]},
     r"reward_weights: reward_weights has 1 values for 2 reward function\(s\) in reward:.*Fix: give one weight per reward",
     {"algo": "rloo", "reward": ["a:b", "c:d"], "reward_weights": [1.0, 0.5]}),
    ("reward_weights beside reward.weights", {"algo": "grpo", "reward": {"compose": ["a:b", "c:d"], "weights": [1, 2]}, "reward_weights": [1.0, 1.0]},
     r"reward_weights: reward_weights and reward\.weights are both set.*Fix: keep reward\.weights",
     {"algo": "grpo", "reward": {"compose": ["a:b", "c:d"]}, "reward_weights": [1.0, 1.0]}),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "match", "good"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_rule_pair(bad: dict[str, Any], match: str, good: dict[str, Any]) -> None:
    bad = {"output_dir": "out/x", **bad}
    with pytest.raises(ConfigError, match=match):
        TextRLConfig(**bad)
    cfg = TextRLConfig(**{"output_dir": "out/x", **good})
    assert cfg.algo == good["algo"]


def test_every_spec_rule_has_a_pair() -> None:
    """A rule added to the spec without a failing/passing pair here fails this test."""
    from textrl.spec import ALGORITHMS

    rule_fields = {rule.fields[0] for a in ALGORITHMS for rule in a.rules}
    tested = set()
    for _, bad, _match, _ in PAIRS:
        try:
            TextRLConfig(**{"output_dir": "o", **bad})
        except ConfigError as exc:
            tested.update(exc.fields)
    assert rule_fields <= tested, f"rules without a test pair: {sorted(rule_fields - tested)}"


def test_error_lists_every_problem_once() -> None:
    with pytest.raises(ConfigError) as info:
        TextRLConfig(algo="grpo", output_dir="o", temperature=-1.0, top_k=-3, lerning_rate=1.0)
    assert sorted(info.value.fields) == ["lerning_rate", "temperature", "top_k"]
    assert str(info.value).startswith("Invalid TextRL config (algo='grpo'), 3 problems:")


def test_assignment_is_validated_with_the_same_messages() -> None:
    cfg = TextRLConfig(algo="grpo", output_dir="o", per_device_train_batch_size=8)
    with pytest.raises(
        ConfigError, match=r"num_generations: the generation batch .* not divisible by num_generations=3"
    ):
        cfg.num_generations = 3
    with pytest.raises(ConfigError, match=r"temperature: got 0 \(int\); allowed: a number > 0"):
        cfg.temperature = 0
    cfg.num_generations = 4
    assert cfg.num_generations == 4


def test_config_is_its_algorithms_typed_class() -> None:
    from textrl.configs import DpoConfig, GrpoConfig, ReinforcePpConfig

    assert type(TextRLConfig(algo="grpo", output_dir="o")) is GrpoConfig
    assert isinstance(TextRLConfig(algo="dpo", output_dir="o"), DpoConfig)
    alias = TextRLConfig(algo="reinforce++", output_dir="o")
    assert type(alias) is ReinforcePpConfig and alias.algo == "reinforce_pp"
    typed = GrpoConfig(output_dir="o", num_generations=4)
    assert isinstance(typed, TextRLConfig) and typed.algo == "grpo"
    with pytest.raises(ConfigError, match=r"lerning_rate: unknown option for algo='grpo'"):
        GrpoConfig(output_dir="o", lerning_rate=1.0)


def test_issue_example_verbatim() -> None:
    cfg = TextRLConfig(algo="grpo", output_dir="out/grpo", num_generations=8, beta=0.04, learning_rate=5e-6, bf16=True)
    assert (cfg.num_generations, cfg.beta, cfg.learning_rate, cfg.bf16) == (8, 0.04, 5e-6, True)
    assert cfg.changed() == {"output_dir": "out/grpo", "beta": 0.04, "learning_rate": 5e-6, "bf16": True}
    cfg = TextRLConfig(
        algo="dpo", output_dir="o", pad_token="<pad>", distributed={"strategy": "deepspeed", "zero_stage": 3}
    )
    assert cfg.distributed is not None and cfg.distributed.zero_stage == 3


@pytest.mark.parametrize(
    ("algo", "match"),
    [
        (None, r"algo: is required; allowed: " + ", ".join(a.name for a in spec.ALGORITHMS) + r"\. Fix: add algo="),
        (3, r"algo: got 3 \(int\); allowed: grpo"),
        ("dpoo", r"algo: unknown algorithm 'dpoo'\. Did you mean 'dpo'\?"),
        ("GPRO", r"algo: unknown algorithm 'GPRO'\. Did you mean 'grpo'\?"),
    ],
)
def test_bad_algo(algo: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        TextRLConfig(algo=algo, output_dir="o")


def test_model_validate_rejects_non_mappings_and_odd_keys() -> None:
    with pytest.raises(ConfigError, match=r"config: got list; expected a mapping of options"):
        TextRLConfig.model_validate([("algo", "grpo")])
    with pytest.raises(ConfigError, match=r"1: option names are strings, got 1"):
        TextRLConfig.model_validate({"algo": "grpo", "output_dir": "o", 1: "x"})
    assert TextRLConfig.model_validate({"algo": "kto", "output_dir": "o"}).algo == "kto"


def test_generation_batch_counts_the_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `accelerate launch --num_processes 2`, 2 per device × 2 processes = 4 completions fit 4 generations."""
    kwargs = {"algo": "grpo", "output_dir": "o", "per_device_train_batch_size": 2, "num_generations": 4}
    with pytest.raises(
        ConfigError, match=r"= 2 × 1 = 2 completions on one process\) is not divisible by num_generations=4"
    ):
        TextRLConfig(**kwargs)
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert TextRLConfig(**kwargs).num_generations == 4
    monkeypatch.setenv("WORLD_SIZE", "3")
    with pytest.raises(ConfigError, match=r"= 2 × 1 × 3 processes = 6 completions over 3 processes\) is not divisible"):
        TextRLConfig(**kwargs)
    monkeypatch.delenv("WORLD_SIZE")  # a count given explicitly wins over the environment
    assert TextRLConfig.model_validate(kwargs, processes=2).num_generations == 4
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ConfigError, match=r"over 3 processes\) is not divisible"):
        TextRLConfig.model_validate(kwargs, processes=3)


def test_odd_keys_and_files_found_by_fuzzing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'': unknown option for algo='grpo'"):
        TextRLConfig(algo="grpo", output_dir="o", **{"": 1})
    bad = tmp_path / "control.yaml"
    bad.write_text("algo: grpo\x1f\n")
    with pytest.raises(ConfigError, match=r"control\.yaml: is not valid YAML: unacceptable character #x001f"):
        TextRLConfig.from_yaml(bad)
    good = tmp_path / "good.yaml"
    good.write_text("algo: grpo\noutput_dir: o\n")
    assert TextRLConfig.from_yaml(good).algo == "grpo"


def test_stall_timeout_default_and_forms() -> None:
    assert TextRLConfig(algo="dpo", output_dir="o").stall_timeout == 1800.0
    with pytest.raises(ConfigError, match=r"stall_timeout: got 'never' \(str\); allowed: a number or 'off'"):
        TextRLConfig(algo="kto", output_dir="o", stall_timeout="never")
