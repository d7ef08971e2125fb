"""model.chat_template: Jinja text as it is, a .jinja file read from the working directory or the config's folder,
and a file that is not there refused with both places named. No torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl.errors import ConfigError
from textrl.models.template import template_text


def test_text_files_and_missing_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inline = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    assert template_text(inline) == inline and template_text(None) is None
    config_dir = tmp_path / "configs"
    config_dir.mkdir()
    (config_dir / "chat.jinja").write_text(inline, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert template_text("chat.jinja", config_dir) == inline  # the config's folder, after the working directory
    with pytest.raises(ConfigError, match=r"model\.chat_template: 'other\.j2' names a template file that is not in "
                       rf"the working directory {tmp_path} or the config's folder {config_dir}\. Fix: check the path"):  # fmt: skip
        template_text("other.j2", config_dir)


def test_a_template_that_does_not_compile_says_to_drop_the_option() -> None:
    from textrl.data.chat_template import compile_template

    with pytest.raises(ConfigError, match=r"does not compile: unexpected '\}'.*Fix: correct the template, or drop "
                       r"model\.chat_template to keep the model's own\."):  # fmt: skip
        compile_template("{% for m in messages %}{{ m.content }", "model.chat_template")
    assert compile_template("{{ messages[0]['content'] }}", "model.chat_template") is not None


def test_an_adapter_folder_needs_a_base_that_loads(tmp_path: Path) -> None:
    """A LoRA output folder as model.name: its adapter_config.json must name a base model, and that base must be
    loadable; a complete one is described as an adapter on its base. No torch."""
    import json

    from textrl.models.source import check_model_reference

    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}", encoding="utf-8")
    (base / "model.safetensors").write_bytes(_empty_safetensors())
    adapter = tmp_path / "sft"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(_empty_safetensors())
    (adapter / "vocab.json").write_text("{}", encoding="utf-8")
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"adapter_config\.json names no base model \(base_model_name_or_path\).*Fix"):
        check_model_reference(str(adapter), "model.name")
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(tmp_path / "gone")}))
    with pytest.raises(ConfigError, match=r"the base model in .*adapter_config\.json.*does not exist\. Fix: check"):
        check_model_reference(str(adapter), "model.name")
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(base)}))
    assert f"a LoRA adapter on {base}" in check_model_reference(str(adapter), "model.name")


def _empty_safetensors() -> bytes:
    header = b"{}"
    return len(header).to_bytes(8, "little") + header
