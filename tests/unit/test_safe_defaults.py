"""Safe by default: YAML cannot construct Python objects, remote code is off unless asked for, and a reward
reference imports only the module it names."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from textrl import ConfigError, TextRLConfig, load_model


def test_yaml_python_tags_are_refused_and_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(f'algo: grpo\noutput_dir: !!python/object/apply:os.system ["touch {marker}"]\n')
    with pytest.raises(ConfigError, match=r"evil\.yaml"):
        TextRLConfig.from_yaml(path)
    assert not marker.exists()


def test_remote_code_is_off_unless_set() -> None:
    cfg = TextRLConfig(algo="dpo", output_dir="o", model={"name": "m"})
    assert cfg.model.trust_remote_code is False  # type: ignore[attr-defined]
    assert inspect.signature(load_model).parameters["trust_remote_code"].default is False


def test_reward_reference_imports_only_the_named_module(tmp_path: Path) -> None:
    from textrl.rewards.refs import resolve_ref

    (tmp_path / "named_rewards.py").write_text("def score(prompts, completions, **_):\n    return [1.0]\n")
    (tmp_path / "bystander.py").write_text("raise SystemExit('bystander imported')\n")
    fn = resolve_ref("named_rewards:score", tmp_path, "reward")
    assert fn.__name__ == "score" and "named_rewards" in sys.modules and "bystander" not in sys.modules
