"""The demo's reward, referenced from quickstart.yaml as `quickstart_rewards:lowercase_share`."""


def lowercase_share(prompts: list[str], completions: list[str], **_: object) -> list[float]:
    """Fraction of completion characters that are lowercase letters."""
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
