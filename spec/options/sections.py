"""The nested sections as options, so they are validated, documented and schema'd like any other key."""

from typing import Any

from ..model import Option
from ..sections import ComposedReward, DatasetSection, DistributedSection, ModelReward, ModelSection, RewardRef

MODEL = Option(
    name="model", annotation=ModelSection | None, default=None, trl_name=None, group="Sections", cli=False,
    description="The policy model to load (YAML/CLI runs); in Python, pass the loaded model to the trainer.",
)  # fmt: skip
DATASET = Option(
    name="dataset", annotation=DatasetSection | None, default=None, trl_name=None, group="Sections", cli=False,
    description="Training data (YAML/CLI runs); in Python, pass train_dataset to the trainer.",
)  # fmt: skip
EVAL_DATASET = Option(
    name="eval_dataset", annotation=DatasetSection | None, default=None, trl_name=None, group="Sections", cli=False,
    description="Evaluation data, used when eval_strategy is not no.",
)  # fmt: skip
REWARD = Option(
    name="reward", annotation=RewardRef | list[RewardRef] | ComposedReward | ModelReward | None, default=None,
    trl_name=None, group="Sections", cli=False,
    description="The reward: module:function, a list of them, {compose: [...], weights: [...]}, or {model: path} "
    "for a sequence-classification reward model.",
)  # fmt: skip
DISTRIBUTED = Option(
    name="distributed", annotation=DistributedSection | None, default=None, trl_name=None, group="Sections",
    cli=False, description="Multi-device strategy: {strategy: ddp | deepspeed | fsdp, zero_stage, offload, ...}.",
)  # fmt: skip
EXTRA = Option(
    name="extra", annotation=dict[str, Any], default={}, trl_name=None, group="Sections", cli=False,
    description="Any other field of the installed TRL config class, passed through as is; names are checked "
    "against that class when the TRL config is built.",
)  # fmt: skip

ENV = Option(
    name="env", annotation=dict[str, str | int | float | bool], default={}, trl_name=None, group="Sections", cli=False,
    description="Environment variables textrl-train sets before anything else runs (WANDB_PROJECT: my-project), "
    "as the env: block of TRL's CLI configs; values are written as text.",
)  # fmt: skip

SECTIONS = (MODEL, DATASET, EVAL_DATASET, DISTRIBUTED, EXTRA, ENV)
