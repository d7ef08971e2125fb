"""Recipes written for TRL's own CLI (`trl dpo --config recipe.yaml`), as TextRL configs.

A TRL recipe is one flat mapping: the fields of the trainer's config (DPOConfig, GRPOConfig, ...), of ModelConfig
(`model_name_or_path`, `dtype`, `use_peft`, `lora_*`, `load_in_4bit`, ...), of ScriptArguments (`dataset_name`,
splits) and DatasetMixtureConfig (`datasets:`), the GRPO and RLOO scripts' `reward_funcs` and
`reward_model_name_or_path`, and an `env:` block. Recipe collections built on TRL add `dataset_mixture:` and keys
that TRL or transformers have since renamed or removed.

`translate` sorts every key: a TRL config field stays an option under its own name; the rest become TextRL's
sections (model, dataset, eval_dataset, reward, env), each translation with a note naming the recipe's line. A key
whose meaning cannot be kept is refused with what to do instead, never dropped in silence. A TextRL config given
as a recipe is named as one (`shape`); `process_fit` says on which process counts a recipe's batch divides, for
recipes written for several GPUs. Imports no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import spec
from ..errors import ConfigError, Problem
from .data import translate_data
from .keys import translate_renamed, translate_rest, translate_reward
from .model import translate_model
from .processes import ProcessFit, process_fit, with_launch_hint
from .recipe import Note, Recipe, Translation
from .shape import not_a_recipe, textrl_config_marks
from .tables import CANNOT_KEEP, DROPPED, RENAMED, RENAMED_VALUES, TRAINERS

__all__ = [
    "CANNOT_KEEP", "DROPPED", "RENAMED", "RENAMED_VALUES", "TRAINERS", "Note", "ProcessFit", "Translation",
    "not_a_recipe", "process_fit", "raise_problems", "textrl_config_marks", "translate", "with_launch_hint",
]  # fmt: skip


def translate(
    data: Mapping[str, Any],
    trainer: str,
    *,
    lines: Mapping[tuple[str | int, ...], int] | None = None,
    base_dir: Path | None = None,
    out_dir: Path | None = None,
) -> Translation:
    """A TRL recipe (parsed YAML) for `trl <trainer>` as TextRL config data.

    `lines` maps the recipe's keys to their line numbers (`yaml_io.key_lines`); `base_dir` is the recipe's folder,
    where local models and data are looked for; `out_dir` is the folder the TextRL config will be read from.
    """
    if trainer not in TRAINERS:
        raise ConfigError(
            [Problem("--trl", f"got {trainer!r}; allowed: {', '.join(TRAINERS)}. Fix: name the TRL command.")]
        )
    problem = not_a_recipe(data, None, trl=trainer, converting=False)
    if problem is not None:  # textrl-train --trl and textrl-convert say so first, naming the file
        raise ConfigError([problem])
    base = base_dir or Path.cwd()
    recipe = Recipe(data, trainer, lines or {}, base, out_dir or base)
    algo = _algorithm(recipe)
    recipe.put(("algo",), algo.name, "algo")
    _env(recipe)
    translate_model(recipe, algo)
    translate_data(recipe, algo)
    if algo.family is spec.Family.ONLINE:
        translate_reward(recipe)
    translate_renamed(recipe, algo)
    translate_rest(recipe, algo)
    if "output_dir" not in recipe.out.config:
        recipe.put(("output_dir",), "trainer_output", "output_dir")
        recipe.note("output_dir", "not set: trainer_output, transformers' default")
    recipe.out.notes.sort(key=lambda note: note.line or 0)
    return recipe.out


def _algorithm(recipe: Recipe) -> spec.Algorithm:
    algo = spec.BY_NAME[TRAINERS[recipe.trainer]]
    written = recipe.take("algo")
    if written is None:
        return algo
    found = spec.find_algorithm(str(written))
    trl_trainer = algo.trl_trainer
    if not isinstance(found, spec.Algorithm) or found.trl_trainer != trl_trainer:
        recipe.refuse(
            "algo",
            f"says {written!r}, which is not an algorithm of TRL's {trl_trainer} (trl {recipe.trainer}). Fix: drop "
            f"algo, or run the recipe with the --trl command it was written for.",
        )
        return algo
    return found


def _env(recipe: Recipe) -> None:
    env = recipe.take("env")
    if env is None:
        return
    if not isinstance(env, Mapping):
        recipe.refuse("env", f"got {type(env).__name__}; TRL's CLI takes a mapping. Fix: write NAME: value lines.")
        return
    recipe.put(("env",), dict(env), "env")
    recipe.note("env", f"{', '.join(map(str, env))} set before the run starts, as TRL's CLI does")


def raise_problems(translation: Translation, path: Path | str) -> None:
    """A ConfigError listing every key of the recipe that needs a hand, each with its line."""
    if translation.problems:
        raise ConfigError(translation.located(path))
