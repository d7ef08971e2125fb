"""The dataset layouts the algorithm families consume (TRL's standard and conversational formats)."""

from .model import DataFormat

PROMPT_ONLY = DataFormat(
    name="prompt-only",
    columns=("prompt",),
    description="A prompt column: a string, or a list of chat messages (needs a chat template). Other columns "
    "are passed to reward functions as keyword arguments.",
    example={"prompt": "Write a haiku about the sea."},
)
PAIRWISE = DataFormat(
    name="preference (paired)",
    columns=("prompt", "chosen", "rejected"),
    optional=("prompt",),
    description="A prompt with a preferred and a dispreferred completion. The prompt may be left implicit: "
    "chosen and rejected then hold whole conversations sharing a prefix.",
    example={"prompt": "2 + 2 =", "chosen": " 4", "rejected": " 5"},
)
BINARY = DataFormat(
    name="unpaired preference",
    columns=("prompt", "completion", "label"),
    description="A prompt, one completion and a boolean label: true for desirable, false for undesirable.",
    example={"prompt": "2 + 2 =", "completion": " 4", "label": True},
)
REWARD_PAIRS = DataFormat(
    name="preference (implicit prompt allowed)",
    columns=("prompt", "chosen", "rejected"),
    optional=("prompt",),
    description="A preferred and a dispreferred text, with an optional prompt column; the model learns to score "
    "chosen above rejected.",
    example={"chosen": "The capital of France is Paris.", "rejected": "The capital of France is Rome."},
)

SUPERVISED = DataFormat(
    name="supervised",
    columns=("text", "messages", "prompt", "completion"),
    layouts=(("prompt", "completion"), ("messages",), ("text",)),  # the order TRL reads a row in
    string_column="text",
    description="Demonstrations in one of TRL's layouts: a text column (language modelling: every token is trained "
    "on; dataset_text_field names another column), a messages column of chat messages, or prompt and completion "
    "columns, both text or both chat messages (by default only the completion is trained on).",
    example={"prompt": "2 + 2 =", "completion": " 4"},
)

FORMATS: tuple[DataFormat, ...] = (PROMPT_ONLY, PAIRWISE, BINARY, REWARD_PAIRS, SUPERVISED)
FORMATS_BY_NAME: dict[str, DataFormat] = {f.name: f for f in FORMATS}
