"""Reward functions referenced from the YAML files in this folder as `my_rewards:<name>`."""


def length_reward(prompts: list[str], completions: list[str], **_: object) -> list[float]:
    """Prefers completions of about 64 characters."""
    return [-abs(len(c) - 64) / 64 for c in completions]
