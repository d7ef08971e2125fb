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
