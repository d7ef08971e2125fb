"""What TRL users carry over works as they expect: a reference model passed to an online trainer is the one TRL
uses (one copy, not two), and bf16=True on a CPU runs as TRL runs it, which the dry run predicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl import ConfigError, OnlineTrainer, load_model
from textrl.data import from_list

from .conftest import fast, letters

pytestmark = pytest.mark.slow


def test_a_passed_reference_is_the_one_trl_uses(tiny: Path, tmp_path: Path) -> None:
    """The README spec's RLOO example passes ref_model=ref; it used to be checked, then dropped while TRL loaded a
    second copy from the checkpoint."""
    model, tok, ref = load_model(str(tiny))
    assert ref is not None
    trainer = OnlineTrainer(model=model, ref_model=ref, tokenizer=tok, reward=letters,
                            train_dataset=from_list(["Say hi.", "Say yes."] * 8), config=fast("rloo", tmp_path))  # fmt: skip
    assert trainer.trl_trainer.ref_model is ref
    trainer.train()
    assert "kl" in trainer.log_history[0]


def test_a_reference_trl_would_not_use_is_refused(tiny: Path, tmp_path: Path) -> None:
    model, tok, ref = load_model(str(tiny))
    data = from_list(["Say hi."] * 8)
    with pytest.raises(ConfigError, match=r"ref_model: would not be used: beta=0, so TRL computes no KL term"):
        OnlineTrainer(model=model, ref_model=ref, tokenizer=tok, reward=letters, train_dataset=data,
                      config=fast("grpo", tmp_path, beta=0.0))  # fmt: skip
    lora, tok, _ = load_model(str(tiny), peft={"type": "lora", "r": 4})
    with pytest.raises(ConfigError, match=r"ref_model: would not be used: the policy is a LoRA \(PEFT\) model"):
        OnlineTrainer(model=lora, ref_model=ref, tokenizer=tok, reward=letters, train_dataset=data,
                      config=fast("grpo", tmp_path, beta=0.04))  # fmt: skip


def test_dry_run_predicts_bf16(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bf16: true` used to pass the dry run and then stop the run; the dry run makes the run's own check now."""
    from textrl.cli.train import train_main
    from textrl.engines.hardware import bf16_supported

    (tmp_path / "r.py").write_text("def f(prompts, completions, **_):\n    return [1.0] * len(completions)\n")
    (tmp_path / "c.yaml").write_text(
        f"algo: grpo\noutput_dir: {tmp_path / 'out'}\nbf16: true\nmodel: {{name: textrl:tiny}}\n"
        "dataset: {list: [a, b, c, d, e, f, g, h]}\nreward: r:f\n"
    )
    assert train_main(["--config", str(tmp_path / "c.yaml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    if bf16_supported():
        assert "precision: bf16 on this machine's bf16-capable GPU" in out
    else:
        assert "precision: bf16=True on a machine without a GPU: TRL runs bfloat16 autocast on the CPU" in out
