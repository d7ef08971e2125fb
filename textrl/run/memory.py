"""A rough memory plan for a run, before any model is loaded: weights, reference model, optimizer state, vLLM.

Parameter counts come from a local checkpoint's safetensors headers (exact) or its config.json (estimated for
decoder-only transformers); hub models that are not on disk are reported as unknown. No torch is imported.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..validation.view import online, options, preference

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

GIB = 1024**3


def parameters_on_disk(model_dir: Path) -> int | None:
    """Exact parameter count from the safetensors headers of a local checkpoint, or None."""
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for file in files:
        try:
            with file.open("rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                header = json.loads(handle.read(min(size, file.stat().st_size)))
            for name, entry in header.items():
                if name != "__metadata__":
                    count = 1
                    for dim in entry["shape"]:
                        count *= dim
                    total += count
        except (struct.error, ValueError, TypeError, KeyError, AttributeError, OSError):
            return None  # not a safetensors file (cut off, or something else): the plan falls back to config.json
    return total


def parameters_from_config(config: dict[str, Any]) -> int | None:
    """Estimated parameters of a decoder-only transformer from its config.json fields, or None."""
    try:
        hidden, layers, vocab = config["hidden_size"], config["num_hidden_layers"], config["vocab_size"]
    except KeyError:
        return None
    heads = config.get("num_attention_heads", 1)
    kv = config.get("num_key_value_heads", heads)
    inner = config.get("intermediate_size", 4 * hidden)
    attention = 2 * hidden * hidden + 2 * hidden * (hidden * kv // heads)
    per_layer = attention + 3 * hidden * inner + 2 * hidden
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings", True) else 2)
    return int(layers * per_layer + embeddings)


def embedding_parameters(model_dir: Path) -> int:
    """Parameters of the token embeddings and the output head (one matrix when tied) per config.json, else 0:
    bitsandbytes quantizes linear layers only, so these stay in full precision in a 4/8-bit model."""
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        return int(config["vocab_size"] * config["hidden_size"] * (1 if config.get("tie_word_embeddings", True) else 2))
    except (OSError, ValueError, KeyError, TypeError):
        return 0


SMOLLM2_PARAMETERS = 134_515_008
"""textrl:smollm2 as converted (tied embeddings counted once)."""
SMOLLM2_EMBEDDINGS = 49_152 * 576
"""textrl:smollm2's token embeddings (vocabulary x hidden; tied to the output head)."""


def count_parameters(name: str, base_dir: Path) -> tuple[int | None, str]:
    """(parameters, how they were found) for a model section's name."""
    path = Path(name) if Path(name).is_absolute() else base_dir / name
    if not path.is_dir():
        return None, "not on disk (a hub id); downloaded at start"
    exact = parameters_on_disk(path)
    if exact is not None:
        return exact, "counted from the safetensors headers"
    config = path / "config.json"
    if config.is_file():
        guess = parameters_from_config(json.loads(config.read_text()))
        if guess is not None:
            return guess, "estimated from config.json"
    return None, "unknown (no weights or config.json)"


def device_memory() -> tuple[float | None, str]:
    """(GiB, what) of the first visible GPU per nvidia-smi, else of this machine's RAM."""
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(
                ["nvidia-smi", "--query-gpu=memory.total,name", "--format=csv,noheader,nounits"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
            ).stdout.splitlines()
            mib, gpu = out[0].split(",", 1)
            return float(mib) / 1024, f"GPU {gpu.strip()}"
        except (subprocess.SubprocessError, OSError, ValueError, IndexError):
            pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB, "RAM (no GPU visible)"
    except (ValueError, OSError):
        return None, "unknown device"


@dataclass
class Plan:
    """Bytes per part of the run."""

    parameters: int
    policy: float
    reference: float
    trainable: int
    optimizer: float
    vllm_share: float

    @property
    def total(self) -> float:
        return self.policy + self.reference + self.optimizer


def plan(cfg: TextRLConfig, params: int, device_gib: float | None, unquantized: int = 0) -> Plan:
    """Weights in their load precision, a reference copy when one is loaded, AdamW state and gradients in fp32
    for the trainable parameters (LoRA: about 2·r·hidden per adapted matrix, approximated as 1% per r=16).
    `unquantized`: parameters a 4/8-bit model keeps in full precision (embeddings and head)."""
    typed = options(cfg)
    model = typed.model
    if model is None:
        raise ValueError("a memory plan needs the config's model section")
    full = 2.0 if typed.bf16 is not False and not typed.fp16 else 4.0
    per = {"4bit": 0.5, "8bit": 1.0}.get(model.quantization or "", full)
    kept = min(unquantized, params) if model.quantization else 0
    family = cfg.algorithm().family
    peft = model.peft
    trainable = int(params * 0.01 * peft.r / 16) if peft else params
    rollout, offline = online(cfg), preference(cfg)
    with_beta = rollout or offline
    needs_reference = family.holds_reference(beta=with_beta.beta if with_beta else 0.0, peft=bool(peft))
    # precomputed reference log-probs (TRL's option, or the reference cache switched on) need no reference copy
    if offline is not None and (offline.precompute_ref_log_probs or offline.reference_cache == "on"):
        needs_reference = False
    reference = params * (per if model.quantization is None else 2.0) if needs_reference else 0.0
    optimizer = trainable * (8 + 4)  # AdamW moments + gradients, fp32
    vllm = rollout.vllm_gpu_memory_utilization if rollout is not None and rollout.use_vllm else 0.0
    vllm_share = vllm * device_gib * GIB if (vllm and device_gib) else 0.0
    return Plan(params, (params - kept) * per + kept * full, reference, trainable, optimizer, vllm_share)


def _unless_cached(cfg: TextRLConfig, p: Plan) -> str:
    if p.reference and (offline := preference(cfg)) is not None and offline.reference_cache == "auto":
        return " (none if the reference cache is used: see its line below)"
    return ""


def describe_plan(
    cfg: TextRLConfig, base_dir: Path, device_gib: float | None = None, device_what: str = ""
) -> list[str]:
    """The dry run's memory lines, with a warning when the run will not fit the device."""
    model = options(cfg).model
    if model is None:
        raise ValueError("a memory plan needs the config's model section")
    name = model.name
    if name.startswith("textrl:tiny"):
        return [f"memory: {name} is TextRL's built-in tiny model (about 140k parameters, under 10 MB in all)"]
    folder = Path(name) if Path(name).is_absolute() else base_dir / name
    unquantized = 0
    if name == "textrl:smollm2":
        from ..models import builtin_path

        folder = builtin_path(name) or folder
        params, how = count_parameters(str(folder), base_dir)
        unquantized = embedding_parameters(folder) or SMOLLM2_EMBEDDINGS
        if params is None:
            params, how = SMOLLM2_PARAMETERS, "SmolLM2-135M-Instruct, not fetched yet"
    elif name.endswith(".gguf") or model.gguf_file:
        params, how = None, "not counted in a dry run (a GGUF file is dequantized at start)"
    else:
        params, how = count_parameters(name, base_dir)
    if params is None:
        return [f"memory: {name}: parameters {how}; no estimate"]
    if device_gib is None:
        device_gib, device_what = device_memory()
    p = plan(cfg, params, device_gib, unquantized or embedding_parameters(folder))
    total = (p.total + p.vllm_share) / GIB
    lines = [
        f"memory estimate ({params / 1e6:.1f}M parameters, {how}): policy {p.policy / GIB:.2f} GiB, reference "
        f"{p.reference / GIB:.2f} GiB{_unless_cached(cfg, p)}, optimizer state + gradients {p.optimizer / GIB:.2f} GiB "
        f"({p.trainable / 1e6:.2f}M trainable), vLLM {p.vllm_share / GIB:.2f} GiB; about {total:.2f} GiB before "
        "activations"
    ]
    if device_gib is not None:
        lines.append(f"device: {device_what}, {device_gib:.1f} GiB")
        if p.total + p.vllm_share > 0.9 * device_gib * GIB:
            lines.append(
                f"WARNING: the estimate ({(p.total + p.vllm_share) / GIB:.1f} GiB) exceeds 90% of {device_what} "
                f"({device_gib:.1f} GiB). Fix: LoRA (model.peft), quantization 4bit, a smaller model, "
                "vllm_gpu_memory_utilization, or more devices (distributed)."
            )
    return lines
