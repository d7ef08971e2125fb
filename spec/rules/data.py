"""Rules about the data and reward sections: composed reward weights, held-out shares, mixtures, eval sets."""

from collections.abc import Mapping
from typing import Any

from ..model import rule


@rule(
    "reward",
    description="reward.weights has one weight per reward in reward.compose.",
)
def composed_reward_weights(cfg: Mapping[str, Any]) -> str | None:
    reward = cfg.get("reward")
    weights, rewards = getattr(reward, "weights", None), getattr(reward, "compose", None)
    if weights is not None and rewards is not None and len(weights) != len(rewards):
        return (
            f"reward.weights has {len(weights)} values for {len(rewards)} rewards in reward.compose. "
            "Fix: give one weight per reward, or drop weights to weigh all equally."
        )
    return None


@rule(
    "dataset",
    description="dataset.test_split_size is a share below 1 or a whole number of rows.",
)
def test_split_share(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("dataset"), "test_split_size", None)
    if isinstance(held_out, float) and held_out >= 1:
        return (
            f"dataset.test_split_size={held_out}: a share of the rows is below 1, and a number of rows is a whole "
            "number (as datasets' train_test_split reads it). Fix: e.g. 0.1, or 500."
        )
    return None


@rule(
    "dataset",
    "eval_dataset",
    description="dataset.test_split_size (rows held out for evaluation) and eval_dataset are not both given.",
)
def one_eval_set(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("dataset"), "test_split_size", None)
    if held_out is not None and cfg.get("eval_dataset") is not None:
        return (
            f"dataset.test_split_size={held_out} holds rows out as the evaluation set, and eval_dataset gives one "
            "too. Fix: keep one: drop test_split_size to train on every row, or drop eval_dataset."
        )
    return None


@rule(
    "dataset",
    "eval_dataset",
    description="A dataset mixture sizes its parts one way: fraction on every part (TRL's) or on none, and not "
    "beside weight.",
)
def mixture_shares(cfg: Mapping[str, Any]) -> str | None:
    for key in ("dataset", "eval_dataset"):
        parts = getattr(cfg.get(key), "mixture", None) or []
        with_fraction = [p for p in parts if p.fraction is not None]
        if with_fraction and len(with_fraction) != len(parts):
            return (
                f"{key}.mixture: fraction is set on {len(with_fraction)} of {len(parts)} parts; TRL's shares are "
                "normalised across all of them. Fix: set fraction on every part, or on none."
            )
        if with_fraction and any(p.weight is not None for p in parts):
            return (
                f"{key}.mixture: fraction (TRL's share of the mixture) and weight (a share of each dataset's rows) "
                "are two ways of sizing a mixture. Fix: use one of them."
            )
    return None


@rule(
    "eval_dataset",
    description="eval_dataset has no test_split_size (only dataset: holds rows out, as the evaluation set).",
)
def eval_rows_not_held_out(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("eval_dataset"), "test_split_size", None)
    if held_out is not None:
        return (
            f"eval_dataset.test_split_size={held_out}: rows held out of the evaluation set would be used by "
            "nothing. Fix: drop it (test_split_size belongs to dataset:, where it makes the evaluation set)."
        )
    return None
