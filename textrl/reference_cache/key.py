"""The exact key of a dataset's reference log-probabilities inside a TRL trainer, taken when the run starts: the
weights the reference pass runs (for a LoRA policy whose fresh adapter adds nothing, the base weights alone), what
else its forward reads (class, config, buffers, dropout, attention), the tokenized rows, the reference-pass fields
and the library releases. `reference_cache` stores and reads entries under it; see `spec/reference_cache.py`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..checkpoints.atomic import write_json
from ..spec.reference_cache import REFERENCE_PASS_FIELDS
from .plan import FORMAT, digest_of, libraries


def _update(digest: Any, column: Any) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        digest.update(pc.list_value_length(column).fill_null(-1).to_numpy(zero_copy_only=False).tobytes())
        _update(digest, column.flatten())
    elif (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)) and column.null_count == 0:
        digest.update(str(column.type).encode())
        digest.update(column.to_numpy(zero_copy_only=False).tobytes())
    else:
        digest.update(json.dumps(column.to_pylist(), default=str).encode("utf-8"))


def tokenized_digest(dataset: Any) -> str:
    """SHA-256 of every column of a tokenized dataset, in row order (token ids hashed as arrays)."""
    digest = hashlib.sha256(json.dumps(dataset.column_names).encode())
    for batch in dataset.with_format("arrow").iter(batch_size=8192):
        for name in dataset.column_names:
            digest.update(name.encode())
            _update(digest, batch.column(name).combine_chunks())
    return digest.hexdigest()


def require_whole_weights(model: Any) -> None:
    """Refuse a model whose parameters DeepSpeed ZeRO-3 has partitioned: each process then holds empty tensors
    where the weights were, and TRL's `hash_module` of them names only the architecture, so two checkpoints of
    one architecture would share a key. (textrl-train and `decide` keep the cache off with ZeRO-3; this catches a
    model partitioned some other way.)"""
    if any(hasattr(p, "ds_id") for p in model.parameters()):
        raise RuntimeError(
            "reference cache: the reference weights are partitioned by DeepSpeed ZeRO-3, so they cannot be "
            "fingerprinted, and a key without them could serve another checkpoint's log-probabilities. Fix: set "
            "reference_cache: off (precompute_ref_log_probs still works), or load the model whole (ZeRO-2)."
        )


_LORA_WEIGHTS = ("lora_A", "lora_B", "lora_embedding_A", "lora_embedding_B")
_ADAPTER_PARTS = (*_LORA_WEIGHTS, "lora_magnitude_vector", "modules_to_save")
"""PEFT's containers of per-adapter weights: in a state-dict name the adapter's name follows one of them."""


def _owner(key: str, adapters: set[str]) -> tuple[str, str] | None:
    """(adapter, container) when `key` names an adapter's weight, e.g. ("ref", "lora_B") for
    "...q_proj.lora_B.ref.weight"; None for a base weight."""
    parts = key.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part in adapters:
            return part, parts[i - 1]
    return None


def _base_weights(state: dict[str, Any], adapters: set[str]) -> dict[str, Any] | None:
    """The base model's weights of a PEFT model under the plain model's names ("base_model.model.x.q_proj.
    base_layer.weight" is "x.q_proj.weight"), or None when a name holds an adapter's name in a place PEFT's LoRA
    layout does not explain (another PEFT method, or a base module that happens to share an adapter's name)."""
    base = {}
    for key, tensor in state.items():
        owner = _owner(key, adapters)
        if owner is None:
            plain = key.removeprefix("base_model.model.").replace(".base_layer.", ".")
            base[plain.replace(".original_module.", ".")] = tensor
        elif owner[1] not in _ADAPTER_PARTS:
            return None
    return base


def _adds_nothing(model: Any, name: str, state: dict[str, Any], adapters: set[str]) -> bool:
    """Whether adapter `name` of a PEFT model leaves every output exactly as the base model's: plain LoRA (no DoRA,
    no module copies, no trainable tokens) whose B matrices (and LoRA biases) are all zero, as PEFT initialises
    them. Its branch then adds exact zeros to each base layer's result."""
    from peft import LoraConfig

    config = model.peft_config[name]
    if type(config) is not LoraConfig or config.use_dora or config.modules_to_save:
        return False
    if getattr(config, "trainable_token_indices", None) or getattr(config, "alora_invocation_tokens", None):
        return False
    for key, tensor in state.items():
        owner = _owner(key, adapters)
        if owner is None or owner[0] != name:
            continue
        if owner[1] not in _LORA_WEIGHTS:
            return False
        if owner[1] in ("lora_B", "lora_embedding_B") and bool(tensor.count_nonzero()):
            return False
    return True


def _digest(named: dict[str, Any]) -> str:
    """TRL's `hash_module` over `named` tensors: in name order, each dtype then its bytes (bfloat16 and float8 as
    float32)."""
    import torch

    digest = hashlib.sha256()
    for _, tensor in sorted(named.items()):
        tensor = tensor.cpu()
        digest.update(str(tensor.dtype).encode())
        if tensor.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
            tensor = tensor.to(torch.float32)
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def reference_weights(trainer: Any, folder: Path) -> tuple[str, bool]:
    """The digest of the weights the reference pass runs: TRL's `hash_module` of the reference model, or of the
    policy when there is none (the precompute runs the policy's initial weights).

    A LoRA policy without a reference model runs the base model with TRL's frozen "ref" copy of the adapter (or
    with the adapters switched off). When that copy adds nothing (a fresh LoRA adapter: B is zero), the reference
    is the base model exactly, so the digest is the base weights' alone, as a full fine-tuning run of the same
    checkpoint would have it: runs that differ in LoRA rank, alpha, targets or seed share an entry. The base digest
    is remembered under TRL's digest of the whole model (`weights/`), so it is taken once per adapter. The second
    value says whether the digest is the base weights' alone."""
    reference = trainer.ref_model or trainer.model
    require_whole_weights(reference)
    weights = getattr(trainer, "_precompute_model_hash", None)
    if weights is None:
        from trl.trainer.utils import hash_module

        weights = hash_module(reference)
    if trainer.ref_model is not None:
        return str(weights), False
    from peft import PeftModel

    model = trainer.accelerator.unwrap_model(trainer.model)
    if not isinstance(model, PeftModel):
        return str(weights), False
    memo = folder / "weights" / f"{weights}.json"
    try:
        return str(json.loads(memo.read_text(encoding="utf-8"))["base"]), True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    state = model.state_dict()
    adapters = set(model.peft_config)
    named = _base_weights(state, adapters)
    if named is None or ("ref" in adapters and not _adds_nothing(model, "ref", state, adapters)):
        return str(weights), False
    base = _digest(named)
    memo.parent.mkdir(parents=True, exist_ok=True)
    write_json(memo, {"base": base})
    return base, True


_VOLATILE_CONFIG = (
    "_name_or_path",
    "transformers_version",
    "_commit_hash",
    "use_cache",
    "dtype",
    "torch_dtype",
    "_attn_implementation_autoset",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
)
"""Config entries that do not change a forward's log-probabilities (dtype is in the weights' digest)."""


def _stochastic(model: Any, config: dict[str, Any]) -> bool:
    """Whether a forward of `model` draws dropout: it is in train mode (TRL precomputes without switching to eval)
    and a dropout layer or a config's dropout rate is above zero. TRL's disable_dropout (on by default) zeroes the
    layers; a stored sample of a random pass is then keyed apart from the deterministic one."""
    import torch

    if not model.training:
        return False
    layers = any(isinstance(m, torch.nn.Dropout) and m.p > 0 for m in model.modules())
    rates = any("dropout" in k and isinstance(v, float) and v > 0 for k, v in config.items())
    return layers or rates


def _jsonable(value: Any) -> Any:
    """`value` as JSON the same in every process: sets (PEFT's target_modules) sorted, anything else unknown as
    its str()."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_jsonable(v) for v in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(getattr(value, "value", value))


def model_identity(trainer: Any, base_only: bool) -> dict[str, Any]:
    """What the reference forward depends on besides the weights' state dict: the model class (and, for remote
    code, its source), the config (rotary scaling, norm epsilon, soft-capping, sliding window...), the buffers
    (non-persistent ones such as rotary frequencies are not in the state dict), whether dropout is live, the attention
    implementation; unless the reference is the base model alone (`base_only`), a PEFT model's adapter settings
    (alpha scales a non-zero adapter) and which one is active."""
    import inspect

    from peft import PeftModel

    reference = trainer.ref_model or trainer.accelerator.unwrap_model(trainer.model)
    base: Any = reference.get_base_model() if isinstance(reference, PeftModel) else reference
    config = {k: v for k, v in _jsonable(base.config.to_dict()).items() if k not in _VOLATILE_CONFIG}
    kind = type(base)
    source = None
    if not kind.__module__.startswith("transformers."):  # remote code, or a user's own class
        try:
            source = hashlib.sha256(inspect.getsource(inspect.getmodule(kind)).encode()).hexdigest()  # type: ignore[arg-type]
        except (OSError, TypeError):
            source = "unreadable"
    buffers = {key.replace(".base_layer.", "."): b for key, b in base.named_buffers()}
    identity: dict[str, Any] = {
        "class": f"{kind.__module__}.{kind.__qualname__}",
        "source": source,
        "config": digest_of(config),
        "buffers": _digest(buffers),
        "random": _stochastic(reference, config),
        "attention": getattr(base.config, "_attn_implementation", None),
    }
    if isinstance(reference, PeftModel) and not base_only:
        identity["adapters"] = {n: _jsonable(c.to_dict()) for n, c in reference.peft_config.items()}
        identity["active"] = reference.active_adapter
    return identity


def exact_key(trainer: Any, dataset: Any, batch_size: int, folder: Path) -> tuple[str, dict[str, Any]]:
    """The key of one dataset's reference log-probs inside a TRL trainer: the reference weights
    (`reference_weights`), the tokenized rows, the reference-pass fields as TRL resolved them, the attention
    implementation and the library releases; for KTO also the batch its KL term pairs within."""
    weights, base_only = reference_weights(trainer, folder)
    args = trainer.args
    what: dict[str, Any] = {
        "format": FORMAT,
        "trainer": next(c.__name__ for c in type(trainer).__mro__ if c.__module__.startswith("trl.")),
        "libraries": libraries(),
        "weights": weights,
        "model": model_identity(trainer, base_only),
        "rows": tokenized_digest(dataset),
        "fields": {f: getattr(args, f) for f in REFERENCE_PASS_FIELDS if hasattr(args, f)},
    }
    if hasattr(trainer, "calculate_KL"):
        what["kl_pairs"] = {"calculate_kl": trainer.calculate_KL, "batch_size": batch_size}
    return digest_of(what), what
