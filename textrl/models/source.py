"""Whether a model reference can be loaded, decided before anything loads (no torch, no transformers).

transformers finds out late and says it badly: a folder without weights, a safetensors file cut short by an
interrupted copy, a folder without config.json or without tokenizer files each fail after the imports (seconds),
a local path that does not exist reads as a malformed hub id ("Repo id must be in the form ..."), and a hub id on a
machine that cannot reach the hub retries for over a minute and ends in a traceback. `check_model_reference` looks
at the files themselves: the dry run and `load_model` call it, so both say the same thing.
"""

from __future__ import annotations

import json
import os
import re
import socket
import struct
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..errors import ConfigError, Problem

_WEIGHTS = re.compile(r"^(model|pytorch_model|tf_model|flax_model)(-\d{5}-of-\d{5})?\.(safetensors|bin|h5|msgpack)$")
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
_ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.json",
    "vocab.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.tiktoken",
)
"""Files any of which gives transformers a tokenizer (fast or slow); tokenizer_config.json alone does not."""
_TRUE = ("1", "true", "yes", "on")


def _problem(field: str, message: str) -> ConfigError:
    return ConfigError([Problem(field, message)])


def looks_like_path(name: str) -> bool:
    """A reference that can only mean a local path: a hub id is `name` or `org/name`, never absolute, relative with
    ./ or ../, under ~, with a backslash, deeper than one slash, or a .gguf file."""
    return (
        os.path.isabs(name)
        or name.startswith((".", "~"))
        or "\\" in name
        or name.count("/") > 1
        or name.endswith((".gguf", "/"))
    )


def safetensors_problem(path: Path) -> str | None:
    """Why a .safetensors file cannot be read (not one, or cut short), from its header and size; None when whole."""
    size = path.stat().st_size
    try:
        with path.open("rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size - 8:
                raise ValueError
            header = json.loads(handle.read(length))
        end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    except (struct.error, ValueError, KeyError, TypeError, IndexError):
        return f"{path.name} is not a readable safetensors file ({size} bytes; its header is damaged or cut short)"
    if size < 8 + length + end:
        return f"{path.name} is cut short: {size} of {8 + length + end} bytes (an interrupted copy, download or save)"
    return None


def _weights_problem(folder: Path) -> str | None:
    """Why the weights in `folder` cannot be loaded, or None."""
    for index in _INDEXES:
        if (folder / index).is_file():
            try:
                shards = sorted(set(json.loads((folder / index).read_text(encoding="utf-8"))["weight_map"].values()))
            except (OSError, ValueError, KeyError, AttributeError):
                return f"{index} is not a readable weight index"
            missing = [s for s in shards if not (folder / s).is_file()]
            if missing:
                return f"{index} lists {len(shards)} shard(s), and {', '.join(missing[:3])} are missing"
            found = [folder / s for s in shards]
            break
    else:
        found = sorted(p for p in folder.iterdir() if _WEIGHTS.match(p.name))
        if not found:
            return "it holds no weights (model.safetensors, pytorch_model.bin, or their shards with an index)"
    for path in found:
        if path.suffix == ".safetensors" and (problem := safetensors_problem(path)):
            return problem
    return None


def adapter_base(folder: str | Path) -> str | None:
    """The base model a LoRA adapter folder (adapter_config.json, no config.json) was trained on; None for any other
    reference, or an adapter config that names none."""
    path = Path(folder)
    if not (path / "adapter_config.json").is_file() or (path / "config.json").is_file():
        return None
    try:
        base = json.loads((path / "adapter_config.json").read_text(encoding="utf-8")).get("base_model_name_or_path")
    except (OSError, ValueError, AttributeError):
        return None
    return base if isinstance(base, str) and base.strip() else None


def check_folder(folder: Path, field: str, *, tokenizer: bool = True) -> str:
    """Refuse a model folder that from_pretrained would fail on; returns what it holds, for the dry run."""
    names = {p.name for p in folder.iterdir()}
    if "adapter_config.json" in names and "config.json" not in names:
        weights = [n for n in _ADAPTER_WEIGHTS if n in names]
        if not weights:
            raise _problem(
                field,
                f"{folder} holds a LoRA adapter config but no adapter weights ({' or '.join(_ADAPTER_WEIGHTS)}). "
                "Fix: point at the complete adapter folder (the output_dir of a LoRA run).",
            )
        if weights[0].endswith(".safetensors") and (problem := safetensors_problem(folder / weights[0])):
            raise _problem(field, f"{folder}: {problem}. Fix: copy or save the adapter again.")
        base = adapter_base(folder)
        if base is None:
            raise _problem(
                field,
                f"{folder}/adapter_config.json names no base model (base_model_name_or_path), so the adapter has "
                "nothing to load onto. Fix: write the base model's hub id or folder there.",
            )
        check_model_reference(base, f"{field} (the base model in {folder}/adapter_config.json)", tokenizer=False)
        what = f"a LoRA adapter on {base}"
    else:
        if "config.json" not in names:
            raise _problem(
                field,
                f"{folder} has no config.json, so it is not a model saved with save_pretrained (it holds "
                f"{', '.join(sorted(names)[:6]) or 'nothing'}). Fix: point at the folder that holds config.json and "
                "the weights, or save the model with model.save_pretrained(folder).",
            )
        try:
            json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _problem(field, f"{folder}/config.json cannot be read as JSON ({exc}). Fix: save it again.") from None
        problem = _weights_problem(folder)
        if problem:
            raise _problem(field, f"{folder}: {problem}. Fix: copy the model folder again, or save it with "
                           "model.save_pretrained(folder).")  # fmt: skip
        what = "a model"
    if tokenizer and "tokenizer.json" in names:
        from tokenizers import Tokenizer  # Rust, imports in milliseconds; transformers reads the file with it

        try:
            Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # the library raises a bare Exception for a malformed file
            raise _problem(
                field,
                f"{folder}/tokenizer.json cannot be read by the tokenizers library ({exc}). Fix: save the "
                "tokenizer again: tokenizer.save_pretrained(folder).",
            ) from None
    if tokenizer and not names & set(TOKENIZER_FILES):
        raise _problem(
            field,
            f"{folder} has no tokenizer files ({', '.join(TOKENIZER_FILES[:4])}, ...). Fix: save the tokenizer "
            "beside the model: tokenizer.save_pretrained(folder).",
        )
    return f"{folder}: {what} saved with save_pretrained"


def hub_cache() -> Path:
    """The hub's local cache folder, as huggingface_hub computes it (HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME)."""
    import huggingface_hub.constants as hub  # light: the package's top level loads lazily

    return Path(hub.HF_HUB_CACHE)


def _cached(repo: str, revision: str | None) -> bool:
    """Whether the hub cache holds a snapshot of `repo` (at `revision`) with its config.json."""
    folder = hub_cache() / f"models--{repo.replace('/', '--')}"
    snapshots = folder / "snapshots"
    if not snapshots.is_dir():
        return False
    wanted = revision or "main"
    ref = folder / "refs" / wanted
    commit = ref.read_text().strip() if ref.is_file() else wanted
    candidates = [snapshots / commit] if (snapshots / commit).is_dir() else []
    if revision is None and not candidates:
        candidates = [p for p in snapshots.iterdir() if p.is_dir()]
    return any((p / "config.json").exists() or (p / "adapter_config.json").exists() for p in candidates)


def _offline() -> str | None:
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().lower() in _TRUE:
            return name
    return None


def _reachable() -> tuple[bool, str]:
    """Whether the hub's host answers a TCP connection within 3 s (and its name, for the message)."""
    import huggingface_hub.constants as hub

    url = urlparse(hub.ENDPOINT)
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=3).close()
        return True, host
    except OSError:
        return False, host


def check_hub_id(name: str, field: str, revision: str | None = None) -> str:
    """Refuse a hub id that cannot be fetched here: not in the local cache, and the hub off or out of reach."""
    if _cached(name, revision):
        return f"{name}: from the local hub cache ({hub_cache()})"
    offline = _offline()
    if offline:
        why = f"{offline}={os.environ[offline]} keeps transformers off the hub"
    else:
        reachable, host = _reachable()
        if reachable:
            return f"{name}: a hub id, fetched from the hub at start"
        why = f"the hub ({host}) cannot be reached from this machine"
    folder = f" (and no folder {name} exists here)" if "/" in name else ""
    raise _problem(
        field,
        f"{name!r} is a hub id that is not in the local cache ({hub_cache()}){folder}, and {why}. Fix: give a local "
        "folder saved with save_pretrained (download it where the hub is reachable and copy it here), run where the "
        "hub is reachable, or use a built-in model (textrl:tiny, textrl:smollm2).",
    )


def check_model_reference(
    name: Any, field: str = "model", *, gguf_file: str | None = None, revision: str | None = None,
    tokenizer: bool = True
) -> str:  # fmt: skip
    """Refuse a model reference that cannot be loaded here, with what is wrong and the fix; returns a line saying
    what it is. Built-in names (textrl:...) are checked where they are built."""
    if not isinstance(name, str) or not name.strip():
        raise _problem(
            field,
            f"got {name!r}; allowed: a hub id (org/name), a local folder saved with save_pretrained, a .gguf "
            "file, or a built-in model (textrl:tiny, textrl:smollm2). Fix: pass one of these.",
        )
    if name.startswith("textrl:"):
        return f"{name}: a built-in model"
    local = Path(name).expanduser()
    if gguf_file is not None:
        local = local / gguf_file
    if local.is_file():
        if local.suffix.lower() != ".gguf":
            raise _problem(
                field,
                f"{local} is a file; a model is a folder saved with save_pretrained (or a .gguf file). Fix: "
                "point at the folder that holds config.json.",
            )
        with local.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                raise _problem(field, f"{local} is not a GGUF file (it does not start with GGUF). Fix: copy it again.")
        return f"{local}: a GGUF file"
    if local.is_dir():
        return check_folder(local, field, tokenizer=tokenizer)
    if gguf_file is not None or looks_like_path(name):
        raise _problem(
            field,
            f"{local} does not exist. Fix: check the path (relative paths are read from the working directory "
            f"{Path.cwd()}{' and the config file' if field == 'model.name' else ''}).",
        )
    return check_hub_id(name, field, revision)


def resolve_local(name: str, base_dir: Path, gguf_file: str | None = None) -> str:
    """A relative model reference as a path the run can load: from the working directory, else from the config's
    folder (where dataset paths are read from too); anything else (a hub id, a built-in) as it is. With `gguf_file`,
    the folder that holds that file."""
    if name.startswith("textrl:") or os.path.isabs(name):
        return name
    wanted = Path(name).expanduser() / gguf_file if gguf_file else Path(name).expanduser()
    if wanted.exists():
        return name
    beside = base_dir / name
    return str(beside) if (beside / gguf_file if gguf_file else beside).exists() else name


def check_reward_model(reference: str, field: str = "reward.model") -> str:
    """Refuse a reward model that TRL could not score with: what check_model_reference refuses, and a local
    checkpoint that is not a sequence classifier (TRL loads it with AutoModelForSequenceClassification, which would
    put a new, untrained head on a causal LM and score at random)."""
    found = check_model_reference(reference, field)
    config = Path(reference) / "config.json"
    if not config.is_file():
        return found
    archs = json.loads(config.read_text(encoding="utf-8")).get("architectures") or []
    if not any(a.endswith("ForSequenceClassification") for a in archs):
        raise _problem(
            field,
            f"{reference} is {archs or 'an unknown architecture'}, not a sequence classifier. Fix: point at a "
            "model trained with algo reward_model.",
        )
    return f"{reference}: a sequence classifier ({archs[0]})"
