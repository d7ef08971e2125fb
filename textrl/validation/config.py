"""TextRLConfig: the validated, algorithm-specific configuration of one training run.

`TextRLConfig(algo="grpo", ...)` returns an instance of the generated class for that algorithm
(`textrl.configs.GrpoConfig`), which subclasses TextRLConfig. Validation imports pydantic and the
spec only — never torch, transformers or trl — so every mistake surfaces in well under a second.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator
from pydantic._internal._model_construction import ModelMetaclass

from .. import spec
from ..errors import ConfigError, MigrationError, Problem, UnknownTRLFieldWarning, closest
from .errors import RuleViolations, translate

_PROCESSES: ContextVar[int | None] = ContextVar("textrl_processes", default=None)


def processes() -> int:
    """The number of processes the config being validated trains on (the per-process rules need it): the count
    given to `model_validate(..., processes=N)`, else WORLD_SIZE, which `accelerate launch` and torchrun set in
    every process they start; 1 otherwise."""
    given = _PROCESSES.get()
    if given is not None:
        return given
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


@contextmanager
def _validating_for(count: int | None) -> Iterator[None]:
    token = _PROCESSES.set(count)
    try:
        yield
    finally:
        _PROCESSES.reset(token)


def config_class(algo: Any) -> type[TextRLConfig]:
    """The generated config class for an algorithm name (or alias); MigrationError for a removed one."""
    names = [a.name for a in spec.ALGORITHMS]
    allowed = ", ".join(names)
    if algo is None:
        raise ConfigError(
            [Problem("algo", f"is required; allowed: {allowed}. Fix: add algo='grpo' (or another of these).")]
        )
    if not isinstance(algo, str):
        raise ConfigError(
            [
                Problem(
                    "algo", f"got {algo!r} ({type(algo).__name__}); allowed: {allowed}. Fix: give the name as a string."
                )
            ]
        )
    found = spec.find_algorithm(algo)
    if isinstance(found, spec.Removed):
        raise MigrationError(
            [Problem("algo", f"algo={algo!r} is not available: {found.what_happened}. Fix: use {found.replacement}.")]
        )
    if found is None:
        guess = closest(algo.lower(), [*spec.BY_NAME, *spec.REMOVED_BY_NAME])
        hint = f" Did you mean {guess!r}?" if guess else ""
        raise ConfigError(
            [Problem("algo", f"unknown algorithm {algo!r}.{hint} Allowed: {allowed}. Fix: set algo to one of these.")]
        )
    name = found.name
    module = importlib.import_module(f"textrl.generated.configs.{name}")
    cls: type[TextRLConfig] = getattr(module, spec.BY_NAME[name].class_name)
    return cls


class _DispatchByAlgo(ModelMetaclass):
    """Makes `TextRLConfig(algo=..., ...)` build the algorithm's own class, and turns pydantic errors into TextRL's."""

    def __call__(cls, *args: Any, **data: Any) -> Any:
        if args:
            raise TypeError(f"{cls.__name__} takes keyword arguments only, e.g. {cls.__name__}(algo='grpo', ...)")
        target: Any = config_class(data.get("algo")) if cls is TextRLConfig else cls
        if isinstance(data.get("algo"), str):  # spelled as the user likes (GRPO, REINFORCE++): the canonical name
            found = spec.find_algorithm(data["algo"])
            if isinstance(found, spec.Algorithm) and found.name == target.__algorithm__:
                data = {**data, "algo": found.name}
        algo = spec.BY_NAME[target.__algorithm__]
        data = route_extra(data, algo)
        try:
            return super(_DispatchByAlgo, target).__call__(**data)  # type: ignore[misc]
        except ValidationError as exc:
            raise translate(exc, algo) from None


def route_extra(data: Mapping[str, Any], algo: spec.Algorithm) -> dict[str, Any]:
    """TRL's spelling of an option, and keys of `extra` that name an option, go to that option, so they are typed and
    checked like any other: `activation_checkpointing` (TRL's field) is the option gradient_checkpointing, and
    `extra: {log_level: info}` is log_level. The same option set two ways is an error naming both. Other keys of
    `extra` stay there."""
    aliases = {o.trl_name: o.name for o in algo.options if o.trl_name and o.trl_name != o.name}
    data = dict(data)
    for key in [k for k in data if k in aliases]:
        _move(data, data, key, aliases[key], where=key, algo=algo.name)
    extra = data.get("extra")
    if not isinstance(extra, Mapping) or not extra:
        return data
    names = {o.name: o.name for o in algo.options if o.trl_name} | aliases
    kept = dict(extra)
    for key in [k for k in extra if isinstance(k, str) and k in names]:
        _move(kept, data, key, names[key], where=f"extra.{key}", algo=algo.name)
    data["extra"] = kept
    return data


def _move(source: dict[str, Any], data: dict[str, Any], key: str, name: str, *, where: str, algo: str) -> None:
    if name in data:
        raise ConfigError(
            [
                Problem(
                    where,
                    f"sets the option {name}, which is also set as {name}. Fix: keep one, written as {name}: ...",
                )
            ],
            algo=algo,
        )
    data[name] = source.pop(key)


class TextRLConfig(BaseModel, metaclass=_DispatchByAlgo):
    """The configuration of one TextRL run; construct it with `TextRLConfig(algo=..., output_dir=..., ...)`.

    Each algorithm has its generated subclass with typed fields (see `textrl.configs`); the fields,
    defaults, bounds and descriptions come from the spec.
    """

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        validate_assignment=True,
        validate_default=False,
        use_attribute_docstrings=False,
        allow_inf_nan=False,  # a NaN weight or an infinite rate is never meant; TRL would train on it silently
    )

    __algorithm__: ClassVar[str] = ""

    algo: str

    @classmethod
    def algorithm(cls) -> spec.Algorithm:
        """The spec entry of this config's algorithm."""
        if not cls.__algorithm__:
            raise TypeError("TextRLConfig itself has no algorithm; build one with TextRLConfig(algo=...)")
        return spec.BY_NAME[cls.__algorithm__]

    @classmethod
    def model_validate(cls, obj: Any, *, processes: int | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Validate a mapping (e.g. a parsed YAML document); dispatches on `algo` like the constructor.

        `processes`: how many processes will train (the generation batch is spread over them); by default the
        launched world (WORLD_SIZE), or 1."""
        if not isinstance(obj, Mapping):
            raise ConfigError(
                [Problem("config", f"got {type(obj).__name__}; expected a mapping of options. Fix: pass a dict.")]
            )
        bad_keys = [k for k in obj if not isinstance(k, str)]
        if bad_keys:
            raise ConfigError(
                [Problem(str(bad_keys[0]), f"option names are strings, got {bad_keys[0]!r}. Fix: quote the key.")]
            )
        with _validating_for(processes):
            return cls(**obj)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Any:
        """Load and validate a YAML config file (safe loader, YAML 1.2 numbers, duplicate keys rejected)."""
        from .yaml_io import load_yaml_file

        return cls.model_validate(load_yaml_file(path) or {})

    @field_validator("algo", mode="after", check_fields=False)
    @classmethod
    def _canonical_algo(cls, value: str) -> str:
        return spec.BY_NAME[value].name

    @model_validator(mode="after")
    def _check_extra(self) -> TextRLConfig:
        """`extra` holds what the snapshot of TRL does not know (a newer TRL's fields): said, not refused."""
        extra = getattr(self, "extra", None) or {}
        algo = self.algorithm()
        offered = {**spec.NOT_OFFERED, **algo.not_offered}
        refused = [Problem(f"extra.{k}", f"is not offered: {offered[k]}.") for k in extra if k in offered]
        if refused:
            raise RuleViolations(refused)
        unknown = sorted(k for k in extra if k not in spec.trl_field_names(algo.trl_config) and k not in algo.fixed)
        if unknown:
            warnings.warn(
                f"extra: {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not field(s) of "
                f"{algo.trl_config} in TRL {spec.SNAPSHOT['trl']}, the release TextRL's options mirror; they go to "
                "TRL unchecked, and building the TRL config fails if the installed TRL lacks them.",
                UnknownTRLFieldWarning,
                stacklevel=4,
            )
        return self

    @model_validator(mode="after")
    def _check_trl_release(self) -> TextRLConfig:
        """An option or value the installed TRL release lacks (spec/trl_releases.py), before TRL or a model loads."""
        from ..trl_support.releases import release_problems

        problems = release_problems(self)
        if problems:
            raise RuleViolations(problems)
        return self

    @model_validator(mode="after")
    def _check_rules(self) -> TextRLConfig:
        values = {name: getattr(self, name) for name in type(self).model_fields}
        count = processes()
        violations = [
            Problem(rule.fields[0], message)
            for rule in self.algorithm().rules
            if (message := rule.violation(values, processes=count))
        ]
        if violations:
            raise RuleViolations(violations)
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            raise translate(exc, self.algorithm()) from None

    def changed(self) -> dict[str, Any]:
        """The options set to something other than TextRL's default, as JSON-ready values."""
        return {
            name: value
            for name, value in self.model_dump(mode="json").items()
            if name != "algo" and value != _json_default(type(self), name)
        }


def _json_default(cls: type[TextRLConfig], name: str) -> Any:
    field = cls.model_fields[name]
    default = field.get_default(call_default_factory=True)
    return default.model_dump(mode="json") if isinstance(default, BaseModel) else default
