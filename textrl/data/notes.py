"""The checks of a dataset's rows that need token counts, for the algorithm's family: one entry point for the
trainers and the dry run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..validation.view import supervised
from .lengths import Counter, Limits, check_lengths
from .supervised import supervised_notes

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig


def row_notes(config: TextRLConfig, dataset: Any, limits: Limits, count: Counter, *, name: str) -> list[str]:
    """The checks of a dataset's rows that need token counts, for the algorithm's family (the trainers and the dry
    run both call this): lengths against the limits; for SFT also what the loss trains on (textrl.data.supervised).
    Raises DataError for rows that cannot train; returns a note for each kind of row TRL will cut or drop."""
    sft = supervised(config)
    if sft is not None:
        return supervised_notes(dataset, sft, limits, count, name=name)
    return check_lengths(dataset, config.algorithm().family, limits, count, name=name)
