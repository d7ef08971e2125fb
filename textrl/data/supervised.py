"""Checks of supervised (SFT) data against what the loss will train on, before the model loads.

TRL's SFTTrainer decides late and quietly what the loss sees: `completion_only_loss=True` on rows without a
completion trains on every token; `assistant_only_loss=True` on plain-text rows fails after the model has loaded,
and with a chat template that marks no assistant turn TRL either patches the template (a few known models) or
fails at init; a row whose prompt fills max_length has no trained token left and is dropped without a word. Here
each of those is found from the rows and a token counter (the loaded tokenizer, or the model folder's tokenizer.json
in the dry run), and the share of tokens the loss trains on is measured on a sample of rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import DataError
from ..spec.formats import SUPERVISED
from .checks import column_values, layout_of, text_kind
from .lengths import Counter, Limits, size_bound

SAMPLE = 256
"""Rows whose tokens are counted to estimate the trained share (the first ones; all of a smaller dataset)."""
TINY_SHARE = 0.02
"""Below this share of trained tokens a run is warned: the loss then rests on a few tokens per row."""


def _layout(columns: Sequence[str], text_field: str) -> str:
    """The layout rows are read in (the format's own order, `checks.layout_of`): 'prompt-completion', 'messages' or
    the text column's name. The rows were checked against the format first, so one layout matches."""
    found = layout_of(SUPERVISED, columns, text_field) or (text_field,)
    return "prompt-completion" if len(found) == 2 else found[0]


def check_supervised(
    dataset: Any,
    *,
    completion_only_loss: bool | None,
    assistant_only_loss: bool,
    text_field: str,
    name: str,
) -> None:
    """Refuse what the loss options cannot do with these rows (no tokens needed): completion_only_loss without a
    completion column, assistant_only_loss without chat messages."""
    columns = list(dataset.column_names)
    layout = _layout(columns, text_field)
    if completion_only_loss and layout != "prompt-completion":
        raise DataError(
            f"{name}: completion_only_loss=True, but its rows have no completion (they are {layout} rows), so TRL "
            "would train on every token without a word. Fix: give the rows prompt and completion columns, or drop "
            "completion_only_loss (for chat messages, assistant_only_loss trains on the assistant's turns).",
            column=layout,
        )
    if assistant_only_loss:
        first = next(iter(column_values(dataset, "completion" if layout == "prompt-completion" else layout)), None)
        if layout == text_field or text_kind(first) != "conversational":
            raise DataError(
                f"{name}: assistant_only_loss=True, but its rows are plain text, with no assistant turns to train "
                "on; TRL refuses it only after the model has loaded. Fix: write the rows as chat messages (a "
                "messages column, or prompt and completion as messages), or use completion_only_loss with prompt "
                "and completion rows.",
                column=layout,
            )


def has_generation_markers(template: str | None) -> bool:
    """Whether a chat template marks the assistant's tokens with {% generation %} (transformers' assistant mask), as
    TRL's `chat_template_utils.has_generation_markers` decides it (trim variants `{%- generation -%}` included)."""
    return template is not None and re.search(r"\{%-?\s*generation\s*-?%\}", template) is not None


def trl_can_patch(template: str | None) -> bool:
    """Whether the installed TRL ships a training version (with the markers) of this chat template: the templates
    in trl/chat_templates/ that have a `<name>_training.jinja` beside them. Reads the files, imports no TRL."""
    import importlib.util
    from pathlib import Path

    found = importlib.util.find_spec("trl")
    if template is None or found is None or not found.submodule_search_locations:
        return False
    folder = Path(next(iter(found.submodule_search_locations))) / "chat_templates"
    for trained in folder.glob("*_training.jinja"):
        plain = trained.with_name(trained.name.replace("_training.jinja", ".jinja"))
        if plain.is_file() and plain.read_text(encoding="utf-8") == template:
            return True
    return False


def check_assistant_template(template: str | None, model: str) -> None:
    """assistant_only_loss needs `{% generation %}` markers: refuse a template without them that TRL cannot patch
    (TRL swaps in its training version of the templates it knows)."""
    if has_generation_markers(template) or trl_can_patch(template):
        return
    raise DataError(
        f"assistant_only_loss=True, but the chat template of {model} does not mark the assistant's turns with "
        "{% generation %} ... {% endgeneration %}, and TRL has no training version of it: TRL would fail at init, "
        "after the model has loaded. Fix: chat_template_path: a .jinja copy of the template with the assistant's "
        "content and end-of-turn token wrapped in {% generation %} ... {% endgeneration %}, or prompt and "
        "completion rows (completion_only_loss, the default for them, trains on the completion alone).",
        column="assistant_only_loss",
    )


def trained_share(
    dataset: Any,
    count: Counter,
    *,
    completion_only_loss: bool | None,
    assistant_only_loss: bool,
    text_field: str,
    limits: Limits,
    name: str,
) -> tuple[float, str | None]:
    """The share of tokens the loss trains on, over the first SAMPLE rows (estimated from token counts: chat
    messages as their contents), and a warning when it is tiny. No trained token at all is a DataError."""
    columns = list(dataset.column_names)
    layout = _layout(columns, text_field)
    rows = min(len(dataset), SAMPLE)
    if layout == text_field or (layout == "messages" and not assistant_only_loss):
        return 1.0, None  # every token (but padding) is trained on
    limit = min((v for v in (limits.max_length, limits.context) if v), default=None)
    if layout == "messages":
        chats = column_values(dataset, "messages")[:rows]
        total = count(chats, True)
        answers = [[m for m in chat if m.get("role") == "assistant"] for chat in chats]
        trained = count(answers, False)
    else:
        prompts = column_values(dataset, "prompt")[:rows]
        completions = column_values(dataset, "completion")[:rows]
        head = count(prompts, True)
        tail = count(completions, False)
        total = [p + c for p, c in zip(head, tail, strict=True)]
        only = completion_only_loss is not False
        trained = list(tail) if only else list(total)
        if limit and only:  # TRL keeps the start: a prompt that fills max_length leaves no completion token
            trained = [max(0, min(c, limit - p)) for p, c in zip(head, tail, strict=True)]
            total = [min(t, limit) for t in total]
    all_tokens = sum(total)
    share = sum(trained) / all_tokens if all_tokens else 0.0
    empty = [i for i, n in enumerate(trained) if n == 0]
    what = "assistant turns" if layout == "messages" else "completions"
    if len(empty) == rows:
        raise DataError(
            f"{name}: the loss trains on no token of the first {rows} rows: their {what} are empty or pushed past "
            f"max_length={limits.max_length} by the prompt, and TRL drops such rows (all of them, here). Fix: raise "
            "max_length, shorten the prompts, or turn off completion_only_loss / assistant_only_loss.",
            column="completion" if layout != "messages" else "messages",
        )
    notes = []
    if empty:
        notes.append(f"{len(empty)} of the first {rows} rows have no trained token (TRL drops them)")
    if share < TINY_SHARE:
        notes.append(
            f"the loss trains on {share:.1%} of the tokens (the {what}); the rest is context. Fix, if that is not "
            "meant: shorter prompts, or train on whole rows (completion_only_loss: false)"
        )
    return share, f"{name}: {'; '.join(notes)}." if notes else None


def _row_tokens(dataset: Any, count: Counter, text_field: str, near: list[int]) -> dict[int, int]:
    """Token counts of whole rows (prompt and completion together; chat through the template) at `near`."""
    columns = list(dataset.column_names)
    layout = _layout(columns, text_field)
    if layout == "prompt-completion":
        prompts, completions = column_values(dataset, "prompt"), column_values(dataset, "completion")
        head = count([prompts[i] for i in near], True)
        tail = count([completions[i] for i in near], False)
        return {i: p + c for i, p, c in zip(near, head, tail, strict=True)}
    values = column_values(dataset, layout)
    return dict(zip(near, count([values[i] for i in near], True), strict=True))


def _size_of(row: dict[str, Any], layout: str) -> int:
    if layout == "prompt-completion":
        return size_bound(row["prompt"]) + size_bound(row["completion"]) + 4
    return size_bound(row[layout]) + 4


def supervised_notes(dataset: Any, sft: Any, limits: Limits, count: Counter, *, name: str) -> list[str]:
    """Every check of supervised rows, for the trainer and the dry run: what the loss options need of the rows
    (DataError), rows longer than max_length (a note: the share cut, for this split) and the trained share."""
    text_field = sft.dataset_text_field
    check_supervised(
        dataset,
        completion_only_loss=sft.completion_only_loss,
        assistant_only_loss=sft.assistant_only_loss,
        text_field=text_field,
        name=name,
    )
    notes: list[str] = []
    limit = min((v for v in (limits.max_length, limits.context) if v), default=None)
    if limit:
        layout = _layout(list(dataset.column_names), text_field)
        rows = dataset if hasattr(dataset, "features") else dataset.rows
        near = [i for i in range(len(dataset)) if _size_of(rows[i], layout) > limit]
        tokens = _row_tokens(dataset, count, text_field, near) if near else {}
        cut = [i for i in near if tokens[i] > limit]
        if cut:
            which = "max_length" if limit == limits.max_length else "the model's context"
            fate = {
                "bfd_split": "TRL splits them over packed sequences (nothing is lost)",
                "wrapped": "TRL wraps them across packed sequences (nothing is lost)",
            }.get(sft.packing_strategy if sft.packing else "", f"TRL cuts them ({sft.truncation_mode})")
            shown = ", ".join(map(str, cut[:5])) + (", ..." if len(cut) > 5 else "")
            notes.append(
                f"{name}: {len(cut)} of {len(dataset)} rows ({len(cut) / len(dataset):.1%}; rows {shown}) are longer "
                f"than {which}={limit} tokens; {fate}. Fix, if their ends matter: raise max_length."
            )
    _, note = trained_share(
        dataset,
        count,
        completion_only_loss=sft.completion_only_loss,
        assistant_only_loss=sft.assistant_only_loss,
        text_field=text_field,
        limits=limits,
        name=name,
    )
    return [*notes, *([note] if note else [])]
