"""ModelConfig keys of a recipe as TextRL's model section: name, dtype, attention, LoRA and quantization."""

from __future__ import annotations

from typing import Any

from .. import spec
from .recipe import Recipe
from .tables import MODEL_KEYS


def translate_model(recipe: Recipe, algo: spec.Algorithm) -> None:
    name = recipe.model_name = recipe.take("model_name_or_path")
    if name is None:
        recipe.refuse(
            "model_name_or_path", "is missing; TRL's CLI needs it too. Fix: add model_name_or_path: <hub id or folder>."
        )
    else:
        local = recipe.local(str(name))
        recipe.put(("model", "name"), local if local is not None else name, "model_name_or_path")
        if local is not None and local != name:
            recipe.note(
                "model_name_or_path", f"the local folder {name}, written as {local} from the new config's folder"
            )
    revision = recipe.take("model_revision")
    if revision is not None:
        recipe.put(("model", "revision"), revision, "model_revision")
    dtype, old = recipe.take("dtype"), recipe.take("torch_dtype")
    if dtype is not None and old is not None and dtype != old:
        recipe.refuse("torch_dtype", f"is {old!r} and dtype is {dtype!r}. Fix: keep one (dtype, TRL's name now).")
    chosen = dtype if dtype is not None else old
    source = "dtype" if dtype is not None else "torch_dtype"
    if chosen is None:
        recipe.put(("model", "torch_dtype"), "float32", "model_name_or_path")
        recipe.note(
            "dtype", "not set: float32, the default of TRL's ModelConfig (TextRL alone would pick bf16 on a GPU)"
        )
    else:
        recipe.put(("model", "torch_dtype"), chosen, source)
        if old is not None:
            recipe.note("torch_dtype", "model.torch_dtype (TRL's ModelConfig renamed it dtype in 0.23)")
    attention = recipe.take("attn_implementation")
    if attention is not None:
        recipe.put(("model", "attn_implementation"), attention, "attn_implementation")
    template = recipe.take("chat_template")
    if template is not None:
        recipe.put(("model", "chat_template"), template, "chat_template")
        recipe.note("chat_template", "model.chat_template: set on the tokenizer, as the collection's script does")
    if "trust_remote_code" in recipe.left:  # a field of TRL's config too: stays an option, and loads the model
        recipe.put(("model", "trust_remote_code"), recipe.left["trust_remote_code"], "trust_remote_code")
    _peft(recipe, algo)
    _quantization(recipe)


def _peft(recipe: Recipe, algo: spec.Algorithm) -> None:
    lora = {k: recipe.take(k) for k in MODEL_KEYS if k.startswith("lora_") or k in ("use_rslora", "use_dora")}
    lora = {k: v for k, v in lora.items() if v is not None}
    use_peft = recipe.take("use_peft", False)
    if not use_peft:
        if lora:
            recipe.note(
                ", ".join(lora) if len(lora) > 1 else next(iter(lora)),
                "dropped: TRL reads LoRA settings only with use_peft: true",
            )
        return
    target = lora.get("lora_target_modules")
    if isinstance(target, str) and target != "all-linear":
        recipe.refuse(
            "lora_target_modules",
            f"is the text {target!r}, which PEFT reads as a regular expression; TextRL takes a list of module names "
            "or all-linear. Fix: list the modules, e.g. [q_proj, v_proj].",
        )
    if lora.get("lora_target_parameters") is not None:
        recipe.refuse(
            "lora_target_parameters",
            "LoRA on parameters (PEFT's target_parameters, for mixture-of-experts layers) is not offered. "
            "Fix: drop it and adapt modules with lora_target_modules.",
        )
    task = lora.get("lora_task_type")
    wanted = "SEQ_CLS" if algo.family is spec.Family.REWARD_MODEL else "CAUSAL_LM"
    if task is not None and task != wanted:
        recipe.refuse(
            "lora_task_type",
            f"is {task!r}; algo {algo.name} trains a {wanted} adapter, and TextRL sets the task type itself. "
            "Fix: drop lora_task_type.",
        )
    peft: dict[str, Any] = {
        "type": "lora",
        "r": lora.get("lora_r", 16),
        "alpha": lora.get("lora_alpha", 32),  # ModelConfig's default, whatever r is (TextRL alone would take 2 x r)
        "dropout": lora.get("lora_dropout", 0.05),
        "target_modules": target,
    }
    if target is None:
        recipe.note("use_peft", "model.peft.target_modules: null: PEFT's default modules for the architecture, as TRL")
    for key in ("use_rslora", "use_dora"):
        if key in lora:
            peft[key] = lora[key]
    if lora.get("lora_modules_to_save") is not None:
        peft["modules_to_save"] = lora["lora_modules_to_save"]
    recipe.put(("model", "peft"), peft, "use_peft")
    recipe.note("use_peft", f"model.peft: LoRA r={peft['r']}, alpha={peft['alpha']}, dropout={peft['dropout']}")


def _quantization(recipe: Recipe) -> None:
    four, eight = recipe.take("load_in_4bit", False), recipe.take("load_in_8bit", False)
    kind, nested = recipe.take("bnb_4bit_quant_type"), recipe.take("use_bnb_nested_quant")
    storage = recipe.take("bnb_4bit_quant_storage")
    if four and eight:
        recipe.refuse("load_in_8bit", "and load_in_4bit are both true. Fix: keep one.")
        return
    if four:
        recipe.put(("model", "quantization"), "4bit", "load_in_4bit")
        recipe.note("load_in_4bit", "model.quantization: 4bit (bitsandbytes nf4)")
        if kind not in (None, "nf4"):
            recipe.refuse(
                "bnb_4bit_quant_type", f"is {kind!r}; TextRL's 4-bit loading is nf4 (QLoRA's). Fix: drop it or use nf4."
            )
        if not nested:
            recipe.note(
                "use_bnb_nested_quant",
                "TextRL's 4-bit loading also quantizes the quantization constants (nested), which saves about 0.4 "
                "bit per weight and leaves the compute as it is",
            )
        if storage is not None:
            recipe.refuse(
                "bnb_4bit_quant_storage",
                f"is {storage!r}; choosing the storage dtype of 4-bit weights (for FSDP QLoRA) is not offered. "
                "Fix: drop it; with FSDP, use distributed: {strategy: deepspeed} for QLoRA.",
            )
    elif eight:
        recipe.put(("model", "quantization"), "8bit", "load_in_8bit")
        recipe.note("load_in_8bit", "model.quantization: 8bit (bitsandbytes)")
