"""load_model: a policy (optionally LoRA / 4-bit), its tokenizer, and a reference model when one is needed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from ..engines import quantization as quantization_module
from ..errors import ConfigError, Problem

Task = Literal["auto", "causal-lm", "reward"]


def _peft_section(peft: Any) -> Any:
    """Validate the `peft` dict with the spec's PeftSection (same rules and messages as YAML's model.peft)."""
    from pydantic import ValidationError

    from ..spec.sections import PeftSection

    if peft is None or isinstance(peft, PeftSection):
        return peft
    if not isinstance(peft, dict):
        raise ConfigError(
            [
                Problem(
                    "peft",
                    f"got {type(peft).__name__}; allowed: a mapping such as "
                    "{'type': 'lora', 'r': 16}. Fix: pass a dict.",
                )
            ]
        )
    try:
        return PeftSection(**peft)
    except ValidationError as exc:
        from ..errors import closest

        problems = []
        for e in exc.errors(include_url=False):
            guess = closest(str(e["loc"][-1]), PeftSection.model_fields) if e["type"] == "extra_forbidden" else None
            hint = f" Did you mean {guess!r}?" if guess else ""
            problems.append(
                Problem(
                    "peft." + ".".join(map(str, e["loc"])) if e["loc"] else "peft",
                    f"{e['msg']}; got {e.get('input')!r}.{hint} Allowed keys and types: see "
                    "generated/docs/sections.md (PeftSection). Fix: correct it.",
                )
            )
        raise ConfigError(problems) from None


def lora_config(peft: Any, task_type: str = "CAUSAL_LM") -> Any:
    """PEFT's LoraConfig for a validated PeftSection."""
    from peft import LoraConfig

    targets = peft.target_modules
    return LoraConfig(
        r=peft.r,
        lora_alpha=peft.alpha if peft.alpha is not None else 2 * peft.r,
        lora_dropout=peft.dropout,
        target_modules=targets,
        bias=peft.bias,
        use_rslora=peft.use_rslora,
        use_dora=peft.use_dora,
        modules_to_save=peft.modules_to_save,
        task_type=task_type,
    )


def _resolve_dtype(torch_dtype: str | None) -> Any:
    import torch

    from ..engines.hardware import bf16_supported

    if torch_dtype in (None, "auto"):
        return torch.bfloat16 if bf16_supported() else torch.float32
    names = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
    if torch_dtype not in names:
        raise ConfigError(
            [
                Problem(
                    "torch_dtype",
                    f"got {torch_dtype!r}; allowed: 'auto', 'bfloat16', 'float16', "
                    "'float32' or None. Fix: use one of these.",
                )
            ]
        )
    return names[torch_dtype]


def _detect_task(name_or_path: str, revision: str | None, trust_remote_code: bool) -> Task:
    """A sequence-classification head for checkpoints saved as classifiers or that have no causal-LM head."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(name_or_path, revision=revision, trust_remote_code=trust_remote_code)
    archs = list(getattr(config, "architectures", None) or [])
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "reward"
    if archs and not any(a.endswith("ForCausalLM") or "ConditionalGeneration" in a for a in archs):
        return "reward"  # an encoder (e.g. BERT) can only serve as a reward model here
    return "causal-lm"


TINY = "textrl:tiny"
TINY_REWARD = "textrl:tiny-reward"
BUILTINS = (TINY, TINY_REWARD, "textrl:smollm2")
"""TextRL's built-in models: two offline tiny ones and SmolLM2-135M-Instruct (fetched once, see models/gguf.py)."""


def builtin_path(name: str) -> Path | None:
    """Where a built-in model lives (under $TEXTRL_HOME, default ~/.cache/textrl), built or not."""
    from .gguf import textrl_home

    if name not in BUILTINS:
        return None
    return textrl_home() / name.split(":")[1]


def builtin_model(name: str, gguf_file: str | None = None) -> str:
    """A model reference as from_pretrained reads it: `textrl:tiny`/`textrl:tiny-reward` built offline once,
    `textrl:smollm2` fetched and converted once, a `.gguf` file (or `gguf_file` in a folder) converted once to a
    float checkpoint; anything else (a hub id or a folder) as it is."""
    if gguf_file or name.endswith(".gguf"):
        from .gguf import gguf_folder

        return str(gguf_folder(name, gguf_file))
    if name.startswith("textrl:") and name not in BUILTINS:
        raise ConfigError(
            [
                Problem(
                    "model",
                    f"got {name!r}; TextRL's built-in models are {', '.join(BUILTINS)}. Fix: use one of these, a "
                    "local folder or a hub id.",
                )
            ]
        )
    path = builtin_path(name)
    if path is None:
        return name
    if name == "textrl:smollm2":
        from .gguf import smollm2_folder

        return str(smollm2_folder())
    from ..tiny import build_tiny_model

    return str(build_tiny_model(path, reward=name == TINY_REWARD))


@contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Inside, torch's CPU generator draws from `seed`, as after TRL's `set_seed(args.seed)`; outside, it is where it
    was before. PEFT creates and initialises an adapter's weights on the CPU before moving them to the base layer's
    device, and transformers initialises a new head of a model loaded on the CPU. No GPU is touched: a GPU's
    generator would need a context on it (every visible GPU, in each process of a multi-GPU launch)."""
    if seed is None:
        yield
        return
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        yield


def load_model(
    name_or_path: str,
    peft: dict[str, Any] | None = None,
    quantization: str | None = None,
    torch_dtype: str | None = None,
    attn_implementation: str | None = None,
    load_ref: bool = True,
    *,
    task: Task = "auto",
    revision: str | None = None,
    trust_remote_code: bool = False,
    gguf_file: str | None = None,
    adapter: str = "merge",
    chat_template: str | None = None,
    seed: int | None = 42,
    field: str = "name_or_path",
) -> tuple[Any, Any, Any]:
    """Load `(policy, tokenizer, ref_or_None)` from a hub id, a local folder, a `.gguf` file, or a built-in model:
    `textrl:tiny` (offline demo model) or `textrl:smollm2` (SmolLM2-135M-Instruct, fetched once).

    - `peft={"type": "lora", "r": 16, ...}` wraps the policy in a LoRA adapter; the reference is then None
      because TRL disables the adapter for the reference pass.
    - `quantization="4bit"` (nf4 QLoRA) or `"8bit"` loads the base weights with bitsandbytes (on a CUDA GPU or the CPU),
      prepares them for k-bit training and needs `peft` (the adapter is what trains; the reference is None).
    - `task="auto"` loads a sequence-classification head (one label) for classifier or encoder checkpoints,
      for use as a reward model; force it with `task="reward"`.
    - A tokenizer without a pad token gets its eos token as pad.
    - What is drawn at random while loading (a LoRA adapter's initial weights, a new reward head) comes from `seed`
      (42, the config's default seed; textrl-train passes the config's), as TRL's trainers draw them after
      `set_seed(args.seed)`: two loads give the same starting weights, so runs repeat and the reference cache
      recognises them. The caller's random state is left as it was. `seed=None` draws from it instead.
    - DeepSpeed ZeRO-3: build the TRL config first (`textrl.trl_build.build_trl_config(cfg)`) and keep a reference to
      it while loading, so that from_pretrained partitions the weights as they load (textrl-train does this).
    - A GGUF checkpoint (`"model.gguf"`, or a folder with `gguf_file="model.Q4_1.gguf"`) is dequantized once into a
      float32 folder under $TEXTRL_HOME/gguf without the quantizer state that makes TRL refuse training, and
      loaded from there: an ordinary model for full fine-tuning or LoRA, with the file's tokenizer and chat
      template. Needs `pip install 'textrl[gguf]'`.
    - A LoRA adapter folder (a LoRA run's output_dir: adapter_config.json, no config.json) loads on the base model it
      names. `adapter="merge"` (the default) merges it into the base weights: the next run trains the fine-tuned
      model (with a new LoRA if `peft` is given, else in full), and its DPO/KTO reference is that model too.
      `adapter="continue"` keeps training the same adapter (not with `peft`); TRL then switches it off for a
      reference pass, so the reference is the base model without it.
    - A reference that cannot load (a missing folder, one without config.json, weights or tokenizer files, a
      safetensors file cut short, a hub id the machine cannot fetch) is a ConfigError naming `field` and the fix,
      before transformers is imported.
    """
    from .source import check_model_reference

    check_model_reference(name_or_path, field, gguf_file=gguf_file, revision=revision)
    loaded_from = name_or_path
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    quantization_module.check_mode(quantization)
    name_or_path = builtin_model(name_or_path, gguf_file)
    section = _peft_section(peft)
    from .adapter import adapter_base, adapter_task, check_mode, load_base, tokenizer_source, with_adapter

    if adapter not in ("merge", "continue"):  # checked whatever the model is: a typo never passes in silence
        check_mode(name_or_path, adapter, new_peft=False, quantization=None, field="adapter")
    base = adapter_base(name_or_path)  # a LoRA run's output: loaded on its base, merged or continued
    folder = name_or_path if base is not None else None
    tokenizer_from = name_or_path
    if folder is not None and base is not None:
        check_mode(folder, adapter, new_peft=section is not None, quantization=quantization)
        if task == "auto":
            task = "reward" if adapter_task(folder) == "reward" else "causal-lm"
        name_or_path = builtin_model(base)
        tokenizer_from = tokenizer_source(folder, name_or_path)
    if quantization in ("4bit", "8bit") and section is None:
        raise ConfigError(
            [
                Problem(
                    "quantization",
                    f"got {quantization!r} without peft: quantized weights are frozen, so only a LoRA adapter can "
                    "train (QLoRA). Fix: pass peft={'type': 'lora', 'r': 16}, or drop quantization.",
                )
            ]
        )
    dtype = _resolve_dtype(torch_dtype)
    if task == "auto":
        task = _detect_task(name_or_path, revision, trust_remote_code)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_from, revision=revision, trust_remote_code=trust_remote_code)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if chat_template is not None:  # model.chat_template: the run's own template, Jinja text (templates.template_text)
        tokenizer.chat_template = chat_template
    kwargs: dict[str, Any] = {"revision": revision, "trust_remote_code": trust_remote_code, "dtype": dtype}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    quantization_module.check_runs(quantization)
    quantization_module.check_attention(attn_implementation)
    quant = quantization_module.quantization_config(quantization, dtype)
    if quant is not None:
        kwargs["quantization_config"] = quant
        # each process of `accelerate launch` loads onto its own GPU (no Accelerator exists yet to ask), or the CPU
        kwargs["device_map"] = {"": quantization_module.device()}
    auto = AutoModelForSequenceClassification if task == "reward" else AutoModelForCausalLM
    if task == "reward":
        kwargs["num_labels"] = 1
    with seeded(seed):
        model = load_base(auto, name_or_path, kwargs)  # a chain of LoRA runs: each adapter merged in turn
    if task == "reward" and model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    if quant is not None:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    if folder is not None:
        model = with_adapter(model, folder, "continue" if adapter == "continue" else "merge")
    ref = None
    if section is not None:
        from peft import get_peft_model

        config = lora_config(section, "SEQ_CLS" if task == "reward" else "CAUSAL_LM")
        with seeded(seed):
            model = get_peft_model(model, config, revision=revision)
    elif load_ref and task != "reward" and not (folder is not None and adapter == "continue"):
        ref = load_base(auto, name_or_path, kwargs)
        ref = (with_adapter(ref, folder, "merge") if folder is not None else ref).eval()  # the merged model's copy
        ref.requires_grad_(False)
    model.textrl_loaded_from = loaded_from  # the manifest of the next run names its parent run from this
    return model, tokenizer, ref


def load_section(
    section: Any,
    *,
    load_ref: bool = True,
    task: Task = "auto",
    torch_dtype: str | None = None,
    seed: int | None = 42,
    base_dir: Path | None = None,
) -> tuple[Any, Any, Any]:
    """`load_model` for a config's `model:` section (name, peft, quantization, dtype, attention, revision, remote
    code, adapter, chat template), as textrl-train loads it; `torch_dtype` applies when the section sets none, `seed`
    is the run's, `base_dir` the config's folder (a chat_template file is read from there too)."""
    from .template import template_text

    return load_model(
        section.name,
        peft=section.peft.model_dump() if section.peft else None,
        quantization=section.quantization,
        torch_dtype=section.torch_dtype or torch_dtype,
        attn_implementation=section.attn_implementation,
        load_ref=load_ref,
        task=task,
        revision=section.revision,
        trust_remote_code=section.trust_remote_code,
        gguf_file=section.gguf_file,
        adapter=section.adapter,
        chat_template=template_text(section.chat_template, base_dir),
        seed=seed,
        field="model.name",
    )
