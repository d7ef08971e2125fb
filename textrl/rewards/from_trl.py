"""Rewards named by TRL's GRPO and RLOO scripts that are built from settings, as functions a TextRL config names.

`reward_funcs: [get_soft_overlong_punishment]` in a TRL recipe means TRL's soft overlong punishment with the values
TRL's script fixes (max_completion_len=1280, soft_punish_cache=256): `textrl.rewards.from_trl:soft_overlong_punishment`.
"""

from __future__ import annotations

from typing import Any


def soft_overlong_punishment(completion_ids: list[list[int]], **kwargs: Any) -> list[float]:
    """DAPO's soft overlong punishment, as TRL's GRPO script builds it: 0 up to 1024 tokens, then falling linearly
    to -1 at 1280."""
    from trl.rewards import get_soft_overlong_punishment

    reward: Any = get_soft_overlong_punishment(max_completion_len=1280, soft_punish_cache=256)
    return list(reward(completion_ids=completion_ids, **kwargs))
