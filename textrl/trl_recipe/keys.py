"""The reward keys of a recipe, the keys TRL renamed or removed, and every other key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import spec
from ..errors import closest
from .recipe import Recipe
from .tables import (
    ACCELERATE_PROFILES,
    CANNOT_KEEP,
    DATA_KEYS,
    DROPPED,
    MODEL_KEYS,
    OPEN_R1_REWARDS,
    RENAMED,
    RENAMED_VALUES,
    TRL_REWARDS,
    WANDB_ENV,
)


def translate_reward(recipe: Recipe) -> None:
    funcs, model = recipe.take("reward_funcs"), recipe.take("reward_model_name_or_path")
    if isinstance(funcs, str):
        funcs = [funcs]
    refs, set_aside = [], []  # set_aside: the positions of rewards left for the user's hand
    for position, name in enumerate(funcs or []):
        if name in TRL_REWARDS:
            refs.append(TRL_REWARDS[name])
        elif isinstance(name, str) and "." in name.strip("."):
            module, _, attr = name.rpartition(".")
            refs.append(f"{module}:{attr}")
        elif name in OPEN_R1_REWARDS:
            refs.append(f"open_r1.rewards:{OPEN_R1_REWARDS[name]}")
            recipe.note("reward_funcs", f"{name}: open_r1.rewards:{OPEN_R1_REWARDS[name]} (open-r1's reward registry; "
                        "the open_r1 package must be importable)")  # fmt: skip
        else:
            set_aside.append(position)
            recipe.refuse(
                "reward_funcs",
                f"{name!r} is neither a reward of TRL's scripts ({', '.join(TRL_REWARDS)}) nor a dotted import path "
                f"(nor a plain function of open-r1's registry: {', '.join(OPEN_R1_REWARDS)}); recipe collections "
                "build some rewards from their own settings. Fix: write the function's import path, e.g. "
                f"my_module.my_reward.{_weight_of(recipe, funcs, position)}",
            )
    if set_aside:
        _weights_of_converted(recipe, funcs, set_aside)
    if model is not None and refs:
        recipe.refuse(
            "reward_model_name_or_path",
            "and reward_funcs are both given; TextRL takes reward functions or one reward model. Fix: keep one, "
            "or wrap the model's scores in a reward function.",
        )
    elif model is not None:
        local = recipe.local(str(model))
        recipe.put(("reward",), {"model": local if local is not None else model}, "reward_model_name_or_path")
        recipe.note("reward_model_name_or_path", "reward: {model: ...}")
    elif refs:
        recipe.put(("reward",), refs if len(refs) > 1 else refs[0], "reward_funcs")
        recipe.note("reward_funcs", f"reward: {', '.join(refs)}")
        if "get_soft_overlong_punishment" in (funcs or []):
            recipe.note(
                "reward_funcs", "get_soft_overlong_punishment with max_completion_len=1280, soft_punish_cache=256, "
                "the values TRL's script uses",
            )  # fmt: skip
    elif not funcs:
        recipe.refuse(
            "reward_funcs", f"is missing (nor is there a reward_model_name_or_path); trl {recipe.trainer} needs a "
            "reward. Fix: add reward_funcs: [my_module.my_reward].",
        )  # fmt: skip


def _weight_of(recipe: Recipe, funcs: list[Any], position: int) -> str:
    weights = recipe.left.get("reward_weights")
    if not isinstance(weights, list) or len(weights) != len(funcs):
        return ""
    return f" Its weight, {weights[position]}, is set aside from reward_weights: add it back beside the reward."


def _weights_of_converted(recipe: Recipe, funcs: list[Any], set_aside: list[int]) -> None:
    """reward_weights for the rewards converted, so that weights and rewards still pair up one to one (TRL refuses
    a count that differs); the weight of each reward left for the user's hand is named in its refusal."""
    weights = recipe.left.get("reward_weights")
    if not isinstance(weights, list) or len(weights) != len(funcs):
        return  # no weights, or a count that was wrong in the recipe already: the reward_weights rule names it
    kept = [w for i, w in enumerate(weights) if i not in set_aside]
    if kept:
        recipe.left["reward_weights"] = kept
        recipe.note("reward_weights", f"{kept}, the weights of the rewards converted")
    else:
        recipe.take("reward_weights")
        recipe.note("reward_weights", "set aside with the rewards it weighs (none converted)")


# --- keys TRL renamed or removed, and everything else --------------------------------------------------------------


def translate_renamed(recipe: Recipe, algo: spec.Algorithm) -> None:
    fields = spec.trl_field_names(algo.trl_config)
    for old, (new, why) in RENAMED.items():
        if old not in recipe.left:
            continue
        if new in recipe.left:
            recipe.refuse(old, f"and {new} are both given ({why}). Fix: keep {new}.")
            recipe.take(old)
            continue
        if new in fields:
            recipe.rename(old, new)
            recipe.note(old, f"{new} ({why})")
    for key, values in RENAMED_VALUES.items():
        old_value = recipe.left.get(key)
        if isinstance(old_value, str) and old_value in values:
            new_value, why = values[old_value]
            recipe.left[key] = new_value
            recipe.note(key, f"{new_value} ({old_value!r}: {why})")
    ratio = recipe.left.get("warmup_ratio")
    if ratio is None:
        recipe.take("warmup_ratio")  # null: transformers' default, no warm-up from it
    elif recipe.left.get("warmup_steps", 0):
        recipe.take("warmup_ratio")
        recipe.refuse("warmup_ratio", f"and warmup_steps={recipe.left['warmup_steps']} are both set. Fix: keep one.")
    elif not isinstance(ratio, int | float) or not 0 <= ratio < 1:
        recipe.take("warmup_ratio")
        recipe.refuse("warmup_ratio", f"got {ratio!r}; a ratio lies in [0, 1). Fix: e.g. 0.1.")
    else:
        recipe.rename("warmup_ratio", "warmup_steps")
        recipe.note("warmup_ratio", f"warmup_steps: {ratio} (transformers 5 reads a value below 1 as a ratio)")
    _rpo_alpha(recipe)
    for key in ("max_prompt_length", "max_completion_length"):
        if key in recipe.left and key not in fields:
            value = recipe.take(key)
            if algo.family is spec.Family.ONLINE:
                why = "TRL removed it in 0.28 and no longer truncates prompts; the dry run and the dataset check flag "
                why += "prompts longer than the model's context"
            else:
                why = "TRL removed it in 0.29; max_length bounds prompt plus completion"
            recipe.note(key, f"dropped ({value}): {why}")
    if recipe.left.get("gradient_checkpointing_use_reentrant") is not None:
        value = recipe.take("gradient_checkpointing_use_reentrant")
        kwargs = dict(recipe.left.get("gradient_checkpointing_kwargs") or {})
        kwargs.setdefault("use_reentrant", value)
        recipe.left["gradient_checkpointing_kwargs"] = kwargs
        recipe.note("gradient_checkpointing_use_reentrant", "gradient_checkpointing_kwargs.use_reentrant")


def _rpo_alpha(recipe: Recipe) -> None:
    alpha = recipe.take("rpo_alpha")
    if alpha is None:
        return
    if recipe.trainer != "dpo":
        recipe.refuse("rpo_alpha", "is a DPO option. Fix: drop it.")
        return
    losses = recipe.left.get("loss_type", ["sigmoid"])
    losses = [losses] if isinstance(losses, str) else list(losses)
    if "sft" in losses or recipe.left.get("loss_weights") is not None:
        recipe.refuse("rpo_alpha", "with an sft loss or loss_weights already set is ambiguous. Fix: keep loss_weights.")
        return
    recipe.left["loss_type"] = [*losses, "sft"]
    recipe.left["loss_weights"] = [1.0] * len(losses) + [alpha]
    recipe.note("rpo_alpha", f"loss_type {[*losses, 'sft']} with loss_weights {[1.0] * len(losses) + [alpha]} (RPO; "
                "TRL 0.29 made rpo_alpha a list of losses)")  # fmt: skip


def translate_rest(recipe: Recipe, algo: spec.Algorithm) -> None:
    fields = spec.trl_field_names(algo.trl_config)
    offered = {**spec.NOT_OFFERED, **algo.not_offered}
    others = _other_trainer_fields(algo)
    sections = {o.name for a in spec.ALGORITHMS for o in a.options if o.group == "Sections"}  # model, reward, ...
    for key in list(recipe.left):
        value = recipe.take(key)
        if key in offered:
            _not_offered(recipe, key, value, offered[key])
        elif key == "padding_free" and value and "padding_free_unavailable" in {r.name for r in algo.rules}:
            recipe.note(key, "dropped: TRL's DPO trainer turns it off in every release TextRL supports (standard "
                        "padding, with a warning), so trl dpo ran this recipe padded too")  # fmt: skip
        elif key in fields:
            recipe.put((key,), value, key)
        elif key in DROPPED and (key != "ignore_bias_buffers" or not value):
            recipe.note(key, f"dropped: {DROPPED[key]}")
        elif key in WANDB_ENV:
            recipe.put(("env", WANDB_ENV[key]), value, key)
            recipe.note(key, f"env: {WANDB_ENV[key]}, as the recipe collections' scripts set it")
        elif key == "accelerate_config":
            _accelerate(recipe, value)
        elif key == "tokenizer_name_or_path" and value in (None, recipe.model_name):
            recipe.note(key, "dropped: the model's own tokenizer, as TextRL loads it")
        elif key == "tokenizer_name_or_path":
            recipe.refuse(
                key, f"is {value!r}, not the model ({recipe.model_name}); TextRL loads the tokenizer saved with the "
                "model. Fix: save that tokenizer into the model folder, then drop the key.",
            )  # fmt: skip
        elif key in CANNOT_KEEP:
            recipe.refuse(key, f"{CANNOT_KEEP[key]}.")
        elif key in sections:
            recipe.refuse(
                key, "is a section of a TextRL config, not a key of TRL's CLI. Fix: run a TextRL config without --trl "
                "(textrl-train --config FILE).",
            )  # fmt: skip
        elif key in others:
            recipe.refuse(
                key, f"is a field of {', '.join(others[key])}, not of {algo.trl_config} (trl {recipe.trainer}). "
                "Fix: drop it, or run the recipe with the command it was written for.",
            )  # fmt: skip
        else:
            guess = closest(str(key), sorted(fields | set(MODEL_KEYS) | set(DATA_KEYS)))
            hint = f" Did you mean {guess!r}?" if guess else ""
            recipe.refuse(
                str(key), f"is not a field of {algo.trl_config}, ModelConfig or TRL's script arguments.{hint} If it "
                "belongs to a recipe collection's own script, drop it or map it by hand.", unknown=True,
            )  # fmt: skip


def _accelerate(recipe: Recipe, value: Any) -> None:
    profile = ACCELERATE_PROFILES.get(str(value))
    if profile is not None:
        recipe.put(("distributed",), dict(profile), "accelerate_config")
        recipe.note("accelerate_config", f"distributed: {profile}; textrl-train --write-accelerate-config writes "
                    "the launch config")  # fmt: skip
    elif value == "single_gpu" or value is None:
        recipe.note("accelerate_config", "dropped: one process is what textrl-train runs without a launcher")
    else:
        recipe.refuse(
            "accelerate_config", f"names {value!r}, not one of TRL's profiles ({', '.join(ACCELERATE_PROFILES)}, "
            "single_gpu). Fix: write distributed: {strategy: deepspeed, zero_stage: N} (or fsdp), or launch with "
            "accelerate launch --config_file FILE -m textrl.cli train --trl ... .",
        )  # fmt: skip


def _other_trainer_fields(algo: spec.Algorithm) -> dict[str, list[str]]:
    """Fields of the other TRL configs TextRL runs, for a recipe run with the wrong command."""
    mine = spec.trl_field_names(algo.trl_config)
    found: dict[str, list[str]] = {}
    for config in dict.fromkeys(a.trl_config for a in spec.ALGORITHMS):
        for name in spec.trl_field_names(config) - mine:
            found.setdefault(name, []).append(config)
    return found


def _not_offered(recipe: Recipe, key: str, value: Any, why: str) -> None:
    if value in (None, False, "", [], {}):
        recipe.note(key, "dropped: empty, as TRL's default")
        return
    if key == "model_init_kwargs" and isinstance(value, Mapping):
        places = {"torch_dtype": "torch_dtype", "dtype": "torch_dtype", "attn_implementation": "attn_implementation",
                  "revision": "revision", "trust_remote_code": "trust_remote_code"}  # fmt: skip
        for name, item in value.items():
            if name in places:
                recipe.put(("model", places[name]), item, key)
                recipe.note(key, f"{name}: model.{places[name]}")
            else:
                recipe.refuse(
                    key, f"{name} is not a model-loading setting TextRL offers ({', '.join(places)}). Fix: drop it "
                    "from model_init_kwargs.",
                )  # fmt: skip
        return
    fixes = {
        "deepspeed": "Fix: write distributed: {strategy: deepspeed, zero_stage: 2 or 3, offload: ...}; textrl-train "
        "--write-accelerate-config then writes the DeepSpeed config",
        "fsdp": "Fix: write distributed: {strategy: fsdp}",
        "fsdp_config": "Fix: write distributed: {strategy: fsdp}",
        "resume_from_checkpoint": "Fix: drop it and run textrl-train --resume",
    }
    recipe.refuse(key, f"{why}. {fixes.get(key, 'Fix: drop it.')}")
