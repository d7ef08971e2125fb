"""Recipes written for TRL's CLI, through the real console scripts: `textrl-train --trl CMD` trains and dry-runs them,
`textrl-convert` writes the TextRL YAML they amount to (offline tiny model, local data)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import GRPO
from .test_train_cli import write

CORPUS = Path(__file__).resolve().parents[1] / "recipes" / "trl"

PAIRS = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": " no"} for w in ("sea", "sky", "sun", "sand")]

DPO_RECIPE = """\
# A DPO recipe as TRL's CLI reads it (trl dpo --config dpo_recipe.yaml), with the keys recipes still carry.
model_name_or_path: {model}
torch_dtype: float32
datasets:
  - path: pairs.jsonl
    columns: [prompt, chosen, rejected]
  - path: more_pairs.jsonl
test_split_size: 0.25
eval_strategy: steps
eval_steps: 2
output_dir: out/dpo
beta: 0.2
loss_type: ipo
learning_rate: 5.0e-6
per_device_train_batch_size: 4
per_device_eval_batch_size: 4
max_steps: 2
max_length: 32
max_prompt_length: 16
warmup_ratio: 0.1
overwrite_output_dir: true
report_to: none
"""

GRPO_RECIPE = """\
model_name_or_path: textrl:tiny
dataset_name: quickstart_prompts.jsonl
reward_funcs:
  - recipe_reward.marked_lowercase
reward_weights: [1.0]
output_dir: out/grpo
num_generations: 4
per_device_train_batch_size: 8
max_completion_length: 8
learning_rate: 1.0e-3
max_steps: 3
logging_steps: 1
save_strategy: "no"
gradient_checkpointing: false
vllm_guided_decoding_regex: null
env:
  RECIPE_MARK: from-the-env-block
"""

REWARD = """\
import os
from pathlib import Path


def marked_lowercase(completions, **_):
    Path("mark.txt").write_text(os.environ.get("RECIPE_MARK", "unset"))
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
"""


def _pairs(folder: Path) -> None:
    write(folder / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in PAIRS * 2))
    write(folder / "more_pairs.jsonl", "".join(json.dumps(r) + "\n" for r in PAIRS))


def test_dry_run_of_a_dpo_recipe_shows_the_plan_and_each_translation(cli, tmp_path: Path, textrl_home: Path) -> None:  # type: ignore[no-untyped-def]
    _pairs(tmp_path)
    write(tmp_path / "dpo_recipe.yaml", DPO_RECIPE.format(model=textrl_home / "tiny"))
    done = cli("textrl-train", "--trl", "dpo", "--config", "dpo_recipe.yaml", "--dry-run")
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "recipe: dpo_recipe.yaml, written for TRL's CLI; 5 of its keys translated:" in out
    assert "  line 3: torch_dtype: model.torch_dtype (TRL's ModelConfig renamed it dtype in 0.23)" in out
    assert "  line 4: datasets: dataset.mixture of 2 datasets, TRL's sizes by fraction" in out
    assert "  line 19: max_prompt_length: dropped (16): TRL removed it in 0.29" in out
    assert "  line 20: warmup_ratio: warmup_steps: 0.1 (transformers 5 reads a value below 1 as a ratio)" in out
    assert "  line 21: overwrite_output_dir: dropped: transformers 5 removed it" in out
    assert "config: valid, algo=dpo" in out
    # 12 rows in the mixture; a quarter (3) held out as TRL's test split, evaluated since eval_strategy is steps
    assert "dataset: 9 rows from a mixture of 2 datasets, columns prompt, chosen, rejected" in out
    assert "eval_dataset: 3 rows (held out of dataset by test_split_size=0.25): ok" in out
    assert "lengths: rows fit" in out and "effective batch: 4 per device" in out
    assert "loss_type = ['ipo']" in out and "beta = 0.2" in out and "warmup_steps = 0.1" in out
    assert "dry run: the run would start" in out


def test_trains_the_tiny_model_from_a_grpo_recipe(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "recipe_reward.py", REWARD)
    write(tmp_path / "grpo_recipe.yaml", GRPO_RECIPE)
    done = cli("textrl-train", "--trl", "grpo", "--config", "grpo_recipe.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "read as a recipe for trl grpo" in done.stderr
    assert "textrl-train: done at global step 3, 3 logged steps" in done.stdout
    out = tmp_path / "out/grpo"
    assert (out / "model.safetensors").is_file()
    manifest = json.loads((out / "textrl_manifest.json").read_text())
    assert manifest["textrl_config"]["num_generations"] == 4
    assert manifest["textrl_config"]["reward"] == "recipe_reward:marked_lowercase"
    history = json.loads((out / "log_history.json").read_text())
    assert any("rewards/marked_lowercase/mean" in h for h in history)
    assert (tmp_path / "mark.txt").read_text() == "from-the-env-block"  # the env: block reached the reward


def test_convert_writes_a_textrl_config_that_runs(cli, tmp_path: Path, textrl_home: Path) -> None:  # type: ignore[no-untyped-def]
    _pairs(tmp_path)
    (tmp_path / "recipes").mkdir()
    write(tmp_path / "recipes" / "dpo_recipe.yaml", DPO_RECIPE.format(model=textrl_home / "tiny"))
    for name in ("pairs.jsonl", "more_pairs.jsonl"):
        shutil.move(tmp_path / name, tmp_path / "recipes" / name)
    done = cli("textrl-convert", "--trl", "dpo", "recipes/dpo_recipe.yaml", "-o", "configs/dpo.yaml")
    assert done.returncode == 0, done.stderr
    assert "textrl-convert: wrote configs/dpo.yaml (5 translations)" in done.stdout
    text = (tmp_path / "configs/dpo.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=")
    schema = text.splitlines()[0].split("=", 1)[1]
    assert ((tmp_path / "configs") / schema).resolve().is_file()
    assert "#   line 20: warmup_ratio: warmup_steps: 0.1" in text
    assert "- path: ../recipes/pairs.jsonl" in text  # written from the new file's folder
    dry = cli("textrl-train", "--config", "configs/dpo.yaml", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "dataset: 9 rows from a mixture of 2 datasets" in dry.stdout
    again = cli("textrl-convert", "--trl", "dpo", "recipes/dpo_recipe.yaml", "-o", "configs/dpo.yaml")
    assert again.returncode == 2 and "configs/dpo.yaml exists. Fix: --overwrite" in again.stderr


def test_convert_lists_what_needs_a_hand_and_train_refuses_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = CORPUS / "open-r1__Qwen2.5-1.5B-Instruct__grpo__config_demo.yaml"
    done = cli("textrl-convert", "--trl", "grpo", str(recipe), "-o", "grpo.yaml")
    assert done.returncode == 1, done.stderr
    assert f"{recipe}:9: dataset_prompt_column: the recipe collection's script builds prompts" in done.stderr
    text = (tmp_path / "grpo.yaml").read_text()
    assert "# NOT CONVERTED: these keys need your hand" in text and "line 10: system_prompt:" in text
    assert "- open_r1.rewards:accuracy_reward" in text
    train = cli("textrl-train", "--trl", "grpo", "--config", str(recipe), "--dry-run")
    assert train.returncode == 2
    assert f"{recipe}:10: system_prompt: the recipe collection's script adds it to every prompt" in train.stderr


def test_recipe_mistakes_point_at_the_recipe_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "recipe_reward.py", REWARD)
    write(tmp_path / "grpo_recipe.yaml", GRPO_RECIPE.replace("learning_rate:", "lerning_rate:"))
    done = cli("textrl-train", "--trl", "grpo", "--config", "grpo_recipe.yaml", "--dry-run")
    assert done.returncode == 2
    assert "grpo_recipe.yaml:10: lerning_rate: is not a field of trl.GRPOConfig" in done.stderr
    assert "Did you mean 'learning_rate'?" in done.stderr
    write(tmp_path / "grpo_recipe.yaml", GRPO_RECIPE.replace("num_generations: 4", "num_generations: 3"))
    done = cli("textrl-train", "--trl", "grpo", "--config", "grpo_recipe.yaml", "--dry-run")
    assert done.returncode == 2
    assert "grpo_recipe.yaml:7: num_generations: the generation batch" in done.stderr
    write(tmp_path / "grpo_recipe.yaml", GRPO_RECIPE.replace("model_name_or_path: textrl:tiny", "dtype: bf16"))
    done = cli("textrl-train", "--trl", "grpo", "--config", "grpo_recipe.yaml", "--dry-run")
    assert done.returncode == 2 and "model_name_or_path: is missing" in done.stderr


def test_the_documented_recipe_dry_runs(cli) -> None:  # type: ignore[no-untyped-def]
    recipe = Path(__file__).resolve().parents[2] / "examples/trl/grpo_recipe.yml"
    done = cli("textrl-train", "--trl", "grpo", "--config", str(recipe), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "line 8: reward_funcs: reward: recipe_rewards:lowercase_share" in done.stdout
    assert "reward called on 4 dataset rows" in done.stdout and "dry run: the run would start" in done.stdout


SEVEN_GPU_RECIPE = """\
# open-r1's GRPO batch: 16 x 4 x 7 GPUs = 448 completions, groups of 14
model_name_or_path: textrl:tiny
dataset_name: quickstart_prompts.jsonl
reward_funcs: [quickstart_rewards.lowercase_share]
output_dir: out/grpo
per_device_train_batch_size: 16
gradient_accumulation_steps: 4
num_generations: 14
max_completion_length: 8
max_steps: 2
"""
DIVIDES = "the generation batch divides num_generations=14 on 7, 14, 21, ... processes; on 1 process it does not"


def test_convert_a_recipe_written_for_seven_gpus(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "recipe.yaml", SEVEN_GPU_RECIPE)
    done = cli("textrl-convert", "--trl", "grpo", "recipe.yaml", "-o", "grpo.yaml")
    assert done.returncode == 0, done.stderr
    assert f"textrl-convert: processes: {DIVIDES}. Checked on 7;" in done.stderr
    assert f"\n# Processes: {DIVIDES}. Checked on 7;" in (tmp_path / "grpo.yaml").read_text()
    seven = cli("textrl-convert", "--trl", "grpo", "recipe.yaml", "-o", "grpo.yaml", "--overwrite",
                "--num-processes", "7")  # fmt: skip
    assert seven.returncode == 0, seven.stderr
    assert "processes: checked on 7 processes (--num-processes 7); the generation batch divides" in seven.stderr
    two = cli("textrl-convert", "--trl", "grpo", "recipe.yaml", "-o", "grpo2.yaml", "--num-processes", "2")
    assert two.returncode == 2 and not (tmp_path / "grpo2.yaml").exists()
    assert ("recipe.yaml:8: num_generations: the generation batch (per_device_train_batch_size × "
            "gradient_accumulation_steps × processes = 16 × 4 × 2 processes = 128 completions over 2 processes) is "
            "not divisible by num_generations=14") in two.stderr  # fmt: skip
    assert "Convert it for such a count: --num-processes 7" in two.stderr
    zero = cli("textrl-convert", "--trl", "grpo", "recipe.yaml", "-o", "grpo3.yaml", "--num-processes", "0")
    assert zero.returncode == 2 and "--num-processes: got 0; allowed: 1 or more" in zero.stderr


def test_convert_of_a_recipe_that_divides_on_one_process_says_nothing_of_processes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "recipe.yaml", SEVEN_GPU_RECIPE.replace("num_generations: 14", "num_generations: 16"))
    done = cli("textrl-convert", "--trl", "grpo", "recipe.yaml", "-o", "grpo.yaml")
    assert done.returncode == 0, done.stderr
    assert "processes" not in done.stderr and "# Processes" not in (tmp_path / "grpo.yaml").read_text()


def test_convert_the_published_open_r1_recipe_for_seven_gpus(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = CORPUS / "open-r1__Qwen2.5-1.5B-Instruct__grpo__config_demo_code_ioi.yaml"
    done = cli("textrl-convert", "--trl", "grpo", str(recipe), "-o", "grpo.yaml")
    assert done.returncode == 1, done.stderr  # written; its own code rewards and system prompt need a hand
    assert f"processes: {DIVIDES}" in done.stderr
    text = (tmp_path / "grpo.yaml").read_text()
    assert f"# Processes: {DIVIDES}" in text and "reward_weights:\n- 0.1\n" in text
    assert "'ioi_code' is neither" in done.stderr and "Its weight, 1.0, is set aside from reward_weights" in text


def test_train_refuses_a_seven_gpu_recipe_on_one_process_and_says_how_to_launch_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "recipe.yaml", SEVEN_GPU_RECIPE)
    one = cli("textrl-train", "--trl", "grpo", "--config", "recipe.yaml", "--dry-run")
    assert one.returncode == 2
    assert ("recipe.yaml:8: num_generations: the generation batch (per_device_train_batch_size × "
            "gradient_accumulation_steps = 16 × 4 = 64 completions on one process) is not divisible by "
            "num_generations=14") in one.stderr  # fmt: skip
    assert f"This recipe was written for several processes: {DIVIDES}. Launch it so: accelerate launch " in one.stderr
    assert "--num_processes 7 -m textrl.cli train --trl grpo --config recipe.yaml." in one.stderr
    seven = cli("textrl-train", "--trl", "grpo", "--config", "recipe.yaml", "--dry-run", env={"WORLD_SIZE": "7"})
    assert seven.returncode == 0, seven.stderr[-3000:]
    assert "dry run: the run would start" in seven.stdout


def test_a_textrl_config_given_as_a_recipe_is_named_as_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO)
    said = "grpo.yaml:1: --trl: this is a TextRL config (algo: grpo, model: {name: ...}, dataset: {path: ...}, "
    convert = cli("textrl-convert", "--trl", "grpo", "grpo.yaml", "-o", "converted.yaml")
    assert convert.returncode == 2 and said in convert.stderr and "model.name: is required" not in convert.stderr
    assert "not a recipe for TRL's CLI" in convert.stderr
    assert "there is nothing to convert. Fix: run it as it is: textrl-train --config grpo.yaml." in convert.stderr
    assert not (tmp_path / "converted.yaml").exists()
    train = cli("textrl-train", "--trl", "grpo", "--config", "grpo.yaml", "--dry-run")
    assert train.returncode == 2 and said in train.stderr and "model_name_or_path: is missing" not in train.stderr
    assert "Fix: run it without --trl: textrl-train --config grpo.yaml." in train.stderr
    plain = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert plain.returncode == 0, plain.stderr[-3000:]
