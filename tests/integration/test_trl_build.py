"""Building the real TRL config object: bf16 on a CPU, `extra` checked against the installed TRL class, and the
distributed and vLLM settings. Imports trl (a few seconds, once per session)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from textrl import ConfigError, TextRLConfig
from textrl.engines.hardware import bf16_supported
from textrl.trl_build import build_trl_config

pytestmark = pytest.mark.slow


@pytest.fixture
def out(tmp_path: Path) -> str:
    return str(tmp_path / "run")


def test_bf16_auto_follows_the_hardware_and_true_runs_as_trl_runs_it(out: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """bf16 "auto" follows the hardware. An explicit True on a CPU-only machine is TRL's bf16 autocast on the CPU
    (the README spec's examples say bf16=True), with a warning; on a GPU without bf16 TRL refuses it, and so does
    TextRL, before the model loads. That GPU cannot exist here: `has_accelerator` is patched to say it does."""
    from textrl.trl_support.build import PrecisionWarning

    cfg = TextRLConfig(algo="grpo", output_dir=out)
    assert build_trl_config(cfg).bf16 is bf16_supported()
    explicit = TextRLConfig(algo="grpo", output_dir=out, bf16=True)
    if bf16_supported():
        assert build_trl_config(explicit).bf16 is True
    else:
        with pytest.warns(PrecisionWarning, match=r"bf16=True on a machine without a GPU: TRL runs bfloat16 autocast"):
            built = build_trl_config(explicit)
        assert built.bf16 is True and built.use_cpu is True
        monkeypatch.setattr("textrl.trl_support.build.has_accelerator", lambda: True)
        with pytest.raises(
            ConfigError, match=r"bf16: got True, but this machine's GPU has no bf16.*Fix: set bf16='auto'"
        ):
            build_trl_config(explicit)
    assert build_trl_config(TextRLConfig(algo="grpo", output_dir=out, bf16=False)).bf16 is False


def test_extra_reaches_trl(out: str) -> None:
    trl_cfg = build_trl_config(TextRLConfig(algo="grpo", output_dir=out, extra={"log_unique_prompts": True}))
    assert trl_cfg.log_unique_prompts is True


def test_extra_keys_of_a_newer_trl_warn_and_are_checked_at_build(out: str) -> None:
    from textrl.errors import UnknownTRLFieldWarning

    with pytest.warns(UnknownTRLFieldWarning, match=r"extra: log_unique_promts is not field\(s\) of trl\.GRPOConfig"):
        cfg = TextRLConfig(algo="grpo", output_dir=out, extra={"log_unique_promts": True})
    with pytest.raises(
        ConfigError,
        match=r"extra\.log_unique_promts: is not a field of the installed GRPOConfig\. Did you mean 'log_unique_prompts'\?",
    ):
        build_trl_config(cfg)


@pytest.mark.parametrize(
    ("extra", "option", "value"),
    [({"learning_rate": 1e-3}, "learning_rate", 1e-3), ({"gradient_checkpointing": False}, "gradient_checkpointing", False),
     ({"activation_checkpointing": False}, "gradient_checkpointing", False), ({"log_level": "info"}, "log_level", "info")],
)  # fmt: skip
def test_extra_keys_that_are_options_are_those_options(
    out: str, extra: dict[str, object], option: str, value: object
) -> None:
    """TRL scripts pass everything as TRL fields: in extra they land on the typed option (checked like one), and the
    same option set both ways is an error naming both."""
    cfg = TextRLConfig(algo="grpo", output_dir=out, extra=extra)
    assert getattr(cfg, option) == value and cfg.extra == {}  # type: ignore[attr-defined]
    assert getattr(build_trl_config(cfg), next(iter(extra))) == value
    with pytest.raises(ConfigError, match=rf"extra\.{next(iter(extra))}: sets the option {option}, which is also set"):
        TextRLConfig(algo="grpo", output_dir=out, extra=extra, **{option: value})


def test_extra_cannot_override_what_the_algorithm_fixes(out: str) -> None:
    with pytest.raises(ConfigError, match=r"extra\.loss_type: is fixed by algo='ipo'\. Fix: remove it from extra\."):
        build_trl_config(TextRLConfig(algo="ipo", output_dir=out, extra={"loss_type": ["sigmoid"]}))
    with pytest.raises(ConfigError, match=r"extra\.normalize_advantages: is fixed by algo='reinforce_pp'"):
        build_trl_config(TextRLConfig(algo="reinforce_pp", output_dir=out, extra={"normalize_advantages": False}))


def test_fsdp_becomes_transformers_fsdp_arguments(out: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL's config object gets fsdp=True and the fsdp_config TextRL wrote (activation checkpointing moved into
    FSDP). transformers sets FSDP_CPU_RAM_EFFICIENT_LOADING while building it: restored after the test. Without a GPU
    the build is refused; the refusal is set aside to see what a GPU machine's TRL config holds."""
    monkeypatch.setenv("FSDP_CPU_RAM_EFFICIENT_LOADING", "false")
    assert build_trl_config(TextRLConfig(algo="dpo", output_dir=out, distributed={"strategy": "ddp"})).deepspeed is None
    cfg = TextRLConfig(algo="grpo", output_dir=out, distributed={"strategy": "fsdp", "offload": "optimizer"})
    with pytest.raises(ConfigError, match=r"distributed\.strategy: got 'fsdp' on a machine without a GPU"):
        build_trl_config(cfg)  # this machine: accelerate would run DDP (tests/engines/test_fsdp.py)
    monkeypatch.setattr(
        "textrl.trl_support.build.fsdp_refusal", lambda *a, **k: None
    )  # what a GPU machine's build gets
    trl = build_trl_config(cfg)
    assert trl.fsdp is True and trl.activation_checkpointing is False
    assert {k: trl.fsdp_config[k] for k in ("version", "cpu_offload", "activation_checkpointing", "auto_wrap_policy")} == {
        "version": 2, "cpu_offload": True, "activation_checkpointing": True, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP"}  # fmt: skip


@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is not None, reason="deepspeed is installed here")
def test_deepspeed_without_the_package_names_the_extra(out: str) -> None:
    """This CPU machine has no deepspeed; the dict TRL would get is checked in tests/unit/test_distributed.py."""
    cfg = TextRLConfig(algo="dpo", output_dir=out, distributed={"strategy": "deepspeed", "zero_stage": 3})
    with pytest.raises(ConfigError, match=r"distributed\.strategy: strategy deepspeed needs the deepspeed package.*"
                                          r"Fix: pip install 'textrl\[deepspeed\]'"):  # fmt: skip
        build_trl_config(cfg)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_without_the_package_names_the_extra(out: str) -> None:
    cfg = TextRLConfig(algo="rloo", output_dir=out, use_vllm=True)
    with pytest.raises(ConfigError, match=r"use_vllm: use_vllm=True \(vLLM rollout\) needs the vllm package.*"
                                          r"Fix: pip install 'textrl\[vllm\]'"):  # fmt: skip
        build_trl_config(cfg)


@pytest.mark.parametrize("trl_config", ["trl.GRPOConfig", "trl.RLOOConfig"])
def test_vllm_config_keys_reach_trl_fields(trl_config: str) -> None:
    """Every option vllm_config can return is a TextRL option of the online algorithms whose TRL name is a field
    of TRL's config class (so a TRL rename is caught by the spec and the drift tests)."""
    import dataclasses
    import importlib

    from textrl.rollout.vllm import VLLM_OPTIONS
    from textrl.spec import BY_NAME

    module, _, name = trl_config.rpartition(".")
    fields = {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name))}
    algos = [a for a in ("grpo", "rloo", "reinforce_pp") if BY_NAME[a].trl_config == trl_config]
    assert algos
    for algo in algos:
        options = {o.name: o for o in BY_NAME[algo].options}
        for option in ("use_vllm", "vllm_mode", *(spec_name for spec_name, _ in VLLM_OPTIONS.values())):
            assert options[option].trl_name in fields, (algo, option)
