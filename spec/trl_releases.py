"""The TRL releases TextRL supports, one snapshot of TRL's config classes each (`trl_snapshots/<release>.json`, taken
by `python -m textrl.codegen --snapshot` with that release installed), and what a config meets on each: a field or a
value an older release lacks, a field it names differently, a default that differs from the newest release.

The options mirror the newest release; an older release's snapshot is read only when that release is installed (or
when the codegen writes the docs). Pydantic and the standard library only.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .grammar import annotation

RELEASES = ("1.13", "1.14", "1.15", "1.16")
"""TRL minor releases TextRL supports, oldest first. The options mirror the newest; CI trains on each."""

CI_PINS = {"1.13": "1.13.0", "1.14": "1.14.1", "1.15": "1.15.0", "1.16": "1.16.0"}
"""The patch release CI installs for each supported release (scripts/trl_release.sh)."""

NEWEST = RELEASES[-1]

TRL_CONFIGS = (
    "trl.GRPOConfig",
    "trl.RLOOConfig",
    "trl.DPOConfig",
    "trl.KTOConfig",
    "trl.RewardConfig",
    "trl.SFTConfig",
)
"""The TRL config classes a snapshot records: those behind the algorithms (a test keeps the two the same). Kept as
data here, not read from the algorithms, so that a snapshot can be taken for a class before an algorithm uses it."""

FOLDER = Path(__file__).parent / "trl_snapshots"

RENAMED_FIELDS: dict[str, dict[str, str]] = {}
"""{release: {field as the newest release names it: the name in that release}}, applied when the TRL config is
built. Between 1.13 and 1.16 TRL renamed no field of the config classes TextRL builds (their snapshots show the same
names); a rename in a later release goes here, and the drift test of that release proves it."""

VALUES_SINCE: dict[str, dict[str, str]] = {}
"""{option: {value: the first supported release that takes it}} for values of hand-written choices that TRL's config
does not list as choices (loss types are a plain list[str] there). The drift test of each release reads the loss
names out of that release's trainer source; between 1.13 and 1.16 they are the same, so the table is empty."""

DEFAULT_CHANGES: dict[str, str] = {
    "pad_to_multiple_of": "TRL 1.16's 'auto' pads to a multiple of 128 on AWS Neuron only; elsewhere it does not pad, "
    "as null did before, so training is the same off Neuron",
    "loss_type": "SFT only: TRL 1.13 and 1.14 default to chunked_nll (the negative log-likelihood computed over "
    "chunks of the vocabulary, to save memory), 1.15 to nll (computed through a fused LM head); TextRL's option passes "
    "nll unless told otherwise, so an SFT run trains the same loss on every release",
    "router_aux_loss_coef": "Only Mixture-of-Experts models have this loss: before TRL 1.14 it was weighted 0.001, "
    "from 1.14 the model config's own coefficient is used (and setting it on a model without experts fails)",
}
"""Every field whose TRL default differs between supported releases, with what the difference does to a run (the
dry run prints it when the installed release is not the newest). A test keeps it complete against the snapshots."""


def window_text() -> str:
    """'1.13 to 1.16 (CI trains on 1.13.0, 1.14.1, 1.15.0, 1.16.0)'."""
    return f"{RELEASES[0]} to {NEWEST} (CI trains on {', '.join(CI_PINS[r] for r in RELEASES)})"


def release_of(version: str | None) -> str | None:
    """The supported release a TRL version belongs to ('1.13.0' -> '1.13'); None when it is outside the window."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    release = f"{found.group(1)}.{found.group(2)}" if found else None
    return release if release in RELEASES else None


@functools.cache
def snapshot(release: str) -> dict[str, Any]:
    """A supported release's snapshot: see textrl/codegen/trl_snapshot.py for the format."""
    return json.loads((FOLDER / f"{release}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def trl_name(release: str, name: str) -> str:
    """The name a release gives a field the newest release calls `name`."""
    return RENAMED_FIELDS.get(release, {}).get(name, name)


@functools.cache
def _class_fields(release: str, trl_config: str) -> dict[str, str]:
    """{field name in that release: declaring class} for a TRL config class."""
    entries = snapshot(release)["classes"].get(trl_config, [])
    return {entry.partition(".")[2]: entry.partition(".")[0] for entry in entries}


def class_field_names(release: str, trl_config: str) -> frozenset[str]:
    """The init fields of a TRL config class in a release, as that release names them."""
    return frozenset(_class_fields(release, trl_config))


def field_record(release: str, trl_config: str, name: str) -> dict[str, Any] | None:
    """The snapshot record of a field (named as the newest release names it) in a release's TRL config class; None
    when that release's class lacks it."""
    old = trl_name(release, name)
    owner = _class_fields(release, trl_config).get(old)
    return None if owner is None else snapshot(release)["fields"][owner][old]  # type: ignore[no-any-return]


def first_release_with(trl_config: str, name: str) -> str | None:
    """The oldest supported release whose config class has the field; None when none has it."""
    return next((r for r in RELEASES if field_record(r, trl_config, name) is not None), None)


@functools.cache
def _adapter(grammar: str, choices: tuple[Any, ...], items: tuple[Any, ...]) -> TypeAdapter[Any]:
    return TypeAdapter(annotation({"type": grammar, "choices": choices, "items": items}))


def accepts(release: str, trl_config: str, name: str, value: Any) -> bool:
    """Whether a release's field takes this value (by its type and choices as the snapshot records them)."""
    record = field_record(release, trl_config, name)
    if record is None:
        return False
    if record["type"] in ("unsupported", "any"):
        return True
    adapter = _adapter(record["type"], tuple(record.get("choices", ())), tuple(record.get("items", ())))
    try:
        adapter.validate_python(value)
    except ValidationError:
        return False
    return True


def first_accepting(trl_config: str, name: str, value: Any) -> str | None:
    """The oldest supported release from which on every release takes the value; None when the newest does not."""
    first = None
    for release in reversed(RELEASES):
        if not accepts(release, trl_config, name, value):
            break
        first = release
    return first


def allowed_text(record: dict[str, Any]) -> str:
    """What a snapshot record's type allows, in the words the error messages use ('int | null', 'sigmoid, ipo')."""
    if record.get("choices"):
        others = [p for p in record["type"].split(" | ") if p not in ("str", "None")]
        names = [repr(c) for c in record["choices"]] + others + (["null"] if "None" in record["type"] else [])
        return ", ".join(names)
    return record["type"].replace("None", "null")


def default_differences(trl_config: str, release: str) -> dict[str, tuple[Any, Any]]:
    """{field: (default in `release`, default in the newest release)} for the fields whose default differs."""
    out = {}
    for name in _class_fields(NEWEST, trl_config):
        old, new = field_record(release, trl_config, name), field_record(NEWEST, trl_config, name)
        if old is not None and new is not None and old["default"] != new["default"]:
            out[name] = (old["default"], new["default"])
    return out


def availability(trl_config: str, name: str) -> str | None:
    """What of a field the older supported releases lack, for the docs and the JSON Schema ("needs TRL >= 1.15",
    "'auto' needs TRL >= 1.16", "null needs TRL >= 1.14"), and a default that changed; None when every supported
    release has the field, its values and its default alike."""
    first = first_release_with(trl_config, name)
    if first is None:
        return None
    if first != RELEASES[0]:
        return f"needs TRL >= {first}"
    newest = field_record(NEWEST, trl_config, name) or {}
    notes = []
    for part in newest["type"].split(" | "):
        since = _since(trl_config, name, lambda record, part=part: part in record["type"].split(" | "))
        if since != RELEASES[0]:
            notes.append(f"{_label(part, newest)} needs TRL >= {since}")
    for choice in newest.get("choices", ()):
        since = _since(trl_config, name, lambda record, choice=choice: choice in record.get("choices", ()))
        if since != RELEASES[0]:
            notes.append(f"{choice!r} needs TRL >= {since}")
    since = _since(trl_config, name, lambda record: record["default"] == newest["default"])
    if since != RELEASES[0]:
        old = field_record(RELEASES[RELEASES.index(since) - 1], trl_config, name) or {}
        notes.append(f"default {json.dumps(old.get('default'))} before TRL {since}")
    return "; ".join(notes) or None


def _since(trl_config: str, name: str, holds: Any) -> str:
    """The oldest release from which on `holds(record)` is true in every supported release (the newest at worst)."""
    since = NEWEST
    for release in reversed(RELEASES[:-1]):
        record = field_record(release, trl_config, name)
        if record is None or not holds(record):
            break
        since = release
    return since


def _label(part: str, record: dict[str, Any]) -> str:
    if part == "None":
        return "null"
    if part == "str" and isinstance(record.get("default"), str):
        return repr(record["default"])  # pad_to_multiple_of: 'auto', the one string TRL 1.16 takes
    return {"str": "a string", "dict": "a mapping"}.get(part, f"a {part.partition('[')[0]}")
