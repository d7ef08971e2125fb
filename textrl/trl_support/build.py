"""Turning a validated TextRLConfig into the TRL config object (the generated builders call `finish`)."""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..engines.distributed import check_engines, fsdp_refusal, trl_arguments
from ..engines.hardware import bf16_supported, has_accelerator
from ..errors import ConfigError, Problem, closest
from ..validation.view import options as view
from .env import warn_if_untested_trl
from .releases import for_release, for_transformers

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig


def build_trl_config(cfg: TextRLConfig) -> Any:
    """TRL's config object (GRPOConfig, DPOConfig, ...) for a TextRL config. Imports TRL.

    Warns (UntestedTRLWarning) when the installed TRL is outside the range this release was tested with.
    """
    check_engines(cfg)  # DeepSpeed / vLLM missing: named here, before TRL or a model is loaded
    warn_if_untested_trl()
    module = importlib.import_module(f"textrl.generated.trl_builders.{cfg.algo}")
    return module.build_trl_config(cfg)


class PrecisionWarning(UserWarning):
    """A precision that runs, but not the way the user probably expects (bf16 autocast on a CPU)."""


def resolve_bf16(value: bool | str) -> bool:
    """TextRL's bf16 "auto" → True where the hardware has bf16. An explicit True runs as TRL runs it: bfloat16
    autocast on a machine without a GPU (with a warning: it is slower than float32 there), and an error on a GPU
    without bf16, where TRL would refuse it."""
    supported = bf16_supported()
    if value == "auto":
        return supported
    if value is True and not supported and not has_accelerator():
        warnings.warn(
            "bf16=True on a machine without a GPU: TRL runs bfloat16 autocast on the CPU, about 2.4x slower than "
            "float32 here. bf16='auto' (the default) chooses float32 on CPUs and bf16 where the GPU has it.",
            PrecisionWarning,
            stacklevel=2,
        )
        return True
    if value is True and not supported:
        raise ConfigError(
            [
                Problem(
                    "bf16",
                    "got True, but this machine's GPU has no bf16 (TRL would fail with \"Your setup doesn't "
                    "support bf16/gpu\"). Allowed here: false or 'auto'. Fix: set bf16='auto' (the default), which "
                    "uses bf16 where the hardware has it.",
                )
            ]
        )
    return bool(value)


def as_tuple(value: list[float] | None) -> tuple[float, ...] | None:
    return None if value is None else tuple(value)


def extra_problems(
    cfg: TextRLConfig, trl_fields: set[str], trl_class: str, values: dict[str, Any], fixed: Mapping[str, Any]
) -> list[Problem]:
    """What is wrong with the keys of `extra` (and `--set` keys that landed there): not a field of `trl_class`, or
    a field a TextRL option or the algorithm already sets. The run checks the installed TRL class; the dry run the
    snapshot of the installed release (the same names)."""
    spec_options = {o.name: o for o in cfg.algorithm().options}
    problems = []
    for key in view(cfg).extra:
        if key not in trl_fields:
            guess = closest(key.strip(), sorted(trl_fields))
            hint = f" Did you mean {guess!r}?" if guess else ""
            spaces = " (it has spaces around it)" if key != key.strip() else ""
            problems.append(
                Problem(
                    f"extra.{key}",
                    f"is not a field of the installed {trl_class.rpartition('.')[2]}{spaces}.{hint} Fix: use a field "
                    f"name of {trl_class}, or remove it.",
                )
            )
        elif key in values or key in fixed or key in spec_options:
            owner = (
                key if key in spec_options else next((o.name for o in spec_options.values() if o.trl_name == key), key)
            )
            why = f"is fixed by algo={cfg.algo!r}" if key in fixed else f"is set by the TextRL option {owner}"
            problems.append(
                Problem(
                    f"extra.{key}",
                    f"{why}. Fix: remove it from extra" + (f" and set {owner}." if key not in fixed else "."),
                )
            )
    return problems


def finish(
    trl_class: type, values: dict[str, Any], fixed: dict[str, Any], cfg: TextRLConfig, mirrored: tuple[str, ...] = ()
) -> Any:
    """Merge spec values, the mirrored options the user set, fixed values and `extra`, check `extra` against the TRL
    class, and build it."""
    values = {**values, **{name: getattr(cfg, name) for name in mirrored if name in cfg.model_fields_set}}
    trl_fields = {f.name for f in dataclasses.fields(trl_class) if f.init}
    extra = view(cfg).extra
    options = {o.name: o for o in cfg.algorithm().options}
    problems = extra_problems(cfg, trl_fields, cfg.algorithm().trl_config, values, fixed)
    if problems:
        raise ConfigError(problems, algo=cfg.algo)
    set_by_user = {o.trl_name or o.name for o in options.values() if o.name in cfg.model_fields_set} | set(extra)
    kwargs = for_release({**values, **fixed, **trl_arguments(cfg), **extra}, trl_fields, set_by_user)
    kwargs = for_transformers(kwargs, trl_fields)
    if kwargs.get("fp16") and view(cfg).bf16 == "auto":
        kwargs["bf16"] = False  # "auto" means bf16 only when the user has not chosen fp16
    accelerator = has_accelerator()
    refusal = fsdp_refusal(cfg, accelerator=accelerator)
    if refusal is not None:
        raise ConfigError([refusal], algo=cfg.algo)
    if "use_cpu" not in kwargs and not accelerator:
        # Without this, transformers runs each process of `accelerate launch --num_processes N` alone on a CPU
        # machine; with it, the processes join one gloo process group (and a single process is unaffected).
        kwargs["use_cpu"] = True
    try:
        return trl_class(**kwargs)
    except Exception as exc:  # TRL's and transformers' own checks (ValueError, a missing file, ...), all before a model
        checked = sorted(n for n in mirrored if n in cfg.model_fields_set)
        hint = f" (options you set that TRL checks itself: {', '.join(checked)})" if checked else ""
        raise ConfigError(
            [
                Problem(
                    "config",
                    f"TRL's {trl_class.__name__} rejected it: {type(exc).__name__}: {str(exc).rstrip('.')}{hint}. "
                    "Fix: adjust the option named above.",
                )
            ],
            algo=cfg.algo,
        ) from exc
