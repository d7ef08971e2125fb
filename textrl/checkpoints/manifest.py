"""The run manifest: what is needed to reproduce a run, written to output_dir before training starts."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..trl_support.env import PACKAGES, version
from .atomic import write_json
from .files import LOG_HISTORY, MANIFEST, REPORT_SVG

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig


def trl_changes(trl_config: Any) -> dict[str, Any]:
    """The TRL config fields whose values differ from the TRL class's declared defaults.

    Compares with the dataclass defaults instead of building a second config: building TrainingArguments resets
    accelerate's shared state, which would undo a multi-process setup.
    """
    changed = {}
    for field in dataclasses.fields(trl_config):
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            continue
        value: Any = getattr(trl_config, field.name, None)
        plain = getattr(value, "value", value)  # enums such as IntervalStrategy compare by their value
        if field.name != "output_dir" and value != default and plain != default:
            changed[field.name] = value
    return json.loads(json.dumps(changed, default=str))


def logging_targets(trl_config: Any, output_dir: str) -> dict[str, Any]:
    """Where this run's logs go: the report_to integrations (with their folders or projects) and TextRL's own files."""
    raw = trl_config.report_to
    targets = [raw] if isinstance(raw, str) else list(raw or [])
    targets = [t for t in targets if t != "none"]
    out = Path(output_dir)
    where: dict[str, Any] = {
        "report_to": targets,
        "log_history": str(out / LOG_HISTORY),
        "report": str(out / REPORT_SVG),
        "manifest": str(out / MANIFEST),
    }
    if "tensorboard" in targets:  # transformers' TensorBoardCallback: this folder, one run subfolder per run
        where["tensorboard"] = os.environ.get("TENSORBOARD_LOGGING_DIR") or str(out / "runs")
    if "wandb" in targets:
        where["wandb"] = {"project": os.environ.get("WANDB_PROJECT", "huggingface"), "run_name": trl_config.run_name,
                          "entity": os.environ.get("WANDB_ENTITY")}  # fmt: skip
    if "trackio" in targets:
        where["trackio"] = {"project": getattr(trl_config, "project", None), "run_name": trl_config.run_name}
    return where


def write_manifest(
    output_dir: str,
    *,
    config: TextRLConfig,
    trl_config: Any,
    trl_changes: dict[str, Any],
    datasets: dict[str, Any],
    processes: int = 1,
    fingerprint: dict[str, Any] | None = None,
    base_quantization: str | None = None,
    engine: str | None = None,
    parent: dict[str, Any] | None = None,
) -> Path:
    path = Path(output_dir) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    earlier = read_manifest(path.parent)
    previous = [*earlier.pop("previous", []), earlier] if earlier else []
    body = {
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "textrl_config": config.model_dump(mode="json"),
        "engine": engine,  # what the run really ran as: "DeepSpeed ZeRO-3, 2 processes", "DDP, 2 processes", ...
        "base_quantization": base_quantization,  # the trained model's bitsandbytes weights (textrl-merge reads it)
        "trl_config_class": f"{type(trl_config).__module__}.{type(trl_config).__name__}",
        "trl_config_changes": trl_changes,
        "processes": processes,
        "logging": logging_targets(trl_config, output_dir),
        "versions": {p: version(p) for p in PACKAGES} | {"python": platform.python_version()},
        "datasets": {
            name: {"rows": len(ds), "columns": list(ds.column_names), "fingerprint": getattr(ds, "_fingerprint", None)}
            for name, ds in datasets.items()
            if ds is not None
        },
        "fingerprint": fingerprint,  # what --resume compares (textrl.checkpoints.fingerprint)
        "previous": previous,  # the manifests of the runs this one continues (resumed or retrained here)
        "parent": parent,  # the run whose output this one started from (model: out/sft), see parent_run
    }
    write_json(path, body, indent=2)  # never a half-written manifest
    return path


def parent_run(source: str | None) -> dict[str, Any] | None:
    """The run a model was loaded from, when it is a TextRL run's output folder (its manifest beside the weights or
    the adapter): where it is, its algorithm and when it was written. None for any other model."""
    found = read_manifest(source) if source else {}
    if not found or source is None:
        return None
    config = found.get("textrl_config") or {}
    return {"path": str(Path(source).resolve()), "algo": config.get("algo"), "written": found.get("written"),
            "model": (config.get("model") or {}).get("name")}  # fmt: skip


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the run in `folder`, or {} when there is none (or it cannot be read)."""
    try:
        body = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def check_same_algorithm(run_dir: str | os.PathLike[str], algo: str) -> None:
    """Refuse to resume a checkpoint that another algorithm wrote: its optimizer state, reference and advantages
    mean something else (a GRPO checkpoint continued as RLOO trains neither)."""
    written = read_manifest(run_dir).get("textrl_config", {}).get("algo")
    if written is None or written == algo:
        return
    from ..errors import ConfigError, Problem

    raise ConfigError(
        [
            Problem(
                "algo",
                f"--resume: {run_dir} holds a run of algo={written!r} ({MANIFEST}), and this config says "
                f"algo={algo!r}; continuing one algorithm's checkpoint with another is not a resume. Fix: set "
                f"algo: {written} to continue that run, or start the {algo} run in a new output_dir.",
            )
        ],
        algo=algo,
    )
