"""TRL-format recipes: the committed corpus of public recipes converts and validates, keeping every value; each
translation rule (renamed keys, ModelConfig, dataset keys, rewards, env) says what it did and where. No torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from textrl import TextRLConfig
from textrl.cli.convert import TRL_COMMANDS
from textrl.errors import ConfigError
from textrl.trl_recipe import (
    CANNOT_KEEP,
    DROPPED,
    RENAMED,
    RENAMED_VALUES,
    TRAINERS,
    Translation,
    process_fit,
    textrl_config_marks,
    translate,
)
from textrl.validation.yaml_io import key_lines, load_yaml_file

CORPUS = Path(__file__).resolve().parents[1] / "recipes" / "trl"
INDEX: dict[str, str] = yaml.safe_load((CORPUS / "index.yaml").read_text())
PROCESSES = {"open-r1__Qwen2.5-1.5B-Instruct__grpo__config_demo_code_ioi.yaml": 7}
"""Recipes meant for several processes: open-r1's README launches GRPO with --num_processes=7 (an 8th GPU serves
vLLM); on one process its batch of 64 would not split into groups of 14 generations. Every other recipe's batch
divides on one process."""
COLLECTION_ONLY = set(CANNOT_KEEP) | {"reward_funcs", "tokenizer_name_or_path"}
"""What a public recipe may still need a hand for: its collection's own keys (and TRL keys removed without a
successor), rewards built by its own script, and a tokenizer other than the model's (philschmid's Llama 3.1 SFT
recipe trains the base model with the Instruct model's tokenizer)."""


def _translate(name: str) -> tuple[dict[str, Any], Translation]:
    path = CORPUS / name
    recipe = load_yaml_file(path)
    return recipe, translate(recipe, INDEX[name], lines=key_lines(path.read_text()), base_dir=CORPUS)


def test_corpus_is_large_and_varied() -> None:
    assert len(INDEX) >= 10
    assert {INDEX[n] for n in INDEX} >= {"grpo", "dpo", "kto", "rloo", "reward", "sft"}
    texts = {n: (CORPUS / n).read_text() for n in INDEX}
    for feature in ("use_peft: true", "load_in_4bit: true", "dataset_mixture:", "datasets:", "reward_funcs:",
                    "accelerate_config: zero2", "max_seq_length:", "chat_template:", "packing_strategy: ffd",
                    "assistant_only_loss: true"):  # fmt: skip
        assert any(feature in t for t in texts.values()), feature
    sources = (CORPUS / "SOURCES.md").read_text()
    for name in INDEX:
        (row,) = [line for line in sources.splitlines() if line.startswith(f"| {name} |")]
        assert "Apache-2.0" in row or "MIT" in row, row  # source and licence noted


@pytest.mark.parametrize("name", sorted(INDEX))
def test_public_recipe_converts_with_no_unknown_key_and_validates(name: str) -> None:
    recipe, translation = _translate(name)
    assert translation.unknown == []
    assert {p.field for p in translation.problems} <= COLLECTION_ONLY, translation.problems
    for problem in translation.problems:
        assert "Fix:" in problem.message
        assert problem.where.startswith("line ") or problem.field not in recipe  # a missing key has no line
    assert textrl_config_marks(recipe) == {}  # read as the recipe it is
    fit = process_fit(translation.config, recipe)
    count = fit.counts()[0] if fit is not None else 1  # the smallest process count its batch divides on
    assert count == PROCESSES.get(name, 1)  # found from the recipe alone: open-r1's 7 GPUs
    cfg = TextRLConfig.model_validate(translation.config, processes=count)
    _same_values(recipe, translation, cfg)


def _same_values(recipe: dict[str, Any], translation: Translation, cfg: Any) -> None:
    """Every TRL config field of the recipe is the same option with the same value; ModelConfig went to model:;
    reward_weights keeps the weights of the rewards converted; padding_free (which TRL's DPO turns off) is dropped."""
    config = translation.config
    algo = cfg.algorithm()
    options = {o.name for o in algo.options}
    moved = set(RENAMED) | set(DROPPED) | {"warmup_ratio", "max_prompt_length", "max_completion_length"}
    for key, value in recipe.items():
        if key == "padding_free" and value and algo.trl_trainer == "trl.DPOTrainer":
            assert key not in config and "padding_free: dropped: TRL's DPO trainer turns it off" in _notes(translation)
        elif key == "reward_weights":
            refused = [p.message for p in translation.problems if p.field == "reward_funcs"]
            kept = [w for f, w in zip(recipe["reward_funcs"], value, strict=True)
                    if not any(m.startswith(repr(f)) for m in refused)]  # fmt: skip
            assert config.get(key) == (kept or None), key
        elif key in RENAMED_VALUES and value in RENAMED_VALUES[key]:  # ffd: today's name for the same packing
            assert config[key] == RENAMED_VALUES[key][value][0], key
        elif key in options and key not in moved and key not in ("model", "dataset", "reward", "env"):
            assert config[key] == value, key
            assert getattr(cfg, key) is not None
    model = cfg.model
    assert model.name == recipe["model_name_or_path"]
    assert model.torch_dtype == (recipe.get("dtype") or recipe.get("torch_dtype") or "float32")
    if recipe.get("use_peft"):
        assert model.peft.r == recipe.get("lora_r", 16) and model.peft.alpha == recipe.get("lora_alpha", 32)
        assert model.peft.dropout == recipe.get("lora_dropout", 0.05)
        targets = recipe.get("lora_target_modules")
        assert model.peft.target_modules == targets
    if recipe.get("load_in_4bit"):
        assert model.quantization == "4bit"
    if "warmup_ratio" in recipe:
        assert cfg.warmup_steps == recipe["warmup_ratio"]
    mixture = (recipe.get("dataset_mixture") or {}).get("datasets") or recipe.get("datasets")
    if mixture:
        parts = cfg.dataset.mixture
        assert [p.hub for p in parts] == [m.get("id", m.get("path")) for m in mixture]
        assert [p.weight for p in parts] == [m.get("weight") for m in mixture]
        assert [p.columns for p in parts] == [m.get("columns") for m in mixture]
        assert [p.split for p in parts] == [m.get("split", "train") for m in mixture]
    if "test_split_size" in (recipe.get("dataset_mixture") or {}):
        assert cfg.dataset.test_split_size == recipe["dataset_mixture"]["test_split_size"]


def test_sft_recipes_keep_their_template_length_and_packing() -> None:
    """alignment-handbook's SmolLM2 SFT recipe: its inline ChatML template goes to model.chat_template, the old
    max_seq_length to max_length; SmolLM3's: packing_strategy ffd (TRL's old name) becomes bfd, with notes."""
    recipe, smollm2 = _translate("alignment-handbook__smollm2__sft__config.yaml")
    assert smollm2.config["model"]["chat_template"] == recipe["chat_template"]
    assert smollm2.config["max_length"] == recipe["max_seq_length"] == 8192
    assert "max_length (TRL renamed SFTConfig's max_seq_length" in _notes(smollm2)
    _, smollm3 = _translate("alignment-handbook__smollm3__sft__sft.yaml")
    assert smollm3.config["packing_strategy"] == "bfd" and "bfd ('ffd': TRL 0.20 renamed it" in _notes(smollm3)
    assert (
        smollm3.config["assistant_only_loss"] is True and "{% generation %}" in smollm3.config["model"]["chat_template"]
    )


def test_converted_corpus_keeps_the_numbers_that_matter() -> None:
    """A few values read by hand from the recipes, through the whole conversion."""
    _, t = _translate("alignment-handbook__smollm3__dpo__apo.yaml")
    cfg = TextRLConfig.model_validate(t.config)
    assert (cfg.learning_rate, cfg.beta, cfg.loss_type, cfg.max_length) == (1e-6, 0.05, ["apo_zero"], 24576)
    assert (cfg.per_device_train_batch_size, cfg.gradient_accumulation_steps, cfg.save_steps) == (1, 2, 0.5)
    assert cfg.model.name == "HuggingFaceTB/SmolLM3-3B-checkpoints" and cfg.model.revision == "it-SFT"
    assert cfg.lr_scheduler_kwargs == {"min_lr_rate": 0.1} and cfg.use_liger_kernel is True
    _, t = _translate("alignment-handbook__zephyr-7b-beta__dpo__config_qlora.yaml")
    cfg = TextRLConfig.model_validate(t.config)
    assert cfg.model.quantization == "4bit" and cfg.model.peft.r == 128 and cfg.optim == "paged_adamw_32bit"
    assert [p.split for p in cfg.dataset.mixture] == ["train_prefs"]
    assert [p.split for p in cfg.eval_dataset.mixture] == ["test_prefs"]
    _, t = _translate("open-r1__Qwen2.5-Coder-7B-Instruct__grpo__config_codeforces.yaml")
    cfg = TextRLConfig.model_validate(t.config)
    assert cfg.loss_type == "dr_grpo" and cfg.scale_rewards == "none" and cfg.beta == 0.0
    assert cfg.env == {"WANDB_ENTITY": "huggingface", "WANDB_PROJECT": "open-r1"}
    _, t = _translate("trl__docs-clis__rloo_config__accelerate_config_zero2.yaml")
    cfg = TextRLConfig.model_validate(t.config)
    assert (cfg.distributed.strategy, cfg.distributed.zero_stage) == ("deepspeed", 2)
    assert cfg.reward == "trl.rewards:accuracy_reward"


def _one(recipe: dict[str, Any], trainer: str = "dpo") -> Translation:
    return translate({"model_name_or_path": "org/m", "dataset_name": "org/d", **recipe}, trainer)


def _notes(t: Translation) -> str:
    return "\n".join(str(n) for n in t.notes)


@pytest.mark.parametrize(
    ("old", "value", "new"),
    [
        ("vllm_guided_decoding_regex", "[a-z]+", "vllm_structured_outputs_regex"),
        ("wandb_log_unique_prompts", True, "log_unique_prompts"),
        ("evaluation_strategy", "steps", "eval_strategy"),
        ("hub_model_revision", "v1", "hub_revision"),
        ("use_liger", True, "use_liger_kernel"),
    ],
)
def test_renamed_keys_take_todays_name_with_a_note(old: str, value: Any, new: str) -> None:
    trainer = "grpo" if old.startswith(("vllm", "wandb")) else "dpo"
    extra = {"reward_funcs": ["m.r"]} if trainer == "grpo" else {}
    t = translate({"model_name_or_path": "org/m", "dataset_name": "org/d", old: value, **extra}, trainer,
                  lines={(old,): 7})  # fmt: skip
    assert t.problems == [] and t.config[new] == value and old not in t.config
    assert f"line 7: {old}: {new} (" in _notes(t)
    both = translate({"model_name_or_path": "m", "dataset_name": "d", old: value, new: value, **extra}, trainer)
    assert [p.field for p in both.problems] == [old] and f"Fix: keep {new}" in both.problems[0].message


def test_model_config_becomes_the_model_section() -> None:
    t = _one({"model_revision": "v2", "torch_dtype": "bfloat16", "attn_implementation": "sdpa", "use_peft": True,
              "lora_r": 64, "lora_target_modules": ["q_proj", "v_proj"], "lora_modules_to_save": ["lm_head"],
              "use_dora": True, "load_in_4bit": True, "trust_remote_code": True})  # fmt: skip
    assert t.problems == []
    assert t.config["model"] == {
        "name": "org/m", "revision": "v2", "torch_dtype": "bfloat16", "attn_implementation": "sdpa",
        "trust_remote_code": True, "quantization": "4bit",
        "peft": {"type": "lora", "r": 64, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "v_proj"],
                 "use_dora": True, "modules_to_save": ["lm_head"]},
    }  # fmt: skip
    assert t.config["trust_remote_code"] is True  # also TRL's field (it loads reward models by name)
    assert "renamed it dtype" in _notes(t) and "nested" in _notes(t)
    plain = _one({})
    assert plain.config["model"] == {"name": "org/m", "torch_dtype": "float32"}
    assert "float32, the default of TRL's ModelConfig" in _notes(plain)
    no_targets = _one({"use_peft": True})
    assert no_targets.config["model"]["peft"]["target_modules"] is None  # PEFT's default modules, as TRL
    ignored = _one({"lora_r": 8})
    assert "peft" not in ignored.config["model"] and "only with use_peft: true" in _notes(ignored)


@pytest.mark.parametrize(
    ("recipe", "field", "says"),
    [
        ({"use_peft": True, "lora_target_modules": "q_proj|v_proj"}, "lora_target_modules", "regular expression"),
        ({"load_in_4bit": True, "bnb_4bit_quant_type": "fp4"}, "bnb_4bit_quant_type", "nf4"),
        ({"use_peft": True, "lora_task_type": "SEQ_CLS"}, "lora_task_type", "drop lora_task_type"),
        ({"dtype": "bfloat16", "torch_dtype": "float16"}, "torch_dtype", "keep one"),
        ({"deepspeed": "ds.json"}, "deepspeed", "distributed: {strategy: deepspeed"),
        ({"resume_from_checkpoint": True}, "resume_from_checkpoint", "textrl-train --resume"),
        ({"dataset_streaming": True}, "dataset_streaming", "streaming is not offered"),
        ({"system_prompt": "Be brief."}, "system_prompt", "system message"),
        ({"warmup_ratio": 0.1, "warmup_steps": 10}, "warmup_ratio", "keep one"),
        ({"accelerate_config": "my/acc.yaml"}, "accelerate_config", "accelerate launch --config_file"),
        ({"num_generations": 4}, "num_generations", "a field of trl.GRPOConfig, trl.RLOOConfig, not of trl.DPOConfig"),
        ({"tokenizer_name_or_path": "org/other"}, "tokenizer_name_or_path", "save that tokenizer into the model"),
        ({"algo": "grpo"}, "algo", "not an algorithm of TRL's trl.DPOTrainer"),
        ({"reward": "m:f"}, "reward", "run a TextRL config without --trl"),
        ({"model_init_kwargs": {"device_map": "auto"}}, "model_init_kwargs", "Fix: drop it from model_init_kwargs"),
        ({"dataset_mixture": {"datasets": [{"config": "x"}]}}, "dataset_mixture.datasets[0]", "needs id. Fix"),
        ({"datasets": [{"path": "a/b", "weight": 0.5}]}, "datasets[0]", "has weight; allowed: path, name"),
    ],
)
def test_keys_that_cannot_be_kept_are_refused_with_a_fix(recipe: dict[str, Any], field: str, says: str) -> None:
    t = _one(recipe)
    assert [p.field for p in t.problems] == [field]
    assert says in t.problems[0].message and "Fix" in t.problems[0].message and t.unknown == []


def test_an_unknown_key_is_named_with_its_line_and_a_guess() -> None:
    t = translate({"model_name_or_path": "m", "dataset_name": "d", "lerning_rate": 1e-5}, "dpo",
                  lines={("lerning_rate",): 12})  # fmt: skip
    (problem,) = t.problems
    assert t.unknown == ["lerning_rate"] and problem.where == "line 12"
    assert "Did you mean 'learning_rate'?" in problem.message and "drop it or map it by hand" in problem.message


def test_old_keys_with_an_unambiguous_meaning_translate() -> None:
    t = _one({"rpo_alpha": 0.5, "warmup_ratio": 0.05, "overwrite_output_dir": True, "max_prompt_length": 512,
              "gradient_checkpointing_use_reentrant": False, "env": {"HF_HUB_OFFLINE": 1}})  # fmt: skip
    assert t.problems == []
    assert t.config["loss_type"] == ["sigmoid", "sft"] and t.config["loss_weights"] == [1.0, 0.5]
    assert t.config["warmup_steps"] == 0.05 and t.config["gradient_checkpointing_kwargs"] == {"use_reentrant": False}
    assert t.config["env"] == {"HF_HUB_OFFLINE": 1}
    assert "overwrite_output_dir" not in t.config and "max_prompt_length" not in t.config
    notes = _notes(t)
    assert "--overwrite" in notes and "max_length bounds prompt plus completion" in notes
    cfg = TextRLConfig.model_validate(t.config)
    assert cfg.loss_weights == [1.0, 0.5] and cfg.output_dir == "trainer_output"


def test_dataset_keys() -> None:
    t = _one({"dataset_config": "en", "dataset_train_split": "train_prefs", "dataset_test_split": "test_prefs",
              "eval_strategy": "steps"})  # fmt: skip
    assert t.config["dataset"] == {"hub": "org/d", "subset": "en", "split": "train_prefs"}
    assert t.config["eval_dataset"] == {"hub": "org/d", "subset": "en", "split": "test_prefs"}
    no_eval = _one({"dataset_test_split": "test_prefs"})
    assert "eval_dataset" not in no_eval.config  # TRL's scripts evaluate only when eval_strategy is not no
    mixture = translate({"model_name_or_path": "m", "datasets": [{"path": "a/b", "name": "x", "columns": ["prompt"],
                         "fraction": 0.7}, {"path": "c/d", "fraction": 0.3}], "test_split_size": 0.1,
                         "reward_funcs": "accuracy_reward"}, "grpo")  # fmt: skip
    assert mixture.problems == []
    assert mixture.config["dataset"] == {
        "mixture": [{"hub": "a/b", "subset": "x", "columns": ["prompt"], "fraction": 0.7},
                    {"hub": "c/d", "fraction": 0.3}],
        "test_split_size": 0.1,
    }  # fmt: skip
    assert mixture.config["reward"] == "trl.rewards:accuracy_reward"


def test_rewards_of_trl_scripts_and_import_paths() -> None:
    t = translate({"model_name_or_path": "m", "dataset_name": "d", "reward_funcs": [
        "think_format_reward", "get_soft_overlong_punishment", "my_pkg.rewards.brevity"]}, "grpo")  # fmt: skip
    assert t.config["reward"] == ["trl.rewards:think_format_reward", "textrl.rewards.from_trl:soft_overlong_punishment",
                                  "my_pkg.rewards:brevity"]  # fmt: skip
    assert "max_completion_len=1280" in _notes(t)
    model = translate({"model_name_or_path": "m", "dataset_name": "d", "reward_model_name_or_path": "org/rm"}, "rloo")
    assert model.config["reward"] == {"model": "org/rm"}
    both = translate({"model_name_or_path": "m", "dataset_name": "d", "reward_model_name_or_path": "org/rm",
                      "reward_funcs": ["a.b"]}, "grpo")  # fmt: skip
    assert [p.field for p in both.problems] == ["reward_model_name_or_path"]
    assert _one({}, "kto").problems == []  # offline trainers take no reward


def test_the_cli_offers_every_trl_command() -> None:
    assert tuple(TRAINERS) == TRL_COMMANDS  # textrl-train --trl and textrl-convert --trl, without importing the spec


def test_model_init_kwargs_go_to_the_model_section() -> None:
    t = _one({"model_init_kwargs": {"torch_dtype": "bfloat16", "attn_implementation": "sdpa"}})
    assert t.problems == [] and t.config["model"]["torch_dtype"] == "bfloat16"
    assert t.config["model"]["attn_implementation"] == "sdpa"


def test_unknown_trl_command() -> None:
    with pytest.raises(ConfigError, match=r"--trl: got 'ppo'; allowed: grpo, rloo, dpo, kto, reward"):
        translate({}, "ppo")


def test_local_model_and_data_are_written_from_the_new_config_folder(tmp_path: Path) -> None:
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "data.jsonl").write_text("{}\n")
    out = tmp_path / "configs"
    t = translate({"model_name_or_path": "models/tiny", "dataset_name": "data.jsonl"}, "dpo", base_dir=tmp_path,
                  out_dir=out)  # fmt: skip
    assert t.config["model"]["name"] == "../models/tiny" and t.config["dataset"] == {"path": "../data.jsonl",
                                                                                       "split": "train"}  # fmt: skip


# --- recipes written for several processes (issue 31) --------------------------------------------------------------
