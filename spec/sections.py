"""Nested sections of a config (`model:`, `dataset:`, `reward:`, `distributed:`), as the user writes them."""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import sys
from collections.abc import Iterable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from .choices import DistributedStrategy, Quantization, TorchDtype
from .forms import ShellPath, expand_path


class Section(BaseModel):
    # NaN and infinity are never meant: reward.weights [.nan, 1] would silently drop a reward. The docstring under
    # each field is its description, read by the codegen alone (document_fields): pydantic's use_attribute_docstrings
    # would parse this file once per class at every import, about 50 ms of each run's start
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


class PeftSection(Section):
    """A LoRA adapter; with one, TRL disables the adapter for the reference pass, so no reference model is loaded."""

    type: Literal["lora"] = "lora"
    """Adapter type. Only LoRA is supported."""
    r: int = Field(16, ge=1)
    """LoRA rank."""
    alpha: float | None = Field(None, gt=0)
    """LoRA scaling numerator (`lora_alpha`); None means 2 × r."""
    dropout: float = Field(0.05, ge=0, lt=1)
    """Dropout on the LoRA input."""
    target_modules: list[str] | Literal["all-linear"] | None = "all-linear"
    """Module names to adapt, "all-linear" for every linear layer except the output head, or null for PEFT's default
    for the architecture (what TRL's CLI does when a recipe leaves lora_target_modules unset)."""
    bias: Literal["none", "all", "lora_only"] = "none"
    """Which biases to train."""
    use_rslora: bool = False
    """Rank-stabilised LoRA scaling (alpha / sqrt(r))."""
    use_dora: bool = False
    """Weight-decomposed LoRA (DoRA)."""
    modules_to_save: list[str] | None = None
    """Modules trained in full and saved beside the adapter (TRL's lora_modules_to_save), e.g. [score]."""


class ModelSection(Section):
    """The policy model to load and how."""

    name: ShellPath = Field(min_length=1)
    """A hub id (e.g. Qwen/Qwen2.5-0.5B), a local folder saved with save_pretrained, a .gguf file, or a built-in
    model: textrl:tiny (offline, for tests) or textrl:smollm2 (SmolLM2-135M-Instruct, fetched once)."""
    gguf_file: ShellPath | None = None
    """A GGUF file inside the folder `name` (transformers' gguf_file); converted once to a float checkpoint that
    trains. Needs the gguf extra."""
    peft: PeftSection | None = None
    """A LoRA adapter to train instead of the full model."""
    quantization: Quantization | None = None
    """Load the base weights in 4-bit (nf4, QLoRA) or 8-bit with bitsandbytes; needs a CUDA GPU and the quant extra."""
    torch_dtype: TorchDtype | None = None
    """Weight dtype at load time; None lets TextRL pick bf16 on GPUs that support it, else float32."""
    attn_implementation: str | None = None
    """Attention kernel passed to transformers, e.g. sdpa, eager, flash_attention_2."""
    revision: str | None = None
    """A hub branch, tag or commit."""
    trust_remote_code: bool = False
    """Run modelling code shipped with the checkpoint. Off by default: it executes code from the model repo."""
    chat_template: str | None = None
    """A chat template that replaces the tokenizer's: its Jinja text, or the path of a .jinja file (read from the
    working directory, else the config's folder). A recipe's chat_template key (alignment-handbook, open-r1) lands
    here. TRL's chat_template_path (SFT, GRPO) instead copies a template file or another model's template."""
    adapter: Literal["merge", "continue"] = "merge"
    """When name is a LoRA adapter (the output_dir of a LoRA run): merge loads it on its base and merges it, so this
    run trains the fine-tuned model (a new peft: adapter on top, or full weights) and a DPO or KTO reference is that
    model; continue keeps training the same adapter (without peft:), and the reference is then the base without it."""


class _Source(Section):
    """Where rows come from: exactly one of the sources, a split, and what load_dataset takes beside them."""

    hub: str | None = None
    """A hub dataset id, e.g. trl-lib/ultrafeedback_binarized."""
    path: ShellPath | None = None
    """A local .jsonl, .json, .csv or .parquet file, or a folder of them (with data_files: the files to read from it);
    relative to the config's folder. A CSV file whose header has no comma but a ; or a tab is read with that
    separator."""
    split: str = "train"
    """Split, with slicing, e.g. train or train[:1%]."""
    subset: str | None = None
    """Dataset configuration name, for hub datasets that have several (load_dataset's name)."""
    data_files: str | builtins.list[str] | dict[str, str | builtins.list[str]] | None = None
    """Files (or glob patterns) to load, as load_dataset's data_files: from the path folder, or from a hub
    dataset."""
    data_dir: ShellPath | None = None
    """A folder of a hub dataset to load, as load_dataset's data_dir."""
    columns: builtins.list[str] | None = None
    """Keep only these columns (e.g. [prompt, chosen, rejected]); None keeps all."""

    _SOURCES: ClassVar[tuple[str, ...]] = ("hub", "path")

    @field_validator("data_files", mode="before")
    @classmethod
    def _expand_data_files(cls, value: Any) -> Any:  # ~ and $VAR as in every other path (forms.ShellExpanded)
        if isinstance(value, list):
            return [expand_path(v) for v in value]
        if isinstance(value, dict):
            return {k: [expand_path(x) for x in v] if isinstance(v, list) else expand_path(v) for k, v in value.items()}
        return expand_path(value)

    @model_validator(mode="after")
    def _exactly_one_source(self) -> Any:
        given = [k for k in self._SOURCES if getattr(self, k) is not None]
        if len(given) != 1:
            seen = ", ".join(given) if given else "none of them"
            raise ValueError(
                f"a dataset needs exactly one of {', '.join(self._SOURCES[:-1])} or {self._SOURCES[-1]}; got {seen}. "
                "Fix: keep one source, e.g. {hub: trl-lib/tldr, split: train} or {path: data/train.jsonl}."
            )
        return self


class DatasetPart(_Source):
    """One dataset of a mixture: a source, its split and columns, and how much of it to use."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [{"required": [key], "properties": {key: {"type": "string"}}} for key in ("hub", "path")]
        }
    )

    fraction: float | None = Field(None, gt=0)
    """TRL's share of the mixture (DatasetConfig.fraction): shares are normalised to sum to one and each dataset
    gives its first rows, as many as the largest mixture that oversamples none allows. All parts or none."""
    weight: float | None = Field(None, gt=0, le=1)
    """The share of this dataset's rows to keep, drawn at random with the mixture's seed (the dataset_mixture
    `weight` of the alignment-handbook and open-r1 recipes)."""


class DatasetSection(_Source):
    """Where training (or evaluation) rows come from: exactly one of hub, path, list or mixture."""

    list: builtins.list[str | dict[str, Any]] | None = None
    """Rows written inline: strings become prompt-only rows, mappings become rows as they are."""
    mixture: builtins.list[DatasetPart] | None = Field(None, min_length=1)
    """Several datasets concatenated, each {hub or path, subset, split, columns, fraction or weight}."""
    # the bound on each member: on the union, pydantic writes a "gt" that JSON Schema does not know (editors and
    # the schema would take 0)
    test_split_size: Annotated[float, Field(gt=0)] | Annotated[int, Field(gt=0)] | None = None
    """Hold out this share (below 1) or number of rows as the evaluation set, as TRL's test_split_size; only when no
    eval_dataset is given."""
    seed: int = 0
    """Seed of the mixture's random weights and of the held-out split (TRL's split is unseeded; TextRL's repeats)."""

    _SOURCES: ClassVar[tuple[str, ...]] = ("hub", "path", "list", "mixture")

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": [key], "properties": {key: {"type": kind}}}
                for key, kind in (("hub", "string"), ("path", "string"), ("list", "array"), ("mixture", "array"))
            ]
        }
    )


REWARD_REF_PATTERN = r"^(?:[A-Za-z_][A-Za-z0-9_.]*|[^:]+\.py):[A-Za-z_][A-Za-z0-9_]*$"
RewardRef = Annotated[str, StringConstraints(pattern=REWARD_REF_PATTERN)]
"""A reward function as module:function (my_rewards:length_reward, the module found from the config's folder or the
working directory) or file:function (rewards/mine.py:score, relative to the config's folder)."""


class ComposedReward(Section):
    """Several reward functions summed with weights; each component is logged as its own metric."""

    compose: list[RewardRef] = Field(min_length=1)
    """Rewards as module:function references."""
    weights: list[float] | None = None
    """One weight per reward (checked by the rule composed_reward_weights); None means all 1.0."""


class ModelReward(Section):
    """A sequence-classification model used as the reward (TRL scores completions with it natively)."""

    model: ShellPath = Field(min_length=1)
    """A hub id or local folder of a sequence-classification model, e.g. one trained with algo reward_model."""


def _only_with_strategy(key: str, strategy: str) -> dict[str, Any]:
    """JSON Schema: when `key` is set (not null), strategy must be written and equal `strategy`."""
    return {
        "if": {"required": [key], "properties": {key: {"not": {"type": "null"}}}},
        "then": {"required": ["strategy"], "properties": {"strategy": {"const": strategy}}},
    }


class DistributedSection(Section):
    """How to spread training over devices; handed to accelerate, DeepSpeed or FSDP, never re-implemented."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _only_with_strategy("zero_stage", "deepspeed"),
                _only_with_strategy("fsdp_version", "fsdp"),
                {
                    "if": {
                        "required": ["offload"],
                        "properties": {"offload": {"enum": ["optimizer", "optimizer_and_parameters"]}},
                    },
                    "then": {"required": ["strategy"], "properties": {"strategy": {"enum": ["deepspeed", "fsdp"]}}},
                },
                {
                    "if": {"required": ["offload"], "properties": {"offload": {"const": "optimizer_and_parameters"}}},
                    "then": {
                        "required": ["strategy"],
                        "anyOf": [
                            {"properties": {"strategy": {"const": "fsdp"}}},
                            {
                                "required": ["zero_stage"],
                                "properties": {"strategy": {"const": "deepspeed"}, "zero_stage": {"const": 3}},
                            },
                        ],
                    },
                },
            ]
        }
    )

    strategy: DistributedStrategy = "ddp"
    """ddp (data parallel, the accelerate default), deepspeed or fsdp."""
    zero_stage: Literal[1, 2, 3] | None = None
    """DeepSpeed ZeRO stage; only with strategy deepspeed (None means 2)."""
    offload: Literal["none", "optimizer", "optimizer_and_parameters"] = "none"
    """Offload optimizer state (and, with ZeRO-3 or FSDP, parameters) to CPU memory. With DeepSpeed, its CPU AdamW
    then replaces `optim` (ZeRO-Offload refuses a torch optimizer)."""
    fsdp_version: Literal[1, 2] | None = None
    """FSDP version; only with strategy fsdp (None means 2)."""

    @property
    def zero3(self) -> bool:
        """DeepSpeed ZeRO-3: every parameter is partitioned across the processes as the weights load."""
        return self.strategy == "deepspeed" and self.zero_stage == 3

    @model_validator(mode="after")
    def _fits_strategy(self) -> DistributedSection:
        if self.zero_stage is not None and self.strategy != "deepspeed":
            raise ValueError(
                f"distributed.zero_stage={self.zero_stage} applies only to strategy 'deepspeed', got strategy "
                f"{self.strategy!r}. Fix: set strategy: deepspeed, or remove zero_stage."
            )
        if self.fsdp_version is not None and self.strategy != "fsdp":
            raise ValueError(
                f"distributed.fsdp_version={self.fsdp_version} applies only to strategy 'fsdp', got strategy "
                f"{self.strategy!r}. Fix: set strategy: fsdp, or remove fsdp_version."
            )
        if self.offload != "none" and self.strategy == "ddp":
            raise ValueError(
                f"distributed.offload={self.offload!r} needs DeepSpeed or FSDP; plain data parallel (strategy 'ddp') "
                "cannot offload. Fix: set strategy: deepspeed (or fsdp), or remove offload."
            )
        if self.offload == "optimizer_and_parameters" and not (self.strategy == "fsdp" or self.zero3):
            raise ValueError(
                "distributed.offload='optimizer_and_parameters' needs sharded parameters: strategy fsdp, or "
                f"strategy deepspeed with zero_stage 3; got strategy {self.strategy!r}, zero_stage {self.zero_stage}. "
                "Fix: use offload: optimizer, or shard the parameters."
            )
        return self


def document_fields(models: Iterable[type[BaseModel]] = ()) -> None:
    """Give each field of these models (default: the sections) the docstring under it as its description, reading
    each module's source once, and rebuild the models so their JSON schema carries it. The codegen calls this before
    it renders docs and the schema; the generated config classes, whose docstrings it wrote, are documented alike."""
    chosen = list(models) or [m for m in globals().values() if isinstance(m, type) and issubclass(m, Section)]
    docs: dict[tuple[str, str], dict[str, str]] = {}
    for module in {k.__module__ for m in chosen for k in m.__mro__[:-2]}:  # less BaseModel, object
        for node in ast.walk(ast.parse(inspect.getsource(sys.modules[module]))):
            if isinstance(node, ast.ClassDef):
                body = node.body
                docs[module, node.name] = {
                    stmt.target.id: inspect.cleandoc(after.value.value)
                    for stmt, after in itertools.pairwise(body)
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                }  # fmt: skip
    for model in chosen:  # in the order given: a section is rebuilt after the sections it holds
        for name, info in model.model_fields.items():
            found = [d[name] for k in model.__mro__ if name in (d := docs.get((k.__module__, k.__name__), {}))]
            if found and info.description is None:
                info.description = found[0]
        model.model_rebuild(force=True)
