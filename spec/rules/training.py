"""Rules about the training options every algorithm shares: precision, LoRA, quantization, checkpoints, vLLM."""

from collections.abc import Mapping
from typing import Any

from ..model import Rule, rule


@rule(
    "bf16",
    "fp16",
    description="bf16 and fp16 are not both on.",
)
def one_precision(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("bf16") is True and cfg.get("fp16"):
        return "bf16=True and fp16=True are both set. Fix: choose one; bf16 where the GPU supports it."
    return None


@rule(
    "stall_timeout",
    description='stall_timeout is a positive number of seconds or "off".',
)
def stall_timeout_positive(cfg: Mapping[str, Any]) -> str | None:
    value = cfg.get("stall_timeout", "off")
    if value != "off" and not value > 0:
        return f'stall_timeout={value!r}; allowed: a number of seconds above 0, or "off". Fix: e.g. 1800, or off.'
    return None


@rule(
    "model",
    description="A LoRA adapter must not target lm_head (TRL's DPO, KTO and SFT trainers refuse it).",
)
def no_lora_on_lm_head(cfg: Mapping[str, Any]) -> str | None:
    model = cfg.get("model")
    peft = getattr(model, "peft", None)
    targets = getattr(peft, "target_modules", None)
    if isinstance(targets, list) and "lm_head" in targets:
        return (
            "model.peft.target_modules includes lm_head, which TRL's DPO, KTO and SFT trainers refuse. "
            "Fix: drop lm_head, or use target_modules: all-linear (which leaves the output head out)."
        )
    return None


@rule(
    "sync_ref_model",
    "precompute_ref_log_probs",
    "reference_cache",
    description="sync_ref_model is not combined with precompute_ref_log_probs or reference_cache: on.",
)
def ref_sync_not_precomputed(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("sync_ref_model") and cfg.get("precompute_ref_log_probs"):
        return (
            "sync_ref_model=True and precompute_ref_log_probs=True are both set, but precomputed reference "
            "log-probabilities cannot follow a reference model that moves. Fix: turn one of them off."
        )
    if cfg.get("sync_ref_model") and cfg.get("reference_cache") == "on":
        return (
            "sync_ref_model=True and reference_cache='on' are both set, but cached reference log-probabilities "
            "cannot follow a reference model that moves. Fix: set reference_cache: auto (it stays off with "
            "sync_ref_model) or off, or drop sync_ref_model."
        )
    return None


@rule(
    "reference_cache",
    "distributed",
    description="reference_cache: on is not combined with DeepSpeed ZeRO-3 (its weights cannot be fingerprinted).",
)
def reference_cache_whole_weights(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("reference_cache") == "on" and getattr(cfg.get("distributed"), "zero3", False):
        return (
            "reference_cache='on' with distributed.zero_stage=3: ZeRO-3 partitions the weights as they load, so no "
            "process holds the reference weights the cache key must fingerprint, and a key without them could hand "
            "one checkpoint's log-probabilities to another of the same architecture. Fix: set reference_cache: "
            "auto (it stays off with ZeRO-3; precompute_ref_log_probs still works) or off, or use zero_stage 2."
        )
    return None


@rule(
    "distributed",
    "model",
    description="DeepSpeed ZeRO-3 is not combined with a 4/8-bit (bitsandbytes) model.",
)
def zero3_not_quantized(cfg: Mapping[str, Any]) -> str | None:
    quantization = getattr(cfg.get("model"), "quantization", None)
    if getattr(cfg.get("distributed"), "zero3", False) and quantization:
        return (
            f"distributed.zero_stage=3 with model.quantization={quantization!r}: ZeRO-3 partitions every parameter "
            f"across the processes, and bitsandbytes {quantization} weights cannot be partitioned that way. Fix: use "
            "zero_stage 2 (QLoRA's adapters and optimizer state shard fine there), strategy ddp, or drop quantization."
        )
    return None


@rule(
    "model",
    description="A 4/8-bit model trains through a LoRA adapter (QLoRA): quantization needs peft.",
)
def quantized_needs_peft(cfg: Mapping[str, Any]) -> str | None:
    model = cfg.get("model")
    quantization = getattr(model, "quantization", None)
    if quantization and getattr(model, "peft", None) is None:
        return (
            f"model.quantization={quantization!r} without model.peft: quantized weights are frozen, so only a LoRA "
            "adapter can train (QLoRA). Fix: add model.peft: {type: lora, r: 16}, or drop quantization."
        )
    return None


@rule(
    "use_vllm",
    "vllm_mode",
    "vllm_server_base_url",
    description="vLLM server settings are not given without use_vllm (TRL would ignore them).",
)
def vllm_settings_need_use_vllm(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("use_vllm"):
        return None
    if cfg.get("vllm_mode") == "server" or cfg.get("vllm_server_base_url"):
        what = "vllm_server_base_url is set" if cfg.get("vllm_server_base_url") else "vllm_mode='server' is set"
        return (
            f"{what} but use_vllm is false, so TRL generates with transformers and ignores it. Fix: set "
            "use_vllm: true (textrl.rollout.vllm.vllm_config(mode='server', ...) sets both), or remove it."
        )
    return None


@rule(
    "use_vllm",
    "model",
    description="vLLM in colocate mode is not combined with an 8-bit (bitsandbytes) model.",
)
def vllm_not_8bit(cfg: Mapping[str, Any]) -> str | None:
    quantization = getattr(cfg.get("model"), "quantization", None)
    if cfg.get("use_vllm") and cfg.get("vllm_mode", "colocate") == "colocate" and quantization == "8bit":
        return (
            "use_vllm with vllm_mode='colocate' and model.quantization='8bit': vLLM cannot load bitsandbytes 8-bit "
            "weights (TRL raises 'vLLM does not support in-flight 8-bit quantization' after loading the model). "
            "Fix: model.quantization: 4bit (vLLM loads bitsandbytes 4-bit), vllm_mode: server, or use_vllm: false."
        )
    return None


@rule(
    "save_strategy",
    "metric_for_best_model",
    description="save_strategy best needs metric_for_best_model.",
)
def best_checkpoint_metric(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("save_strategy") == "best" and not cfg.get("metric_for_best_model"):
        return (
            "save_strategy='best' needs metric_for_best_model to say which metric is best (transformers raises at "
            "trainer start otherwise). Fix: set metric_for_best_model, e.g. 'eval_loss', or use save_strategy 'steps'."
        )
    return None


_METRIC_SCHEDULERS = ("reduce_lr_on_plateau", "greedy")


@rule(
    "lr_scheduler_type",
    "eval_strategy",
    description="lr_scheduler_type reduce_lr_on_plateau or greedy needs an eval_strategy other than no.",
)
def plateau_scheduler_needs_eval(cfg: Mapping[str, Any]) -> str | None:
    scheduler = cfg.get("lr_scheduler_type")
    if scheduler in _METRIC_SCHEDULERS and cfg.get("eval_strategy") == "no":
        return (
            f"lr_scheduler_type={scheduler!r} changes the rate when the evaluation metric stops improving, but "
            "eval_strategy is 'no' (transformers refuses it). Fix: set eval_strategy to 'steps' or 'epoch' (and give "
            "an eval dataset), or choose another scheduler, e.g. 'cosine'."
        )
    return None


def whole_steps(name: str) -> Rule:
    def check(cfg: Mapping[str, Any]) -> str | None:
        value = cfg.get(name)
        if value is not None and value > 1 and value != int(value):
            return (
                f"{name}={value}: a value above 1 counts steps and must be whole (below 1 it is a fraction of all "
                f"steps); transformers rejects it at build time. Fix: use {int(value)} or {int(value) + 1}."
            )
        return None

    return Rule(
        name=f"whole_{name}",
        fields=(name,),
        description=f"{name} above 1 is a whole number of steps.",
        check=check,
    )
