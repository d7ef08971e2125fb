"""What a checkpoint was trained on, and what a resume may change.

Every checkpoint folder gets `textrl_fingerprint.json` (the manifest holds the same record for the run): the resolved
options, a digest of each dataset's rows, the rewards, the number of processes and the versions. Resuming compares it
with the run about to continue and sorts each difference by `spec.resume` (harmless ones are reported and allowed;
one that changes what is trained is refused unless the user says `--resume-changed`). A dataset is compared by its
contents, not by where it was read from: moving the file is harmless, editing it is not.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback

from ..errors import ConfigError, Problem
from ..rewards.checks import reward_name
from ..spec.resume import RESCHEDULES, resume_safe
from ..trl_support.env import version
from .atomic import write_json
from .files import FINGERPRINT
from .manifest import read_manifest

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

VERSIONS = ("textrl", "trl", "transformers", "torch", "accelerate", "peft", "datasets")


def dataset_digest(dataset: Any) -> dict[str, Any]:
    """Rows, columns and a SHA-256 of the rows in order (as JSON), which changes when any value or the order does."""
    digest = hashlib.sha256()
    for batch in dataset.with_format("arrow").iter(batch_size=4096):
        digest.update(json.dumps(batch.to_pylist(), sort_keys=True, default=str).encode("utf-8"))
    return {"rows": len(dataset), "columns": list(dataset.column_names), "sha256": digest.hexdigest()}


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def fingerprint(config: TextRLConfig, datasets: dict[str, Any], rewards: Any, processes: int) -> dict[str, Any]:
    """The record of a run a checkpoint carries. `rewards`: the trainer's TRLRewards (online algorithms) or None."""
    return {
        "config": _flat(config.model_dump(mode="json")),
        "datasets": {name: dataset_digest(ds) for name, ds in datasets.items() if ds is not None},
        "rewards": None
        if rewards is None
        else {"names": [reward_name(f) for f in rewards.funcs], "weights": rewards.weights},
        "processes": processes,
        "versions": {p: version(p) for p in VERSIONS},
    }


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def differences(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(changes that alter what is trained, harmless changes), each a line naming the field, old -> new."""
    refused: list[str] = []
    allowed: list[str] = []
    old_config, new_config = old.get("config", {}), new.get("config", {})
    for key in sorted(set(old_config) | set(new_config)):
        before, after = old_config.get(key, "(unset)"), new_config.get(key, "(unset)")
        if before == after:
            continue
        line = f"{key}: {_shown(before)} -> {_shown(after)}"
        if key.split(".")[0] in ("dataset", "eval_dataset") and key != "dataset.mixture":
            allowed.append(f"{line} (the rows are compared below, not the source)")
        elif key in RESCHEDULES:
            allowed.append(
                f"{line} (the learning-rate schedule is recomputed for the new length: the remaining steps follow a "
                "different schedule than a run planned this long from the start would)"
            )
        else:
            (allowed if resume_safe(key) else refused).append(line)
    for name in sorted(set(old.get("datasets", {})) | set(new.get("datasets", {}))):
        before, after = old.get("datasets", {}).get(name), new.get("datasets", {}).get(name)
        if before != after:
            line = f"{name} dataset: {_digest_text(before)} -> {_digest_text(after)}"
            (allowed if name == "eval" else refused).append(line)
    if old.get("rewards") != new.get("rewards"):
        refused.append(f"rewards: {_shown(old.get('rewards'))} -> {_shown(new.get('rewards'))}")
    if old.get("processes") != new.get("processes"):
        refused.append(
            f"processes: {old.get('processes')} -> {new.get('processes')}: the global batch and the data order change"
        )
    for package in sorted(set(old.get("versions", {})) | set(new.get("versions", {}))):
        before, after = old.get("versions", {}).get(package), new.get("versions", {}).get(package)
        if before != after:
            allowed.append(f"{package} {before} -> {after} (a different version may compute differently)")
    return refused, allowed


def _digest_text(digest: dict[str, Any] | None) -> str:
    if digest is None:
        return "none"
    return f"{digest['rows']} rows {', '.join(digest['columns'])} (sha256 {digest['sha256'][:12]})"


def stored_fingerprint(checkpoint: Path) -> tuple[dict[str, Any] | None, str]:
    """The fingerprint a checkpoint carries, else its run's manifest's; and where it came from."""
    try:
        return json.loads((checkpoint / FINGERPRINT).read_text(encoding="utf-8")), str(checkpoint / FINGERPRINT)
    except (OSError, ValueError):
        record = read_manifest(checkpoint.parent).get("fingerprint")
        return (record, f"{checkpoint.parent} manifest") if isinstance(record, dict) else (None, "")


def check_resume(checkpoint: Path, current: dict[str, Any], *, allow_changes: bool) -> None:
    """Refuse to resume `checkpoint` with a run that trains something else, listing every difference; say the
    harmless ones. `allow_changes` (--resume-changed) turns the refusal into a report."""
    stored, source = stored_fingerprint(checkpoint)
    if stored is None:
        print(
            f"textrl: {checkpoint} carries no fingerprint (an older TextRL wrote it); resuming unchecked",
            file=sys.stderr,
        )
        return
    refused, allowed = differences(stored, current)
    if allowed:
        print(f"textrl: resuming {checkpoint.name} with changes that do not alter training:", file=sys.stderr)
        print("\n".join(f"  - {line}" for line in allowed), file=sys.stderr)
    if refused and allow_changes:
        print(
            f"textrl: resuming {checkpoint.name} despite changes that alter training (--resume-changed):",
            file=sys.stderr,
        )
        print("\n".join(f"  - {line}" for line in refused), file=sys.stderr)
    elif refused:
        listed = "\n".join(f"      - {line}" for line in refused)
        raise ConfigError(
            [
                Problem(
                    "--resume",
                    f"{checkpoint} was written by a run that trained something else ({source}):\n{listed}\n    "
                    "Fix: resume with the checkpoint's settings and data, start a new run in another output_dir, "
                    "or pass --resume-changed (resume_changed=True) to continue anyway.",
                )
            ]
        )


class FingerprintCheckpoints(TrainerCallback):
    """Writes the run's fingerprint into each checkpoint folder once it is saved (main process)."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = record

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if folder.is_dir():
            write_json(folder / FINGERPRINT, self.record, indent=1)
