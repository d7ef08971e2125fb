"""TRL's whole config surface as options: every field of the TRL config class behind an algorithm that the spec does
not write by hand is mirrored from the newest supported release's snapshot, `trl_snapshots/<release>.json` (taken
from TRL by `python -m textrl.codegen --snapshot`; spec/trl_releases.py says what older releases lack).

Mirrored options keep TRL's name, type, default, choices and help text, and are forwarded to TRL only when set, so
an unset one is TRL's own default exactly. A few fields are deliberately not offered (NOT_OFFERED): each says why
and what to write instead. Pydantic and the standard library only; the snapshot is read as data.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .forms import ShellPath
from .grammar import annotation
from .model import Algorithm, Option, Rule
from .trl_releases import NEWEST, snapshot

SNAPSHOT: dict[str, Any] = snapshot(NEWEST)
"""The newest supported TRL's config dataclasses as data: see textrl/codegen/trl_snapshot.py for the format."""

NOT_OFFERED: dict[str, str] = {
    "deepspeed": "TextRL writes TRL's DeepSpeed settings from the distributed: section. Fix: distributed: "
    "{strategy: deepspeed, zero_stage: 3}",
    "fsdp": "TextRL writes TRL's FSDP settings from the distributed: section. Fix: distributed: {strategy: fsdp}",
    "fsdp_config": "TextRL writes TRL's FSDP settings from the distributed: section. Fix: distributed: "
    "{strategy: fsdp, fsdp_version: 2}",
    "parallelism_config": "it is an accelerate ParallelismConfig object, which a config file cannot hold. Fix: "
    "describe the layout in distributed:, or pass the object to TRL yourself through trainer.trl_trainer",
    "model_init_kwargs": "TRL reads it only when it loads the policy from a name, and TextRL loads the policy from "
    "the model: section. Fix: model: {torch_dtype: ..., attn_implementation: ..., revision: ...}",
    "resume_from_checkpoint": "transformers' Trainer does not read this field. Fix: textrl-train --resume, or "
    "trainer.train(resume_from_checkpoint=...)",
}
"""TRL fields TextRL deliberately does not offer, with the reason and what to do instead."""


def trl_fields(trl_config: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, record) of every init field of a TRL config class, in TRL's order."""
    out = []
    for entry in SNAPSHOT["classes"][trl_config]:
        owner, _, name = entry.partition(".")
        out.append((name, {**SNAPSHOT["fields"][owner][name], "owner": owner}))
    return out


@functools.cache
def trl_field_names(trl_config: str) -> frozenset[str]:
    """The init fields of a TRL config class, as the snapshot has them."""
    return frozenset(name for name, _ in trl_fields(trl_config))


def _option(name: str, record: dict[str, Any]) -> Option:
    return _shared_option(name, record["owner"])


@functools.cache
def _shared_option(name: str, owner: str) -> Option:
    # model_construct, once per TRL field: about 1,800 options (300 distinct fields, most from TrainingArguments)
    # come from data already checked by the snapshot's writer, and the spec is imported on every config build (the
    # drift test compares the snapshot with TRL); an Option is frozen, so the algorithms share it
    record = {**SNAPSHOT["fields"][owner][name], "owner": owner}
    typed = annotation(record)
    if name.endswith(("_dir", "_path")) and typed in (str, str | None):  # a path: ~ and $VAR as everywhere else
        typed = ShellPath if typed is str else ShellPath | None
    return Option.model_construct(
        name=name,
        annotation=typed,
        default=record["default"],
        description=record["help"] or f"TRL's {name}.",
        trl_name=name,
        group=f"More TRL options ({record['owner'].lstrip('_')})",
        mirrored=True,
    )


def _known_keys(name: str, keys: tuple[str, ...]) -> Rule:
    """A dict option whose keys TRL turns into a dataclass's fields when the config is built."""

    def check(cfg: Mapping[str, Any]) -> str | None:
        value = cfg.get(name)
        unknown = sorted(str(k) for k in value if k not in keys) if isinstance(value, dict) else []
        if not unknown:
            return None
        return (
            f"{name} has key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(keys)} (TRL turns {name} into "
            "an object with these fields and refuses others). Fix: remove or rename them."
        )

    return Rule(name=f"{name}_keys", fields=(name,), description=f"{name} takes only the keys {', '.join(keys)}.",
                check=check)  # fmt: skip


def complete(algo: Algorithm) -> Algorithm:
    """The algorithm with every field of its TRL config class as an option: hand-written options first, then the
    mirrored ones, minus what the algorithm fixes and what is NOT_OFFERED."""
    taken = {o.name for o in algo.options} | {o.trl_name for o in algo.options if o.trl_name} | set(algo.fixed)
    fields = [
        (name, record)
        for name, record in trl_fields(algo.trl_config)
        if name not in taken
        and name not in NOT_OFFERED
        and name not in algo.not_offered
        and record["type"] != "unsupported"
    ]
    rules = tuple(_known_keys(name, tuple(record["keys"])) for name, record in fields if "keys" in record)
    return algo.model_copy(
        update={"options": (*algo.options, *(_option(n, r) for n, r in fields)), "rules": (*algo.rules, *rules)}
    )
