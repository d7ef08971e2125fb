"""Rules about options that would not do what they say: TRL accepts them and then ignores them, or they need an
input the config does not give. An option TextRL offers takes effect, or is refused."""

from collections.abc import Mapping
from typing import Any

from ..model import rule


@rule(
    "padding_free",
    description="padding_free stays false: every TRL release TextRL supports turns it off in the DPO trainer.",
)
def padding_free_unavailable(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("padding_free"):
        return (
            "padding_free=True: TRL 1.13 to 1.16 accept it for DPO and then switch it off (standard padding, with a "
            "warning), so the run would not be the padding-free run the config names. Fix: drop padding_free; the "
            "batch is padded either way."
        )
    return None


@rule(
    "max_tool_calling_iterations",
    description="max_tool_calling_iterations is set only for a run that has tools.",
)
def tool_iterations_need_tools(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("max_tool_calling_iterations") is not None:
        return (
            f"max_tool_calling_iterations={cfg['max_tool_calling_iterations']} bounds the loop in which the model "
            "calls tools, and this run gives TRL no tools, so it would change nothing. Fix: remove it."
        )
    return None


def _reward_count(reward: Any) -> int | None:
    """How many reward functions TRL gets for a reward section (None when it has none)."""
    if reward is None:
        return None
    if isinstance(reward, str) or hasattr(reward, "model"):
        return 1
    if isinstance(reward, list):
        return len(reward)
    return len(getattr(reward, "compose", ()) or ()) or None


@rule(
    "reward_weights",
    "reward",
    description="reward_weights has one weight per reward function of reward:, and is not combined with "
    "reward.weights.",
)
def reward_weights_count(cfg: Mapping[str, Any]) -> str | None:
    weights, reward = cfg.get("reward_weights"), cfg.get("reward")
    if weights is None or reward is None:
        return None
    if getattr(reward, "compose", None) is not None and getattr(reward, "weights", None) is not None:
        return (
            "reward_weights and reward.weights are both set; they weigh the same rewards twice. Fix: keep "
            "reward.weights (beside reward.compose) and drop reward_weights."
        )
    count = _reward_count(reward)
    if count is not None and len(weights) != count:
        return (
            f"reward_weights has {len(weights)} values for {count} reward function(s) in reward:; TRL refuses the "
            "mismatch when the trainer is built. Fix: give one weight per reward."
        )
    return None
