"""The meta-model of the spec: what an option, a rule, a data format and an algorithm are.

Everything TextRL generates (typed config classes, TRL builders, CLI flags, docs, JSON Schema) is
rendered from instances of these classes. Pydantic and the standard library only: this module is
imported on every config validation and must stay light.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")


class Reference(str, enum.Enum):
    """Whether a family trains against a frozen reference model, and who builds it."""

    LOADED = "loaded by TextRL"
    """TextRL loads a frozen copy of the policy and hands it to TRL (with LoRA, TRL uses the policy with its
    adapter switched off instead, and no copy is loaded)."""
    FOR_KL = "built by TRL when beta > 0"
    """TRL builds it itself, and only for the KL penalty: with beta = 0 there is none."""
    NONE = "none"


class Family(str, enum.Enum):
    """How an algorithm learns, which decides the trainer class, the model head, the reference model and the data.

    This is the one registry of family -> trainer: the runtime finds each TextRL trainer by `trainer`, and each
    trainer class lists the families whose `trainer` names it.
    """

    ONLINE = "online"
    PAIRWISE = "pairwise preference"
    BINARY = "binary preference"
    REWARD_MODEL = "reward model"
    SUPERVISED = "supervised"

    @property
    def trainer(self) -> str:
        """The TextRL trainer class (in `textrl`) that trains this family."""
        return _FAMILY_TRAINERS[self]

    @property
    def reference(self) -> Reference:
        return _FAMILY_REFERENCES[self]

    @property
    def needs_reward(self) -> bool:
        """Whether training scores its own completions with reward functions or models (the `reward:` section)."""
        return self is Family.ONLINE

    @property
    def model_task(self) -> Literal["causal-lm", "reward"]:
        """The model head to load: a sequence classifier for reward models, a causal LM otherwise."""
        return "reward" if self is Family.REWARD_MODEL else "causal-lm"

    def holds_reference(self, *, beta: float, peft: bool) -> bool:
        """Whether a frozen reference copy of the weights sits in memory during training."""
        if peft or self.reference is Reference.NONE:
            return False
        return self.reference is Reference.LOADED or beta > 0


_FAMILY_TRAINERS = {
    Family.ONLINE: "OnlineTrainer",
    Family.PAIRWISE: "PreferenceTrainer",
    Family.BINARY: "PreferenceTrainer",
    Family.REWARD_MODEL: "RewardModelTrainer",
    Family.SUPERVISED: "SupervisedTrainer",
}
_FAMILY_REFERENCES = {
    Family.ONLINE: Reference.FOR_KL,
    Family.PAIRWISE: Reference.LOADED,
    Family.BINARY: Reference.LOADED,
    Family.REWARD_MODEL: Reference.NONE,
    Family.SUPERVISED: Reference.NONE,
}


class Required(enum.Enum):
    """Marks an option without a default (the user must set it)."""

    REQUIRED = "required"


REQUIRED = Required.REQUIRED


class Option(_Frozen):
    """One user-facing option: its type, default, bounds, description and the TRL field it feeds."""

    name: str
    annotation: Any
    """A Python type: int, float | None, Literal[...], list[float] | None, or a section model."""
    default: Any
    description: str
    trl_name: str | None
    """The TRL/transformers config field this option is forwarded to; None for TextRL-only options."""
    group: str
    """Heading under which the docs and `--help` list the option."""
    ge: int | float | None = None
    gt: int | float | None = None
    le: int | float | None = None
    lt: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    trl_convert: str | None = None
    """Name of a converter in textrl.trl_support.build applied before the value goes to TRL (e.g. resolving
    bf16="auto")."""
    cli: bool = True
    """Whether `textrl-train` gets a flag for it (sections such as `model:` are YAML-only)."""
    example: Any = None
    """A value used in docs and tests where the default is None or REQUIRED."""
    hint: str | None = None
    """Added to a wrong-value error, e.g. what an old TRL spelling of the value meant."""
    mirrored: bool = False
    """Mirrored from TRL's snapshot (spec/mirrored.py), not written by hand: forwarded to TRL only when set, so an
    unset one is TRL's own default."""

    def but(self, **changes: Any) -> Option:
        """The same option with another default (or bound) for one algorithm; the description stays single."""
        return self.model_copy(update=changes)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def bounds(self) -> dict[str, float | int]:
        names = ("ge", "gt", "le", "lt", "min_length", "max_length")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}


class Rule(_Frozen):
    """A cross-field constraint TRL enforces late (inside the loss or trainer) or not at all.

    `check` gets the validated option values and returns None, or a message that names the fields,
    the values seen, what is allowed and the fix. A rule whose answer depends on how many processes train
    (`per_process`) gets that count as a second argument; call rules through `violation`.
    """

    name: str
    fields: tuple[str, ...]
    """The options the rule is about; errors are reported against the first."""
    description: str
    check: Callable[..., str | None]
    per_process: bool = False
    """Whether `check` takes the number of processes (data-parallel ranks) as its second argument."""

    def violation(self, values: Mapping[str, Any], *, processes: int = 1) -> str | None:
        """The rule's message for these option values trained on `processes` processes, or None."""
        return self.check(values, processes) if self.per_process else self.check(values)


def rule(*fields: str, description: str, per_process: bool = False) -> Callable[[Callable[..., str | None]], Rule]:
    """The Rule that the decorated check is: named as the function, so that a rule has one name (its constant, its
    check and the name messages and docs use)."""

    def make(check: Callable[..., str | None]) -> Rule:
        return Rule(name=check.__name__, fields=fields, description=description, check=check, per_process=per_process)

    return make


class DataFormat(_Frozen):
    """The dataset columns an algorithm needs: every column it reads, and which of them a dataset may leave out."""

    name: str
    columns: tuple[str, ...]
    """Every column the format reads, in the order a row lays them out (docs list them so)."""
    optional: tuple[str, ...] = ()
    """The columns of `columns` a dataset may leave out (e.g. the prompt, when it is implicit in the completions)."""
    description: str
    example: Mapping[str, Any]
    layouts: tuple[tuple[str, ...], ...] = ()
    """Alternative sets of columns, of which a dataset has exactly one (supervised data: text; messages; prompt and
    completion); empty when `columns` less `optional` is the one layout."""
    string_column: str = "prompt"
    """The column a plain string becomes when rows are given as strings."""

    @model_validator(mode="after")
    def _optional_among_columns(self) -> DataFormat:
        stray = [c for c in (*self.optional, *(c for layout in self.layouts for c in layout)) if c not in self.columns]
        if stray:
            raise ValueError(f"data format {self.name!r}: optional {', '.join(stray)} not among its columns")
        return self

    @property
    def required(self) -> tuple[str, ...]:
        """The columns every dataset in this format must have, in order (with layouts: those all layouts share)."""
        return tuple(c for c in self.columns if c not in self.optional and all(c in layout for layout in self.layouts))


class Paper(_Frozen):
    title: str
    url: str


class Algorithm(_Frozen):
    """One training algorithm and everything TextRL needs to configure, validate and document it."""

    name: str
    aliases: tuple[str, ...] = ()
    title: str
    summary: str
    family: Family
    trl_trainer: str
    """Dotted import path of the TRL trainer class, e.g. `trl.GRPOTrainer`."""
    trl_config: str
    """Dotted import path of the TRL config class, e.g. `trl.GRPOConfig`."""
    fixed: Mapping[str, Any] = Field(default_factory=dict)
    """TRL fields this algorithm sets to a fixed value (e.g. `ipo` sets DPO `loss_type=["ipo"]`)."""
    not_offered: Mapping[str, str] = Field(default_factory=dict)
    """TRL fields of its config class this algorithm does not offer (they make no sense with what it fixes), each
    with the reason and the fix; see also spec.NOT_OFFERED for the fields no algorithm offers."""
    data_format: DataFormat
    options: tuple[Option, ...]
    rules: tuple[Rule, ...] = ()
    paper: Paper
    notes: str = ""
    """How the algorithm is realised in TRL and why, where that is not obvious."""

    def option(self, name: str) -> Option:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise KeyError(name)

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    @property
    def class_name(self) -> str:
        """The generated config class, e.g. `grpo` -> `GrpoConfig`, `reward_model` -> `RewardModelConfig`."""
        return "".join(part.capitalize() for part in self.name.split("_")) + "Config"


class Removed(_Frozen):
    """An algorithm TRL moved out or deleted; asking for it raises MigrationError with this text."""

    name: str
    what_happened: str
    """Which TRL version moved or removed it, e.g. "removed from TRL in 0.29"."""
    replacement: str
    """The nearest supported TextRL spelling, written as the user would type it."""


class Renamed(_Frozen):
    """A key users bring from older TRL/TextRL code; met as an unknown key, it explains the new spelling."""

    old: str
    what_happened: str
    replacement: str
    families: tuple[Family, ...] = ()
    """Only for these families (the key may be a real option of others); empty means all."""
    new_name: str | None = None
    """The option that keeps the old key's meaning under today's name, when the rename is one to one: a recipe
    written for TRL's CLI is translated by it (textrl-train --trl, textrl-convert)."""


class TrlDifference(_Frozen):
    """A default TextRL chooses differently from TRL on purpose: TRL's default and why TextRL's differs."""

    trl_default: Any
    why: str
