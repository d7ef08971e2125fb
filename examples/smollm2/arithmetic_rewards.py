"""Rewards for "What is a plus b? Answer with only the number.", each taking TRL's completions and the `answer`
column (TRL passes dataset columns to rewards by keyword). Completions arrive as chat messages."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"-?\d+")


def _text(completion: str | list[dict[str, str]]) -> str:
    return completion if isinstance(completion, str) else completion[-1]["content"]


def correct(completions: list, answer: list[str], **_: object) -> list[float]:
    """1.0 when the reply's last number is the sum (so "3 + 4 = 7" counts), else 0.0."""
    scores = []
    for completion, expected in zip(completions, answer, strict=True):
        numbers = _NUMBER.findall(_text(completion))
        scores.append(1.0 if numbers and numbers[-1] == expected else 0.0)
    return scores


def only_number(completions: list, **_: object) -> list[float]:
    """1.0 when the reply is a number and nothing else (a final period allowed), else 0.0."""
    return [1.0 if re.fullmatch(r"\s*-?\d+\.?\s*", _text(c)) else 0.0 for c in completions]


def brevity(completions: list, **_: object) -> list[float]:
    """Shaping toward the format: 1.0 for one word, falling linearly to 0.0 at twelve words."""
    return [max(0.0, 1.0 - (len(_text(c).split()) - 1) / 11) for c in completions]
