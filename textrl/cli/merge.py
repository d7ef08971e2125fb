"""`textrl-merge`: fold a LoRA adapter into its base model and write a standalone checkpoint, complete or not at all.

`textrl-dump` is the deprecated name from TextRL < 1.0; it does the same and says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..checkpoints.atomic import staged_folder
from ..checkpoints.files import MERGE_RECORD
from ..checkpoints.overwrite import Input, check_replaceable, inputs, model_inputs
from ..errors import ConfigError
from ..models.source import adapter_base


def merge_parser(prog: str = "textrl-merge") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Merge a PEFT adapter (e.g. a textrl-train output_dir "
        "trained with LoRA) into its base model and save model + tokenizer.",
    )
    parser.add_argument("--adapter", required=True, metavar="DIR", help="Folder with adapter_config.json.")
    parser.add_argument("--output", required=True, metavar="DIR", help="Where the merged checkpoint goes (new).")
    parser.add_argument("--overwrite", action="store_true", help="Replace an existing --output folder.")
    parser.add_argument("--trust-remote-code", action="store_true", help="Run modelling code shipped with the base.")
    return parser


def merge_inputs(adapter: Path, adapter_config: dict[str, Any]) -> list[Input]:
    """What a merge reads: the adapter folder and, when it is local, the base model it was trained on."""
    base = adapter_config.get("base_model_name_or_path")
    pairs: list[tuple[str, Path | str | None]] = [(f"--adapter {adapter}", adapter)]
    if isinstance(base, str) and base:
        pairs += model_inputs(f"the adapter's base model {base}", base, Path.cwd())
    return inputs(pairs)


def trained_quantization(adapter: Path) -> str | None:
    """The bitsandbytes quantization of the base model `adapter` trained on, from the manifest of its TextRL run
    (the adapter is that run's output_dir or a checkpoint in it); None for full-precision bases and other adapters."""
    from ..checkpoints.manifest import read_manifest

    for folder in (adapter, adapter.parent):
        manifest = read_manifest(folder)
        if manifest:
            model = manifest.get("textrl_config", {}).get("model") or {}
            return manifest.get("base_quantization") or (model.get("quantization") if isinstance(model, dict) else None)
    return None


def _dequantized_with_adapter(adapter: Path, adapter_config: dict[str, Any], quantization: str, remote: bool) -> Any:
    """The adapter on the base weights it trained against: the base loaded in `quantization` as in training, then
    dequantized to full precision. Merging into the original weights instead would change the model's outputs (the
    adapter learned to correct the quantized ones)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    from ..engines.quantization import check_runs, device, quantization_config

    check_runs(quantization, f"the adapter's training run's model.quantization ({quantization})")
    auto = AutoModelForSequenceClassification if adapter_config.get("task_type") == "SEQ_CLS" else AutoModelForCausalLM
    base = auto.from_pretrained(
        adapter_config["base_model_name_or_path"],
        quantization_config=quantization_config(quantization, torch.float32),
        device_map={"": device()},
        dtype=torch.float32,
        trust_remote_code=remote,
    )
    return PeftModel.from_pretrained(base.dequantize(), adapter)


def merge(adapter: Path, output: Path, *, overwrite: bool = False, trust_remote_code: bool = False) -> Path:
    """Write the merged model to a temporary sibling of `output`, then rename it into place.

    `overwrite` replaces only an earlier textrl-merge output (it has textrl_merge.json), never the adapter, its
    base model, a training run or a folder holding other outputs.
    """
    if not (adapter / "adapter_config.json").is_file():
        raise FileNotFoundError(
            f"--adapter {adapter}: no adapter_config.json there, so it is not a PEFT adapter. "
            "Fix: point at the output_dir of a LoRA run (model: {peft: ...})."
        )
    adapter_config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    if output.exists():
        if not overwrite:
            raise FileExistsError(f"--output {output} exists. Fix: choose a new folder, or pass --overwrite.")
        check_replaceable(output, merge_inputs(adapter, adapter_config), kind="merged model", field="--output")
    from peft import AutoPeftModelForCausalLM, AutoPeftModelForSequenceClassification
    from tqdm import tqdm
    from transformers import AutoTokenizer

    task = adapter_config.get("task_type")
    quantization = trained_quantization(adapter)
    steps = tqdm(total=3, desc="merging", unit="step")
    chain = adapter_base(str(adapter_config.get("base_model_name_or_path") or "")) is not None
    if chain and quantization is None:  # trained on a merged adapter: every adapter of the chain merged in turn
        from ..models import load_model

        model = load_model(str(adapter), load_ref=False, seed=None, trust_remote_code=trust_remote_code)[0]
    elif quantization is None:
        auto = AutoPeftModelForSequenceClassification if task == "SEQ_CLS" else AutoPeftModelForCausalLM
        model = auto.from_pretrained(adapter, trust_remote_code=trust_remote_code)
    else:
        model = _dequantized_with_adapter(adapter, adapter_config, quantization, trust_remote_code)
    steps.update()
    merged = model if chain and quantization is None else model.merge_and_unload()
    steps.update()
    with staged_folder(output) as staging:
        merged.save_pretrained(staging, safe_serialization=True)
        AutoTokenizer.from_pretrained(adapter).save_pretrained(staging)
        record = {
            "adapter": str(adapter.resolve()),
            "base_model": adapter_config.get("base_model_name_or_path"),
            "task_type": task,
            "base_weights": f"dequantized from {quantization} (the weights the adapter trained on)"
            if quantization
            else "as saved",
            "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "textrl": __version__,
        }
        (staging / MERGE_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    steps.update()
    steps.close()
    return output


def merge_main(argv: list[str] | None = None, prog: str = "textrl-merge") -> int:
    args = merge_parser(prog).parse_args(argv)
    try:
        out = merge(
            Path(args.adapter), Path(args.output), overwrite=args.overwrite, trust_remote_code=args.trust_remote_code
        )
    except (FileNotFoundError, FileExistsError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print("\n".join(f"{prog}: {problem}" for problem in exc.problems), file=sys.stderr)
        return 2
    print(f"{prog}: merged model written to {out}")
    return 0


def dump_main(argv: list[str] | None = None) -> int:
    print(
        "textrl-dump is deprecated since TextRL 1.0 and will be removed in 2.0; use textrl-merge (same arguments).",
        file=sys.stderr,
    )
    return merge_main(argv, prog="textrl-dump")
