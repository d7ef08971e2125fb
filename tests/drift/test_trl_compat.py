"""textrl/trl_support/compat.py against the TRL it stands in for: TorchLogProbs gives what TRL's ChunkedLogProbFunction gives
(TRL >= 1.16 runs its torch tiles on a CPU), values and gradients, and is put in place only where TRL left a gap."""

from __future__ import annotations

import inspect

import pytest
import torch
import trl.trainer.utils as trl_utils

from textrl.trl_support.compat import OPTIONAL_OUTPUTS, TorchLogProbs, absorb_installed_trl

pytestmark = pytest.mark.slow


def inputs(seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(7, 16, generator=g, requires_grad=True)
    weight = torch.randn(50, 16, generator=g, requires_grad=True)
    bias = torch.randn(50, generator=g, requires_grad=True)
    return hidden, weight, bias, torch.randint(0, 50, (7,), generator=g)


@pytest.mark.parametrize(("softcap", "scale", "temperature"), [(None, 1.0, 1.0), (5.0, 0.5, 0.7)])
def test_torch_log_probs_equal_trls_kernel(softcap: float | None, scale: float, temperature: float) -> None:
    reference = getattr(trl_utils, "_ChunkedLogProbFunction", None)
    if reference is None or reference is TorchLogProbs:
        pytest.skip("this TRL release has no torch kernel of its own to compare with (TRL 1.15 without Triton)")
    if "outputs" not in inspect.signature(reference.forward).parameters:
        pytest.skip("TRL < 1.15: its own torch kernel, with an older signature, which TextRL leaves alone")
    results = []
    for function in (reference, TorchLogProbs):
        hidden, weight, bias, targets = inputs(0)
        out = function.apply(hidden, weight, bias, targets, temperature, 16, softcap, scale, OPTIONAL_OUTPUTS)
        (out[0].sum() + 0.3 * out[1].sum()).backward()
        results.append((out, hidden.grad, weight.grad, bias.grad))
    (theirs, *their_grads), (ours, *our_grads) = results
    for name, a, b in zip(("log_probs", *OPTIONAL_OUTPUTS), theirs, ours, strict=True):
        if name == "is_top1":
            assert torch.equal(a, b)
        else:
            torch.testing.assert_close(a.float(), b.float(), rtol=1e-5, atol=1e-5, msg=name)
    for a, b in zip(their_grads, our_grads, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_only_a_gap_is_filled() -> None:
    before = getattr(trl_utils, "_ChunkedLogProbFunction", None)
    done = absorb_installed_trl()
    if before is None and "_ChunkedLogProbFunction" in vars(trl_utils):
        assert trl_utils._ChunkedLogProbFunction is TorchLogProbs and done
    else:
        assert getattr(trl_utils, "_ChunkedLogProbFunction", None) is before and not done
