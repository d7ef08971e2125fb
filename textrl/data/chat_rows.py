"""Conversational rows need a chat template: checked before training, by the dry run (from the model folder's
files) and by the trainers (from the loaded tokenizer), with one message.

TRL renders a row written as messages through `tokenizer.apply_chat_template`; a tokenizer without a template (a
base model's) fails there, after the model has loaded, with transformers' message. Imports no torch.
"""

from __future__ import annotations

from typing import Any

from ..errors import DataError
from .checks import text_kind

TEXT_COLUMNS = ("prompt", "chosen", "rejected", "completion", "messages")
"""The columns TRL reads as text or as chat messages."""


def conversational_columns(dataset: Any) -> list[str]:
    """The text columns whose first row is a list of chat messages."""
    if dataset is None or len(dataset) == 0:
        return []
    first = dataset[0] if hasattr(dataset, "features") else dataset.rows[0]
    return [c for c in TEXT_COLUMNS if text_kind(first.get(c)) == "conversational"]


def check_chat_template(datasets: dict[str, Any], has_template: bool, model: str) -> None:
    """Refuse conversational rows for a model whose tokenizer has no chat template."""
    if has_template:
        return
    for name, data in datasets.items():
        columns = conversational_columns(data)
        if columns:
            raise DataError(
                f"{name}: its rows are chat messages ({', '.join(columns)} is a list of {{role, content}}), which "
                f"TRL renders with the tokenizer's chat template, and {model} has none (no chat_template.jinja, no "
                "chat_template in tokenizer_config.json). Fix: use a model that has one (an -Instruct checkpoint), "
                "give the tokenizer one (tokenizer.chat_template = ...; tokenizer.save_pretrained(folder)), or "
                "write the rows as plain text.",
                column=columns[0],
            )
