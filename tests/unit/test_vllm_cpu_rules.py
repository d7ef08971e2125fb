"""What vLLM rollout cannot do without a CUDA GPU (vLLM's CPU build), refused before vLLM starts: server mode (TRL's
weight sync is NCCL only) and attention head sizes the CPU attention lacks. No torch or vLLM is imported here; the
same checks run end to end, with vLLM, in tests/vllm (the CI's vLLM leg)."""

from __future__ import annotations

from textrl import TextRLConfig
from textrl.rollout.vllm import CPU_HEAD_SIZES, cpu_refusals, head_size

TINY = {"hidden_size": 64, "num_attention_heads": 4}  # textrl:tiny: heads of 16
SMOLLM2 = {"hidden_size": 576, "num_attention_heads": 9}  # heads of 64


def config(**options: object) -> TextRLConfig:
    return TextRLConfig(algo="grpo", output_dir="out", use_vllm=True, **options)  # type: ignore[arg-type]


def test_head_size_from_head_dim_or_hidden_size() -> None:
    assert head_size(TINY) == 16 and head_size(SMOLLM2) == 64
    assert head_size({"hidden_size": 64, "num_attention_heads": 2, "head_dim": 128}) == 128
    assert head_size({}) is None and head_size(None) is None


def test_colocate_with_a_supported_head_size_runs_on_a_cpu() -> None:
    assert cpu_refusals(config(), SMOLLM2, cuda=False) == []
    assert 64 in CPU_HEAD_SIZES and 16 not in CPU_HEAD_SIZES


def test_server_mode_and_small_heads_are_refused_on_a_cpu_with_the_fix() -> None:
    found = cpu_refusals(config(vllm_mode="server"), TINY, cuda=False, model_name="textrl:tiny")
    assert [p.field for p in found] == ["vllm_mode", "use_vllm"]
    assert "got 'server' on a machine without a CUDA GPU" in found[0].message
    assert "NCCL" in found[0].message and "Fix: vllm_mode: colocate" in found[0].message
    assert "textrl:tiny has attention heads of size 16" in found[1].message
    assert "Fix: use_vllm: false" in found[1].message


def test_nothing_is_refused_with_cuda_or_without_vllm() -> None:
    assert cpu_refusals(config(vllm_mode="server"), TINY, cuda=True) == []
    plain = TextRLConfig(algo="grpo", output_dir="out")
    assert cpu_refusals(plain, TINY, cuda=False) == []
