"""What TextRL absorbs of an older supported TRL release at run time (the config side is releases.py beside it).

TRL 1.15.0 computes every trainer's log-probabilities through its fused LM head, whose tiles only a Triton kernel
folds: with a torch build that has no Triton (CPU-only builds, macOS) `trl.trainer.utils._ChunkedLogProbFunction` is
None and the first training step fails with "AttributeError: 'NoneType' object has no attribute 'apply'". TRL 1.16
folds the tiles in torch on such devices. TextRL gives 1.15 the same result with plain torch ops (the whole logits
at once, as TRL did before its fused head), so a config that trains on 1.16 trains on 1.15 too. tests/drift checks
it against TRL's own ChunkedLogProbFunction, values and gradients.
"""

from __future__ import annotations

from typing import Any

OPTIONAL_OUTPUTS = ("entropy", "log_sum_sq_probs", "mean_logits", "is_top1")


class TorchLogProbs:
    """`ChunkedLogProbFunction.apply` in plain torch: per-token log-probabilities of `hidden @ weight.T (+ bias)`
    (scaled, soft-capped, divided by the temperature, as TRL transforms them) and, when asked in `outputs`, the
    entropy, log(sum p^2), the mean logit and whether the target is the (first) argmax; None for the others."""

    @staticmethod
    def apply(
        hidden: Any,
        weight: Any,
        bias: Any,
        targets: Any,
        temperature: float,
        chunk_size: int,
        final_logit_softcapping: float | None = None,
        logit_scale: float = 1.0,
        outputs: tuple[str, ...] = OPTIONAL_OUTPUTS,
    ) -> tuple[Any, Any, Any, Any, Any]:
        import torch

        device = hidden.device.type
        dtype = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else hidden.dtype
        z = hidden.to(dtype) @ weight.to(dtype).t()
        if bias is not None:
            z = z + bias.to(dtype)
        z = z.float() * logit_scale
        if final_logit_softcapping is not None:
            z = final_logit_softcapping * torch.tanh(z / final_logit_softcapping)
        z = z / temperature
        log_z = torch.logsumexp(z, dim=-1)
        log_probs = z.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - log_z
        logp = z - log_z.unsqueeze(-1)
        entropy = -(logp.exp() * logp).sum(-1) if "entropy" in outputs else None
        with torch.no_grad():  # TRL marks these three non-differentiable
            sq = torch.logsumexp(2 * logp, dim=-1) if "log_sum_sq_probs" in outputs else None
            mean = z.mean(-1) if "mean_logits" in outputs else None
            top1 = z.argmax(-1) == targets if "is_top1" in outputs else None
        return log_probs, entropy, sq, mean, top1


def absorb_installed_trl() -> list[str]:
    """Apply what the installed TRL release needs; returns what was done (empty on a release that needs nothing)."""
    done: list[str] = []
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:
        return done
    if "_ChunkedLogProbFunction" in vars(trl_utils) and trl_utils._ChunkedLogProbFunction is None:
        trl_utils._ChunkedLogProbFunction = TorchLogProbs  # type: ignore[misc,assignment]
        done.append("fused LM head without Triton: log-probabilities in plain torch (TRL 1.15)")
    return done
