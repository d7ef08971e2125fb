"""Cross-field rules: what TRL checks late (inside the loss, at trainer init) or not at all.

Each check receives the validated values of one config and returns None or the whole message.
"""

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .choices import F_DIVERGENCE_LOSSES
from .model import Rule


def _losses(cfg: Mapping[str, Any], fixed: Sequence[str]) -> list[str]:
    return list(cfg.get("loss_type") or fixed)


def _loss_weights_match(cfg: Mapping[str, Any]) -> str | None:
    weights, losses = cfg.get("loss_weights"), cfg.get("loss_type") or []
    if weights is None or len(weights) == len(losses):
        return None
    return (
        f"loss_weights has {len(weights)} values {weights} for {len(losses)} losses in loss_type {losses}. "
        "Fix: give exactly one weight per loss type, or drop loss_weights to weigh all losses 1.0."
    )


def _no_repeated_loss(cfg: Mapping[str, Any]) -> str | None:
    losses = cfg.get("loss_type") or []
    repeated = sorted({x for x in losses if losses.count(x) > 1})
    if not repeated:
        return None
    return (
        f"loss_type lists {', '.join(repeated)} more than once: {losses}. "
        "Fix: list each loss once and use loss_weights to weigh it."
    )


def _exo_needs_smoothing(fixed: Sequence[str]) -> Rule:
    def check(cfg: Mapping[str, Any]) -> str | None:
        if "exo_pair" in _losses(cfg, fixed) and cfg["label_smoothing"] <= 0:
            return (
                f"loss exo_pair needs label_smoothing > 0, got {cfg['label_smoothing']}. "
                "Fix: set label_smoothing to a small positive value; the EXO paper uses 1e-3."
            )
        return None

    return Rule(
        name="exo_pair_label_smoothing",
        fields=("label_smoothing", "loss_type"),
        description="The exo_pair loss needs label_smoothing > 0 (the EXO paper uses 1e-3).",
        check=check,
    )


def _robust_smoothing(fixed: Sequence[str]) -> Rule:
    def check(cfg: Mapping[str, Any]) -> str | None:
        if "robust" in _losses(cfg, fixed) and not 0 <= cfg["label_smoothing"] < 0.5:
            return (
                f"loss robust needs 0 <= label_smoothing < 0.5, got {cfg['label_smoothing']}. "
                "Fix: set label_smoothing below 0.5 (0 makes robust equal to sigmoid; e.g. 0.1)."
            )
        return None

    return Rule(
        name="robust_label_smoothing",
        fields=("label_smoothing", "loss_type"),
        description="The robust loss needs 0 <= label_smoothing < 0.5 (0 makes it equal to sigmoid).",
        check=check,
    )


def _f_divergence_supported(fixed: Sequence[str]) -> Rule:
    def check(cfg: Mapping[str, Any]) -> str | None:
        if cfg.get("f_divergence_type", "reverse_kl") == "reverse_kl":
            return None
        bad = [x for x in _losses(cfg, fixed) if x not in F_DIVERGENCE_LOSSES]
        if not bad:
            return None
        return (
            f"f_divergence_type={cfg['f_divergence_type']!r} is not defined for loss {', '.join(bad)}; it works only "
            f"with {', '.join(F_DIVERGENCE_LOSSES)}. Fix: keep f_divergence_type='reverse_kl', or use one of those "
            "losses."
        )

    return Rule(
        name="f_divergence_losses",
        fields=("f_divergence_type", "loss_type"),
        description="An f_divergence_type other than reverse_kl works only with the losses "
        + ", ".join(F_DIVERGENCE_LOSSES)
        + ".",
        check=check,
    )


def _weighting_not_with_aot(fixed: Sequence[str]) -> Rule:
    def check(cfg: Mapping[str, Any]) -> str | None:
        bad = [x for x in _losses(cfg, fixed) if x in ("aot", "aot_unpaired")]
        if cfg.get("use_weighting") and bad:
            return (
                f"use_weighting=True is not implemented for loss {', '.join(bad)} (TRL raises at trainer start). "
                "Fix: set use_weighting=False, or use another loss."
            )
        return None

    return Rule(
        name="use_weighting_aot",
        fields=("use_weighting", "loss_type"),
        description="use_weighting is not implemented for the aot and aot_unpaired losses.",
        check=check,
    )


def pairwise_rules(fixed: Sequence[str] = ()) -> tuple[Rule, ...]:
    """The loss rules of a DPO-family algorithm; `fixed` is its fixed loss list (empty for algo dpo)."""
    if not fixed:
        return (
            Rule(
                name="loss_weights_length",
                fields=("loss_weights", "loss_type"),
                description="loss_weights has one entry per loss in loss_type.",
                check=_loss_weights_match,
            ),
            Rule(
                name="loss_type_unique",
                fields=("loss_type",),
                description="Each loss appears once in loss_type.",
                check=_no_repeated_loss,
            ),
            _exo_needs_smoothing(fixed),
            _robust_smoothing(fixed),
            _f_divergence_supported(fixed),
            _weighting_not_with_aot(fixed),
        )
    rules = []
    if "exo_pair" in fixed:
        rules.append(_exo_needs_smoothing(fixed))
    if "robust" in fixed:
        rules.append(_robust_smoothing(fixed))
    if {"aot", "aot_unpaired"} & set(fixed):
        rules.append(_weighting_not_with_aot(fixed))
    return tuple(rules)


def _divisors(total: int, most: int = 12) -> list[int]:
    """The divisors >= 2 of `total`, smallest first, at most `most` of them (found in O(sqrt(total)))."""
    small, large = [], []
    d = 1
    while d * d <= total:
        if total % d == 0:
            small.append(d)
            if d * d != total:
                large.append(total // d)
        d += 1
    return [x for x in small + large[::-1] if x >= 2][:most]


def _world_size() -> int:
    """Processes in this run: `accelerate launch` and torchrun set WORLD_SIZE in every process they start."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def _generation_batch(cfg: Mapping[str, Any]) -> str | None:
    gen, spg = cfg.get("generation_batch_size"), cfg.get("steps_per_generation")
    world = _world_size()
    per_device, n = cfg["per_device_train_batch_size"] * world, cfg["num_generations"]
    if gen is not None and spg is not None:
        return (
            f"generation_batch_size={gen} and steps_per_generation={spg} are both set; they say the same thing two "
            "ways. Fix: set only one of them."
        )
    if gen is None:
        gen = per_device * (spg or cfg["gradient_accumulation_steps"])
        processes = f" × {world} processes" if world > 1 else ""
        source = (
            f"per_device_train_batch_size × {'steps_per_generation' if spg else 'gradient_accumulation_steps'}"
            f"{' × processes' if world > 1 else ''} = {cfg['per_device_train_batch_size']} × "
            f"{spg or cfg['gradient_accumulation_steps']}{processes}"
        )
    else:
        source = "generation_batch_size"
        if gen % per_device:
            return (
                f"generation_batch_size={gen} is not a multiple of the global batch (per_device_train_batch_size × "
                f"processes = {per_device}). Fix: use a multiple of {per_device}, e.g. "
                f"{per_device * max(1, round(gen / per_device))}."
            )
    if gen % n:
        fits = _divisors(gen)
        where = f"over {world} processes" if world > 1 else "on one process"
        return (
            f"the generation batch ({source} = {gen} completions {where}) is not divisible by "
            f"num_generations={n}, so prompt groups would be split. Allowed num_generations for this batch: "
            f"{', '.join(map(str, fits)) or 'none'}. Fix: change num_generations or per_device_train_batch_size "
            "so that the batch is a multiple of num_generations."
        )
    return None


GENERATION_BATCH = Rule(
    name="generation_batch_divisible",
    fields=("num_generations", "per_device_train_batch_size", "generation_batch_size", "steps_per_generation"),
    description="The generation batch (per_device_train_batch_size × steps_per_generation × processes, or "
    "generation_batch_size) is a multiple of num_generations; the number of processes comes from WORLD_SIZE, which "
    "accelerate launch sets (1 otherwise).",
    check=_generation_batch,
)


def _eval_generation_batch(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("eval_strategy", "no") == "no":
        return None
    world = _world_size()
    n = cfg.get("num_generations_eval") or cfg["num_generations"]
    batch = cfg["per_device_eval_batch_size"] * world
    if batch % n == 0:
        return None
    which = "num_generations_eval" if cfg.get("num_generations_eval") else "num_generations"
    return (
        f"the evaluation batch (per_device_eval_batch_size × processes = {batch}) is not divisible by {which}={n}; "
        "TRL refuses it when the config is built. Fix: make per_device_eval_batch_size a multiple of "
        f"{n}, or set num_generations_eval to a divisor of {batch}."
    )


EVAL_GENERATION_BATCH = Rule(
    name="eval_generation_batch_divisible",
    fields=("per_device_eval_batch_size", "num_generations", "num_generations_eval", "eval_strategy"),
    description="When evaluating, per_device_eval_batch_size × processes is a multiple of num_generations_eval (or "
    "num_generations).",
    check=_eval_generation_batch,
)


def _precision(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("bf16") is True and cfg.get("fp16"):
        return "bf16=True and fp16=True are both set. Fix: choose one; bf16 where the GPU supports it."
    return None


PRECISION = Rule(
    name="one_precision", fields=("bf16", "fp16"), description="bf16 and fp16 are not both on.", check=_precision
)


def _lora_head(cfg: Mapping[str, Any]) -> str | None:
    model = cfg.get("model")
    peft = getattr(model, "peft", None)
    targets = getattr(peft, "target_modules", None)
    if isinstance(targets, list) and "lm_head" in targets:
        return (
            "model.peft.target_modules includes lm_head, which TRL's DPO and KTO trainers refuse. "
            "Fix: drop lm_head, or use target_modules: all-linear (which leaves the output head out)."
        )
    return None


NO_LORA_ON_HEAD = Rule(
    name="no_lora_on_lm_head",
    fields=("model",),
    description="A LoRA adapter must not target lm_head (TRL's DPO and KTO trainers refuse it).",
    check=_lora_head,
)


def _ref_sync(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("sync_ref_model") and cfg.get("precompute_ref_log_probs"):
        return (
            "sync_ref_model=True and precompute_ref_log_probs=True are both set, but precomputed reference "
            "log-probabilities cannot follow a reference model that moves. Fix: turn one of them off."
        )
    return None


REF_SYNC_NOT_PRECOMPUTED = Rule(
    name="ref_sync_not_precomputed",
    fields=("sync_ref_model", "precompute_ref_log_probs"),
    description="sync_ref_model and precompute_ref_log_probs are not both on.",
    check=_ref_sync,
)


def _zero3_quantized(cfg: Mapping[str, Any]) -> str | None:
    distributed, model = cfg.get("distributed"), cfg.get("model")
    quantization = getattr(model, "quantization", None)
    zero3 = getattr(distributed, "strategy", None) == "deepspeed" and getattr(distributed, "zero_stage", None) == 3
    if zero3 and quantization:
        return (
            f"distributed.zero_stage=3 with model.quantization={quantization!r}: ZeRO-3 partitions every parameter "
            f"across the processes, and bitsandbytes {quantization} weights cannot be partitioned that way. Fix: use "
            "zero_stage 2 (QLoRA's adapters and optimizer state shard fine there), strategy ddp, or drop quantization."
        )
    return None


ZERO3_NOT_QUANTIZED = Rule(
    name="zero3_not_quantized",
    fields=("distributed", "model"),
    description="DeepSpeed ZeRO-3 is not combined with a 4/8-bit (bitsandbytes) model.",
    check=_zero3_quantized,
)


def _quantized_needs_peft(cfg: Mapping[str, Any]) -> str | None:
    model = cfg.get("model")
    quantization = getattr(model, "quantization", None)
    if quantization and getattr(model, "peft", None) is None:
        return (
            f"model.quantization={quantization!r} without model.peft: quantized weights are frozen, so only a LoRA "
            "adapter can train (QLoRA). Fix: add model.peft: {type: lora, r: 16}, or drop quantization."
        )
    return None


QUANTIZED_NEEDS_PEFT = Rule(
    name="quantized_needs_peft",
    fields=("model",),
    description="A 4/8-bit model trains through a LoRA adapter (QLoRA): quantization needs peft.",
    check=_quantized_needs_peft,
)


def _vllm_settings_need_vllm(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("use_vllm"):
        return None
    if cfg.get("vllm_mode") == "server" or cfg.get("vllm_server_base_url"):
        what = "vllm_server_base_url is set" if cfg.get("vllm_server_base_url") else "vllm_mode='server' is set"
        return (
            f"{what} but use_vllm is false, so TRL generates with transformers and ignores it. Fix: set "
            "use_vllm: true (textrl.rollout.vllm.vllm_config(mode='server', ...) sets both), or remove it."
        )
    return None


VLLM_SETTINGS_NEED_VLLM = Rule(
    name="vllm_settings_need_use_vllm",
    fields=("use_vllm", "vllm_mode", "vllm_server_base_url"),
    description="vLLM server settings are not given without use_vllm (TRL would ignore them).",
    check=_vllm_settings_need_vllm,
)


def _best_needs_metric(cfg: Mapping[str, Any]) -> str | None:
    if cfg.get("save_strategy") == "best" and not cfg.get("metric_for_best_model"):
        return (
            "save_strategy='best' needs metric_for_best_model to say which metric is best (transformers raises at "
            "trainer start otherwise). Fix: set metric_for_best_model, e.g. 'eval_loss', or use save_strategy 'steps'."
        )
    return None


BEST_NEEDS_METRIC = Rule(
    name="best_checkpoint_metric",
    fields=("save_strategy", "metric_for_best_model"),
    description="save_strategy best needs metric_for_best_model.",
    check=_best_needs_metric,
)


_METRIC_SCHEDULERS = ("reduce_lr_on_plateau", "greedy")


def _plateau_needs_eval(cfg: Mapping[str, Any]) -> str | None:
    scheduler = cfg.get("lr_scheduler_type")
    if scheduler in _METRIC_SCHEDULERS and cfg.get("eval_strategy") == "no":
        return (
            f"lr_scheduler_type={scheduler!r} changes the rate when the evaluation metric stops improving, but "
            "eval_strategy is 'no' (transformers refuses it). Fix: set eval_strategy to 'steps' or 'epoch' (and give "
            "an eval dataset), or choose another scheduler, e.g. 'cosine'."
        )
    return None


PLATEAU_NEEDS_EVAL = Rule(
    name="plateau_scheduler_needs_eval",
    fields=("lr_scheduler_type", "eval_strategy"),
    description="lr_scheduler_type reduce_lr_on_plateau or greedy needs an eval_strategy other than no.",
    check=_plateau_needs_eval,
)


def _whole_steps(name: str) -> Rule:
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


def _composed_weights(cfg: Mapping[str, Any]) -> str | None:
    reward = cfg.get("reward")
    weights, rewards = getattr(reward, "weights", None), getattr(reward, "compose", None)
    if weights is not None and rewards is not None and len(weights) != len(rewards):
        return (
            f"reward.weights has {len(weights)} values for {len(rewards)} rewards in reward.compose. "
            "Fix: give one weight per reward, or drop weights to weigh all equally."
        )
    return None


COMPOSED_REWARD_WEIGHTS = Rule(
    name="composed_reward_weights",
    fields=("reward",),
    description="reward.weights has one weight per reward in reward.compose.",
    check=_composed_weights,
)


def _test_split_share(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("dataset"), "test_split_size", None)
    if isinstance(held_out, float) and held_out >= 1:
        return (
            f"dataset.test_split_size={held_out}: a share of the rows is below 1, and a number of rows is a whole "
            "number (as datasets' train_test_split reads it). Fix: e.g. 0.1, or 500."
        )
    return None


TEST_SPLIT_SHARE = Rule(
    name="test_split_share",
    fields=("dataset",),
    description="dataset.test_split_size is a share below 1 or a whole number of rows.",
    check=_test_split_share,
)


def _one_eval_set(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("dataset"), "test_split_size", None)
    if held_out is not None and cfg.get("eval_dataset") is not None:
        return (
            f"dataset.test_split_size={held_out} holds rows out as the evaluation set, and eval_dataset gives one "
            "too. Fix: keep one: drop test_split_size to train on every row, or drop eval_dataset."
        )
    return None


ONE_EVAL_SET = Rule(
    name="one_eval_set",
    fields=("dataset", "eval_dataset"),
    description="dataset.test_split_size (rows held out for evaluation) and eval_dataset are not both given.",
    check=_one_eval_set,
)


def _mixture_shares(cfg: Mapping[str, Any]) -> str | None:
    for key in ("dataset", "eval_dataset"):
        parts = getattr(cfg.get(key), "mixture", None) or []
        with_fraction = [p for p in parts if p.fraction is not None]
        if with_fraction and len(with_fraction) != len(parts):
            return (
                f"{key}.mixture: fraction is set on {len(with_fraction)} of {len(parts)} parts; TRL's shares are "
                "normalised across all of them. Fix: set fraction on every part, or on none."
            )
        if with_fraction and any(p.weight is not None for p in parts):
            return (
                f"{key}.mixture: fraction (TRL's share of the mixture) and weight (a share of each dataset's rows) "
                "are two ways of sizing a mixture. Fix: use one of them."
            )
    return None


MIXTURE_SHARES = Rule(
    name="mixture_shares",
    fields=("dataset", "eval_dataset"),
    description="A dataset mixture sizes its parts one way: fraction on every part (TRL's) or on none, and not "
    "beside weight.",
    check=_mixture_shares,
)


def _eval_rows_not_held_out(cfg: Mapping[str, Any]) -> str | None:
    held_out = getattr(cfg.get("eval_dataset"), "test_split_size", None)
    if held_out is not None:
        return (
            f"eval_dataset.test_split_size={held_out}: rows held out of the evaluation set would be used by "
            "nothing. Fix: drop it (test_split_size belongs to dataset:, where it makes the evaluation set)."
        )
    return None


EVAL_ROWS_NOT_HELD_OUT = Rule(
    name="eval_rows_not_held_out",
    fields=("eval_dataset",),
    description="eval_dataset has no test_split_size (only dataset: holds rows out, as the evaluation set).",
    check=_eval_rows_not_held_out,
)

COMMON_RULES = (
    PRECISION,
    TEST_SPLIT_SHARE,
    ONE_EVAL_SET,
    MIXTURE_SHARES,
    EVAL_ROWS_NOT_HELD_OUT,
    ZERO3_NOT_QUANTIZED,
    QUANTIZED_NEEDS_PEFT,
    BEST_NEEDS_METRIC,
    PLATEAU_NEEDS_EVAL,
    *(_whole_steps(n) for n in ("logging_steps", "save_steps", "eval_steps")),
)
"""Rules about the training options every algorithm shares."""
