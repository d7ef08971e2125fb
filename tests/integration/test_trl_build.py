"""Building the real TRL config object: bf16 on a CPU, `extra` checked against the installed TRL class, and the
distributed strategies not wired yet. Imports trl (a few seconds, once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl import ConfigError, TextRLConfig
from textrl.trl_build import bf16_supported, build_trl_config

pytestmark = pytest.mark.slow


@pytest.fixture
def out(tmp_path: Path) -> str:
    return str(tmp_path / "run")


def test_bf16_auto_follows_the_hardware_and_true_without_it_is_an_error(out: str) -> None:
    cfg = TextRLConfig(algo="grpo", output_dir=out)
    assert build_trl_config(cfg).bf16 is bf16_supported()
    explicit = TextRLConfig(algo="grpo", output_dir=out, bf16=True)
    if bf16_supported():
        assert build_trl_config(explicit).bf16 is True
    else:
        with pytest.raises(
            ConfigError, match=r"bf16: got True, but this machine has no bf16-capable GPU.*Fix: set bf16='auto'"
        ):
            build_trl_config(explicit)
    assert build_trl_config(TextRLConfig(algo="grpo", output_dir=out, bf16=False)).bf16 is False


def test_extra_reaches_trl(out: str) -> None:
    trl_cfg = build_trl_config(TextRLConfig(algo="grpo", output_dir=out, extra={"log_unique_prompts": True}))
    assert trl_cfg.log_unique_prompts is True


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (
            {"log_unique_promts": True},
            r"extra\.log_unique_promts: is not a field of the installed GRPOConfig\. Did you mean 'log_unique_prompts'\?",
        ),
        (
            {"learning_rate": 1e-3},
            r"extra\.learning_rate: is set by the TextRL option learning_rate\. Fix: remove it from extra and set learning_rate",
        ),
        (
            {"gradient_checkpointing": False},
            r"extra\.gradient_checkpointing: is set by the TextRL option gradient_checkpointing",
        ),
        (
            {"activation_checkpointing": False},
            r"extra\.activation_checkpointing: is set by the TextRL option gradient_checkpointing",
        ),
    ],
)
def test_extra_mistakes_are_named(out: str, extra: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        build_trl_config(TextRLConfig(algo="grpo", output_dir=out, extra=extra))


def test_extra_cannot_override_what_the_algorithm_fixes(out: str) -> None:
    with pytest.raises(ConfigError, match=r"extra\.loss_type: is fixed by algo='ipo'\. Fix: remove it from extra\."):
        build_trl_config(TextRLConfig(algo="ipo", output_dir=out, extra={"loss_type": ["sigmoid"]}))
    with pytest.raises(ConfigError, match=r"extra\.normalize_advantages: is fixed by algo='reinforce_pp'"):
        build_trl_config(TextRLConfig(algo="reinforce_pp", output_dir=out, extra={"normalize_advantages": False}))


def test_distributed_strategies_not_wired_yet_say_so(out: str) -> None:
    assert build_trl_config(TextRLConfig(algo="dpo", output_dir=out, distributed={"strategy": "ddp"})).deepspeed is None
    cfg = TextRLConfig(algo="dpo", output_dir=out, distributed={"strategy": "deepspeed", "zero_stage": 3})
    with pytest.raises(
        ConfigError,
        match=r"distributed\.strategy: got 'deepspeed', which the spec accepts but TextRL 1\.0 does not yet",
    ):
        build_trl_config(cfg)
