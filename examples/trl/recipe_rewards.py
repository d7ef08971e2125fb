"""The reward of grpo_recipe.yml, named there as TRL's GRPO script names one: recipe_rewards.lowercase_share."""


def lowercase_share(completions: list[str], **_: object) -> list[float]:
    """Fraction of completion characters that are lowercase letters."""
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
