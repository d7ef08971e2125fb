"""TRL-format recipes, the cases a conversion cannot settle from the recipe alone (issue 31): a recipe written for
several processes (where its generation batch divides), a TextRL config handed to --trl, and recipe values that a
TextRL rule would refuse (padding_free, reward_weights beside rewards left for a hand). No torch."""

from __future__ import annotations

from typing import Any

import pytest

from textrl import TextRLConfig
from textrl.errors import ConfigError
from textrl.trl_recipe import process_fit, translate, with_launch_hint

from .test_trl_recipes import _notes, _one

SEVEN_GPUS = {"model_name_or_path": "org/m", "dataset_name": "org/d", "reward_funcs": ["m.r"],
              "per_device_train_batch_size": 16, "gradient_accumulation_steps": 4, "num_generations": 14}  # fmt: skip
"""open-r1's GRPO numbers: 16 x 4 x 7 = 448 completions split into groups of 14 on 7 processes; 64 on one do not."""


def test_a_recipe_for_seven_processes_says_where_its_batch_divides() -> None:
    t = translate(SEVEN_GPUS, "grpo")
    fit = process_fit(t.config, SEVEN_GPUS)
    assert fit is not None and fit.counts() == [7, 14, 21, 28]  # three named, and one to say there are more
    assert fit.describe() == (
        "the generation batch divides num_generations=14 on 7, 14, 21, ... processes; on 1 process it does not"
    )
    assert TextRLConfig.model_validate(t.config, processes=7).num_generations == 14
    with pytest.raises(ConfigError, match=r"num_generations: the generation batch .* 16 × 4 × 2 processes = 128 "
                       r"completions over 2 processes\) is not divisible by num_generations=14"):  # fmt: skip
        TextRLConfig.model_validate(t.config, processes=2)  # a run on the wrong count stays refused


def test_a_recipe_whose_batch_divides_on_one_process_needs_no_count() -> None:
    t = translate({**SEVEN_GPUS, "num_generations": 16}, "grpo")
    fit = process_fit(t.config)
    assert fit is not None and fit.fails_on(1) == [] and fit.counts()[0] == 1
    assert "on 1 process it does not" not in fit.describe()


def test_the_refusal_on_one_process_adds_how_to_launch_the_recipe() -> None:
    t = translate(SEVEN_GPUS, "grpo")
    fit = process_fit(t.config, SEVEN_GPUS)
    with pytest.raises(ConfigError) as caught:
        TextRLConfig.model_validate(t.config, processes=1)
    hinted = with_launch_hint(caught.value, fit, 1, "launch with accelerate launch --num_processes {n}")
    (problem,) = hinted.problems
    assert problem.message.startswith(caught.value.problems[0].message)  # today's message, then the hint
    assert problem.message.endswith(
        "This recipe was written for several processes: the generation batch divides num_generations=14 on 7, 14, "
        "21, ... processes; on 1 process it does not. launch with accelerate launch --num_processes 7."
    )
    never = translate({**SEVEN_GPUS, "generation_batch_size": 64}, "grpo")  # fixed batch: no count helps
    never_fit = process_fit(never.config)
    assert never_fit is not None and never_fit.counts() == []
    with pytest.raises(ConfigError) as plain:
        TextRLConfig.model_validate(never.config, processes=1)
    assert with_launch_hint(plain.value, never_fit, 1, "{n}") is plain.value


def test_the_process_count_a_recipe_names_is_checked() -> None:
    recipe = {"model_name_or_path": "m", "dataset_name": "d", "reward_funcs": ["m.r"], "accelerate_config": "zero2"}
    fit = process_fit(translate(recipe, "rloo").config, recipe)
    assert fit is not None and fit.own is not None and fit.own[0] == 8  # TRL's profiles launch 8 processes
    assert fit.describe().endswith("accelerate_config: zero2 (TRL's profile) launches 8 processes, on which it does")
    odd = {**recipe, "num_generations": 3}  # 8 × 1 × 8 = 64 completions: not in groups of 3
    odd_fit = process_fit(translate(odd, "rloo").config, odd)
    assert odd_fit is not None and odd_fit.counts()[:3] == [3, 6, 9]
    assert odd_fit.describe().endswith("launches 8 processes, on which it does not")


def test_values_the_rules_cannot_count_with_are_left_to_validation() -> None:
    t = translate({**SEVEN_GPUS, "num_generations": "fourteen"}, "grpo")
    assert process_fit(t.config) is None
    with pytest.raises(ConfigError, match="num_generations"):
        TextRLConfig.model_validate(t.config)


# --- a TextRL config given as a recipe (issue 31) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "marks"),
    [
        (
            {
                "algo": "grpo",
                "output_dir": "o",
                "model": {"name": "textrl:tiny"},
                "dataset": {"path": "p.jsonl"},
                "reward": "m:f",
            },
            "algo: grpo, model: {name: ...}, dataset: {path: ...}, reward: m:f",
        ),
        (
            {"model": {"name": "org/m"}, "dataset": {"hub": "org/d"}, "reward": ["m:f", "m:g"]},
            "model: {name: ...}, dataset: {hub: ...}, reward: [...]",
        ),
        ({"algo": "dpo", "beta": 0.1}, "algo: dpo"),
        ({"model": {"name": "org/m"}, "reward": {"compose": ["m:f"]}}, "model: {name: ...}, reward: {compose: ...}"),
    ],
)
def test_a_textrl_config_is_not_read_as_a_recipe(data: dict[str, Any], marks: str) -> None:
    with pytest.raises(ConfigError, match=r"--trl: this is a TextRL config \((.*)\), not a recipe for TRL's CLI") as e:
        translate(data, "grpo")
    assert f"({marks})" in str(e.value) and "Fix: run it without --trl: textrl-train --config FILE" in str(e.value)


def test_a_recipe_with_textrl_keys_is_still_a_recipe() -> None:
    t = _one({"algo": "ipo", "reward": "m:f"})  # a recipe's own keys: read key by key, each refused or kept
    assert t.config["algo"] == "ipo" and [p.field for p in t.problems] == ["reward"]
    assert "a section of a TextRL config, not a key of TRL's CLI" in t.problems[0].message


# --- keys whose meaning TRL changes under the recipe ----------------------------------------------------------------


def test_weights_of_rewards_left_for_a_hand_are_set_aside_with_them() -> None:
    recipe = {"model_name_or_path": "m", "dataset_name": "d", "reward_funcs": ["ioi_code", "format", "my.r"],
              "reward_weights": [1.0, 0.1, 0.5]}  # fmt: skip
    t = translate(recipe, "grpo", lines={("reward_weights",): 9})
    (problem,) = t.problems
    assert problem.field == "reward_funcs" and "Its weight, 1.0, is set aside from reward_weights" in problem.message
    assert t.config["reward_weights"] == [0.1, 0.5] and "line 9: reward_weights: [0.1, 0.5]" in _notes(t)
    assert TextRLConfig.model_validate(t.config).reward_weights == [0.1, 0.5]  # one weight per reward converted
    every = translate({**recipe, "reward_funcs": ["accuracy", "format", "my.r"]}, "grpo")
    assert every.problems == [] and every.config["reward_weights"] == [1.0, 0.1, 0.5]
    none = translate({**recipe, "reward_funcs": ["ioi_code"], "reward_weights": [1.0]}, "grpo")
    assert "reward_weights" not in none.config and "set aside with the rewards it weighs" in _notes(none)


def test_padding_free_which_trl_turns_off_for_dpo_is_dropped_with_a_note() -> None:
    t = _one({"padding_free": True})
    assert t.problems == [] and "padding_free" not in t.config
    assert "padding_free: dropped: TRL's DPO trainer turns it off" in _notes(t)
    assert TextRLConfig.model_validate(t.config).padding_free is False
    off = _one({"padding_free": False})
    assert off.config["padding_free"] is False and "padding_free" not in _notes(off)
