"""Token lengths of a dataset's rows against the model's context and the config's max_length, before training.

TRL does not look: a 100,000-character prompt on a 512-position model makes one GRPO step run for minutes, a DPO
or KTO prompt that fills max_length leaves nothing of the completion (TRL keeps the start), and RewardTrainer
drops rows longer than max_length without a word. A token is at least one byte of UTF-8 text, so only rows whose
size comes near the limit are tokenized: a dataset of short rows costs nothing to check. Chat rows are counted
through the chat template; the dry run, which imports no torch, renders it with textrl.data.chat_template (jinja2, as
transformers does) and counts with the `tokenizers` library from the model's folder.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DataError
from ..spec import Family
from ..validation.view import online, preference, reward_model, supervised
from .checks import column_values

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

CHAT_MARGIN = 256
"""Tokens a chat template may add around a row's contents (role markers, a default system prompt)."""


class LengthWarning(UserWarning):
    """Rows that TRL will truncate or drop, or that leave no room to generate."""


@dataclass(frozen=True)
class Limits:
    """What a row's tokens must fit: the model's positions, and the config's max_length / max_completion_length."""

    context: int | None
    max_length: int | None = None
    max_completion_length: int | None = None


Counter = Callable[[Sequence[Any], bool], list[int]]
"""Token counts of texts or chat messages; the flag says whether they are prompts (chat: with the generation
prompt) or completions (their contents)."""


def size_bound(value: Any) -> int:
    """An upper bound on the tokens of a text (its UTF-8 bytes) or chat messages (their contents plus a margin)."""
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, list):
        return sum(len(str(m.get("content", "")).encode("utf-8")) for m in value if isinstance(m, dict)) + CHAT_MARGIN
    return 0


def _counted(values: Sequence[Any], indices: list[int], count: Counter, prompt: bool) -> dict[int, int]:
    """Token counts of the rows at `indices`; each distinct value is counted once (pairs often share a prompt)."""
    if not indices:
        return {}
    distinct: dict[str, Any] = {}
    keys = []
    for i in indices:
        value = values[i]
        key = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        distinct.setdefault(key, value)
        keys.append(key)
    counts = dict(zip(distinct, count(list(distinct.values()), prompt), strict=True))
    return {i: counts[key] for i, key in zip(indices, keys, strict=True)}


def _rows(rows: list[int]) -> str:
    shown = ", ".join(map(str, rows[:5])) + (", ..." if len(rows) > 5 else "")
    return f"row{'s' if len(rows) > 1 else ''} {shown}"


def check_lengths(
    dataset: Any, family: Family | str, limits: Limits, count: Counter, *, name: str = "dataset"
) -> list[str]:
    """Raise DataError for rows that cannot train; return a note for each kind of row TRL will cut or drop.

    `family` is the algorithm's `spec.Family` (or its value, e.g. "online").
    """
    columns = list(dataset.column_names)
    prompts = column_values(dataset, "prompt") if "prompt" in columns else [""] * len(dataset)
    notes: list[str] = []
    family = Family(family)
    if family is Family.ONLINE:
        if limits.context is None:
            return notes
        budget = limits.context - (limits.max_completion_length or 0)
        near = [i for i, p in enumerate(prompts) if size_bound(p) + 4 > budget]
        tokens = _counted(prompts, near, count, True)
        over = [i for i in near if tokens[i] > limits.context]
        if over:
            worst = max(over, key=lambda i: tokens[i])
            raise DataError(
                f"{name}: column 'prompt', {_rows(over)}: longer than the model's context ({tokens[worst]} tokens in "
                f"row {worst}; the model has {limits.context} positions). Generation past the context is slow and "
                "meaningless. Fix: drop or shorten those rows (dataset.filter(...)).",
                column="prompt",
                row=worst,
            )
        tight = [i for i in near if tokens[i] > budget]
        if tight:
            notes.append(
                f"{name}: {len(tight)} of {len(prompts)} prompts ({_rows(tight)}) leave fewer than "
                f"max_completion_length={limits.max_completion_length} positions of the model's {limits.context}; "
                "their completions run past the context. Fix: shorten them or lower max_completion_length."
            )
        return notes
    known = [(v, w) for v, w in ((limits.max_length, "max_length"), (limits.context, "the model's context")) if v]
    if not known:
        return notes
    limit, which = min(known)
    completions = {c: column_values(dataset, c) for c in ("chosen", "rejected", "completion") if c in columns}
    sizes = [
        size_bound(prompts[i]) + max((size_bound(values[i]) for values in completions.values()), default=0) + 4
        for i in range(len(prompts))
    ]
    near = [i for i, size in enumerate(sizes) if size > limit]
    prompt_tokens = _counted(prompts, near, count, True) if "prompt" in columns else dict.fromkeys(near, 0)
    full = dict.fromkeys(near, 0)
    for values in completions.values():
        for i, n in _counted(values, near, count, False).items():
            full[i] = max(full[i], prompt_tokens[i] + n)
    if family is Family.REWARD_MODEL:
        dropped = [i for i in near if full[i] > limit]
        if len(dropped) == len(dataset):
            raise DataError(
                f"{name}: every row is longer than {which}={limit} tokens, and TRL's RewardTrainer drops such rows. "
                "Fix: raise max_length or shorten the rows.",
            )
        if dropped:
            notes.append(
                f"{name}: {len(dropped)} of {len(dataset)} rows ({_rows(dropped)}) are longer than {which}={limit} "
                "tokens; TRL's RewardTrainer drops them. Fix: raise max_length, or filter them out yourself."
            )
        return notes
    filled = [i for i in near if prompt_tokens[i] >= limit]
    if filled:
        raise DataError(
            f"{name}: column 'prompt', {_rows(filled)}: the prompt alone is {prompt_tokens[filled[0]]} tokens, which "
            f"fills {which}={limit}; TRL keeps the start of each row, so nothing of the completion would be left to "
            "learn from. Fix: raise max_length, or drop or shorten those rows.",
            column="prompt",
            row=filled[0],
        )
    cut = [i for i in near if full[i] > limit]
    if cut:
        notes.append(
            f"{name}: {len(cut)} of {len(dataset)} rows ({_rows(cut)}) are longer than {which}={limit} tokens; TRL "
            "cuts the end of their completions. Fix: raise max_length if the ends matter."
        )
    return notes


def warn(notes: list[str]) -> None:
    for note in notes:
        warnings.warn(note, LengthWarning, stacklevel=3)


# --- counting with a loaded tokenizer (the trainers) -------------------------------------------------------------


def tokenizer_counter(tokenizer: Any) -> Counter:
    """Counts with a transformers tokenizer; chat prompts go through its chat template with the generation prompt."""

    def apply(messages: Any) -> str:
        return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))

    def count(values: Sequence[Any], prompt: bool) -> list[int]:
        texts = [_render(apply, v, prompt, strict=False) for v in values]
        return [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]

    return count


def _render(apply: Callable[[Any], str] | None, value: Any, prompt: bool, *, strict: bool) -> str:
    """A row's text: chat prompts through the template (with the generation prompt), other chat values as their
    contents. `strict`: a template that fails on the messages raises (the dry run, where the error is the news);
    otherwise the contents are counted and TRL reports the failure when it applies the template itself."""
    if isinstance(value, str):
        return value
    if prompt and apply is not None:
        if strict:
            return apply(value)
        try:
            return apply(value)
        except Exception:  # a template that refuses these messages: fall back to the contents
            pass
    return "\n".join(str(m.get("content", "")) for m in value)


def context_of(model: Any) -> int | None:
    """The number of positions a model was built for (max_position_embeddings and its other names)."""
    config = getattr(model, "config", None)
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


# --- counting from a model folder without torch (the dry run) -----------------------------------------------------


def folder_counter(folder: Path, template: str | None = None) -> tuple[Counter, int | None] | None:
    """A counter from `folder/tokenizer.json` (the `tokenizers` library, no torch) and the model's context from
    `config.json`; None when the folder has no fast tokenizer. Chat prompts go through the folder's chat template
    (or `template`, model.chat_template's text),
    rendered as transformers renders it (textrl.data.chat_template); a template that does not compile raises ConfigError
    at once, one that refuses a row's messages raises DataError when that row is counted."""
    if not (folder / "tokenizer.json").is_file():
        return None
    from tokenizers import Tokenizer

    from .chat_template import chat_renderer

    renderer = chat_renderer(folder, template)  # a template that does not compile: ConfigError naming the file
    apply = None if renderer is None else partial(renderer, add_generation_prompt=True)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))

    def count(values: Sequence[Any], prompt: bool) -> list[int]:
        texts = [_render(apply, v, prompt, strict=True) for v in values]
        return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]

    context = None
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        context = next(
            (config[k] for k in ("max_position_embeddings", "n_positions", "max_sequence_length") if k in config),
            None,
        )
    except (OSError, ValueError):
        pass
    return count, context if isinstance(context, int) else None


def limits_for(config: TextRLConfig, context: int | None) -> Limits:
    """The limits a TextRL config sets (max_length for pairwise, binary, reward models and SFT; max_completion_length
    for online algorithms) beside the model's context."""
    rollout = online(config)
    if rollout is not None:
        return Limits(context=context, max_length=None, max_completion_length=rollout.max_completion_length)
    offline = preference(config) or reward_model(config) or supervised(config)
    return Limits(context=context, max_length=offline.max_length if offline else None, max_completion_length=None)
