"""Options of supervised fine-tuning (TRL's SFTTrainer) that TextRL writes by hand: the data layout, what the loss
trains on, packing, and the loss. The rest of SFTConfig is mirrored from TRL's snapshot."""

from typing import Literal

from ..model import Option

SFT_MAX_LENGTH = Option(
    name="max_length", annotation=int | None, default=1024, trl_name="max_length", group="Data", ge=1,
    description="Maximum tokens of a row (of a packed sequence, with packing); longer rows are truncated as "
    "truncation_mode says (TRL's option, mirrored). None disables truncation (and packing needs a length).",
)  # fmt: skip
DATASET_TEXT_FIELD = Option(
    name="dataset_text_field", annotation=str, default="text", trl_name="dataset_text_field", group="Data",
    min_length=1, example="content",
    description="The column that holds a language-modelling row's text (rows with messages or with prompt and "
    "completion do not read it).",
)  # fmt: skip
PACKING = Option(
    name="packing", annotation=bool, default=False, trl_name="packing", group="Data",
    description="Pack several rows into each sequence of max_length tokens, so that no compute goes to padding. The "
    "bfd strategies keep rows apart by their position ids, which the attention kernels of transformers honour.",
)  # fmt: skip
PACKING_STRATEGY = Option(
    name="packing_strategy", annotation=Literal["bfd", "bfd_split", "wrapped"], default="bfd",
    trl_name="packing_strategy", group="Data",
    description="How rows are packed: bfd (best-fit decreasing: whole rows, a too-long row truncated), bfd_split "
    "(best-fit, a too-long row split over sequences) or wrapped (rows concatenated and cut at max_length, "
    "attention crossing row boundaries).",
    hint="ffd is TRL's old name for bfd, renamed in TRL 0.20",
)  # fmt: skip
PADDING_FREE_SFT = Option(
    name="padding_free", annotation=bool, default=False, trl_name="padding_free", group="Data",
    description="Flatten each batch into one sequence without padding (position ids keep rows apart). Packing with "
    "bfd or bfd_split turns it on by itself; without packing it does not truncate, so it needs max_length: null.",
)  # fmt: skip
COMPLETION_ONLY_LOSS = Option(
    name="completion_only_loss", annotation=bool | None, default=None, trl_name="completion_only_loss",
    group="Loss",
    description="Train on the completion's tokens only, not the prompt's. None: on for prompt/completion rows, off "
    "otherwise (TRL's default). Needs rows with a completion.",
)  # fmt: skip
ASSISTANT_ONLY_LOSS = Option(
    name="assistant_only_loss", annotation=bool, default=False, trl_name="assistant_only_loss", group="Loss",
    description="Train on the assistant's turns only (conversational rows). It needs a chat template that marks "
    "them with {% generation %}; TRL patches the templates it knows, and TextRL checks the rest before loading.",
)  # fmt: skip
SFT_LOSS_TYPE = Option(
    name="loss_type", annotation=Literal["nll", "dft"], default="nll", trl_name="loss_type", group="Loss",
    description="nll: the usual negative log-likelihood; dft: Dynamic Fine-Tuning, each token's loss weighted by its "
    "probability (arXiv 2508.05629).",
    hint="TRL's SFTConfig also lists chunked_nll, but SFTTrainer refuses it from TRL 1.15 on (its fused LM head "
    "computes the loss in chunks already)",
)  # fmt: skip

SUPERVISED = (SFT_MAX_LENGTH, DATASET_TEXT_FIELD, PACKING, PACKING_STRATEGY, PADDING_FREE_SFT,
              COMPLETION_ONLY_LOSS, ASSISTANT_ONLY_LOSS, SFT_LOSS_TYPE)  # fmt: skip
