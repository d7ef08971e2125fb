"""Rules about the pairwise loss options: loss lists and weights, and what each fixed loss needs."""

from collections.abc import Mapping, Sequence
from typing import Any

from ..choices import F_DIVERGENCE_LOSSES, NO_WEIGHTING_LOSSES
from ..model import Rule


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
        bad = [x for x in _losses(cfg, fixed) if x in NO_WEIGHTING_LOSSES]
        if cfg.get("use_weighting") and bad:
            return (
                f"use_weighting=True is not implemented for loss {', '.join(bad)} (TRL raises at trainer start). "
                "Fix: set use_weighting=False, or use another loss."
            )
        return None

    return Rule(
        name="use_weighting_aot",
        fields=("use_weighting", "loss_type"),
        description=f"use_weighting is not implemented for the losses {' and '.join(NO_WEIGHTING_LOSSES)}.",
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
