"""The reference cache: the reference model's log-probabilities of a dataset, computed once and reused by every
later run whose reference weights, tokenized rows and reference-pass settings match (see `spec/reference_cache.py`).

TRL does the computing: with `precompute_ref_log_probs=True` its DPO and KTO trainers run the reference over the
dataset once, batched, with a progress bar (`_precompute_ref_logps`), and read the log-probabilities from the batch
afterwards; with no `ref_model` they use the policy's initial weights, so no reference copy is ever loaded. TRL
keeps the result only in the datasets library's cache of that process (a temporary folder for in-memory data).
TextRL adds the key and the persistent store: `with_reference_cache` wraps `_precompute_ref_logps` so that a stored
result is returned without running the reference, and a computed one is stored, atomically, for the next run.

Layout of the cache folder:

    entries/<key>/data/       the log-prob columns, one row per dataset row (datasets' save_to_disk)
    entries/<key>/meta.json   what the key covers (written before the folder is renamed into place)
    forecast/<forecast>.json  the entry keys a run with these options, model files and rows used (the dry run's
                              forecast, checked before anything loads)
    weights/<digest>.json     for a LoRA policy whose fresh adapter adds nothing: the digest of its base weights,
                              under TRL's digest of the whole model (see `reference_weights`)

Whether a run uses the cache, and the forecast, are decided in `reference_plan` (before anything loads).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from ..spec.reference_cache import REFERENCE_PASS_FIELDS
from .reference_plan import FORMAT, Decision, digest_of, libraries


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


def _adds_nothing(model: Any, name: str, state: dict[str, Any]) -> bool:
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
        owner = _owner(key, set(model.peft_config))
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
    if named is None or ("ref" in adapters and not _adds_nothing(model, "ref", state)):
        return str(weights), False
    base = _digest(named)
    memo.parent.mkdir(parents=True, exist_ok=True)
    partial = memo.with_name(f".{memo.name}.{uuid.uuid4().hex}")
    partial.write_text(json.dumps({"base": base}), encoding="utf-8")
    os.replace(partial, memo)
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


def load_entry(folder: Path, key: str, rows: int) -> Any:
    """The stored columns for `key` (a datasets.Dataset of `rows` rows), or None when absent or unreadable."""
    entry = folder / "entries" / key
    if not (entry / "meta.json").is_file():
        return None
    from datasets import load_from_disk

    try:
        columns = load_from_disk(str(entry / "data"), keep_in_memory=True)  # no cache files written into it
    except Exception as exc:  # a damaged entry is recomputed, not trusted
        print(
            f"textrl: ignoring the damaged reference-cache entry {entry}: {type(exc).__name__}: {exc}", file=sys.stderr
        )
        return None
    if len(columns) != rows:
        print(
            f"textrl: ignoring the reference-cache entry {entry}: {len(columns)} rows, expected {rows}", file=sys.stderr
        )
        return None
    return columns


STALE = {".partial-": 86400.0, ".trl-": 7 * 86400.0}
"""Staging folders older than this (seconds since made) are a killed writer's: a partial entry is written in
seconds, TRL's scratch of a precompute (see `_textrl_compute`) is written at its end, so it gets a week."""


def _sweep_stale(entries: Path) -> None:
    now = time.time()
    for left in entries.glob(".*-*"):
        age = next((limit for prefix, limit in STALE.items() if left.name.startswith(prefix)), None)
        try:
            if age is not None and now - left.stat().st_mtime > age:
                shutil.rmtree(left, ignore_errors=True)
        except OSError:  # another process removed it first
            pass


def store_entry(folder: Path, key: str, columns: Any, what: dict[str, Any]) -> Path:
    """Write `columns` as the entry `key`: into a staging folder first, renamed into place when complete, so a
    reader sees a whole entry or none. When another process (a parallel sweep job) has stored the same key
    meanwhile, its entry is kept: the same key means the same log-probabilities. Only a damaged entry is
    replaced, and it is first moved aside, so the rename never lands on a folder a reader is using."""
    entries = folder / "entries"
    final = entries / key
    _sweep_stale(entries)
    staging = entries / f".partial-{uuid.uuid4().hex}"
    staging.mkdir(parents=True)
    try:
        columns.flatten_indices(keep_in_memory=True).save_to_disk(str(staging / "data"))
        meta = {"key": key, "rows": len(columns), "columns": list(columns.column_names), "written": time.time()}
        (staging / "meta.json").write_text(json.dumps(meta | {"covers": what}, indent=1), encoding="utf-8")
        for _ in range(3):
            if load_entry(folder, key, len(columns)) is not None:
                break  # stored by another process: keep theirs
            if final.exists() and load_entry(folder, key, len(columns)) is None:  # damaged: aside, then drop it
                aside = entries / f".partial-{uuid.uuid4().hex}"
                try:
                    os.replace(final, aside)
                except OSError:
                    continue  # it moved meanwhile: look again
                shutil.rmtree(aside, ignore_errors=True)
            try:
                os.replace(staging, final)
                break
            except OSError:  # another process renamed its entry into place first: look again
                continue
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def agreed(decision: Decision, processes: int) -> Decision:
    """Process 0's decision, on every process: each reads the forecast from disk, and a node-local cache or a
    parallel job writing it could let them disagree (then some would wait in collectives others never make)."""
    if processes <= 1:
        return decision
    from accelerate.utils import broadcast_object_list

    shared = [decision]
    broadcast_object_list(shared, from_process=0)
    return shared[0]  # type: ignore[no-any-return]


def cache_in_use(cfg: Any, train: Any, evaluation: Any) -> bool:
    """Whether this run (every process of it alike) takes its reference log-probs from the cache or fills it, so
    that no reference copy needs loading."""
    from ..config import processes
    from .reference_plan import decide

    count = processes()
    return agreed(decide(cfg, train, evaluation, count), count).active


def with_reference_cache(trainer_class: type, folder: Path, *, persist: bool = True) -> type:
    """`trainer_class` (TRL's DPOTrainer or KTOTrainer, or a subclass) whose precompute of reference log-probs
    reads and fills the cache in `folder`; `textrl_cache_used` on an instance maps each dataset name to (entry key,
    hit). With `persist=False` (TRL's precompute_ref_log_probs with the cache off) nothing is read or kept: a
    folder in `folder` (the run's output_dir) only carries TRL's result from process 0 to the others."""

    class ReferenceCached(trainer_class):  # type: ignore[valid-type,misc]
        def _precompute_ref_logps(self, dataset: Any, name: str, batch_size: int) -> Any:
            from accelerate.utils import broadcast_object_list
            from datasets import concatenate_datasets

            if not persist:
                return concatenate_datasets([dataset, self._textrl_compute(dataset, name, batch_size)], axis=1)
            key, what = exact_key(self, dataset, batch_size, folder)
            shared = [key]  # the weights hash may differ by rank (ZeRO-3 shards): rank 0's names the entry
            broadcast_object_list(shared, from_process=0)
            key = shared[0]
            if not hasattr(self, "textrl_cache_used"):
                self.textrl_cache_used = {}
            columns = load_entry(folder, key, len(dataset))
            hit = [columns is not None]
            broadcast_object_list(hit, from_process=0)
            if hit[0] and columns is None:
                raise RuntimeError(
                    f"reference cache: process {self.accelerator.process_index} cannot read the entry "
                    f"{folder / 'entries' / key} that process 0 found. Fix: put reference_cache_dir on a file "
                    "system every process sees, or set reference_cache: off."
                )
            if hit[0] and self.accelerator.is_main_process:
                print(
                    f"textrl: reference log-probs of the {name} set ({len(dataset)} rows) read from the "
                    f"reference cache ({folder / 'entries' / key[:12]}...); the reference model does not run",
                    file=sys.stderr,
                )
            if not hit[0]:
                columns = self._textrl_compute(dataset, name, batch_size, (key, what))
            self.textrl_cache_used[name] = (key, hit[0])
            return concatenate_datasets([dataset, columns], axis=1)

        def _textrl_compute(self, dataset: Any, name: str, batch_size: int, entry: Any = None) -> Any:
            """TRL's precompute; its result as columns held in memory (stored as `entry` = (key, what) first).

            TRL writes its result on process 0 into the datasets cache of `dataset` and every process reads it back:
            for in-memory data that is a temporary folder of each process's own, which the others cannot see (raw
            TRL fails there with more than one process). The file goes to a folder every process sees instead,
            named afresh for this run so that a file left by a killed run is never read."""
            from accelerate.utils import broadcast_object_list

            main = self.accelerator.is_main_process
            token = [uuid.uuid4().hex]
            broadcast_object_list(token, from_process=0)
            # a folder of its own: datasets writes cache files of its own beside the result
            scratch = folder / "entries" / f".trl-{token[0]}" if entry else folder / f".textrl-reference-{token[0]}"
            scratch.mkdir(parents=True, exist_ok=True)
            handoff = scratch / "logps.arrow"
            dataset._get_cache_file_path = lambda _fingerprint: str(handoff)
            try:
                result = super()._precompute_ref_logps(dataset, name, batch_size)
                added = result.select_columns([c for c in result.column_names if c not in dataset.column_names])
                if entry is None:
                    columns = added.flatten_indices(keep_in_memory=True)
                else:
                    if main:
                        where = store_entry(folder, entry[0], added, entry[1])
                        print(f"textrl: reference log-probs of the {name} set stored in {where}", file=sys.stderr)
                    self.accelerator.wait_for_everyone()
                    columns = load_entry(folder, entry[0], len(dataset))  # in memory: the hand-off file goes away
                    if columns is None:
                        raise RuntimeError(
                            f"reference cache: the entry {entry[0]} just written in {folder} is unreadable"
                        )
                self.accelerator.wait_for_everyone()
            finally:
                del dataset._get_cache_file_path
                if main:
                    shutil.rmtree(scratch, ignore_errors=True)
            return columns

    ReferenceCached.__name__ = ReferenceCached.__qualname__ = trainer_class.__name__
    return ReferenceCached
