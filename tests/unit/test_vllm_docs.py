"""vLLM server mode is documented with the command TRL asks for, never with the deprecated `trl vllm-serve`.

TRL 1.13 to 1.16 deprecate `trl vllm-serve` (removed in TRL 2.0): it only runs vLLM's own server,
`VLLM_SERVER_DEV_MODE=1 vllm serve MODEL` plus the flags TRL's client needs (trl/scripts/vllm_serve.py). TextRL's
docs, messages, spec descriptions and generated files give that command (`textrl.rollout.vllm.VLLM_SERVE`); the
old one may be named only where the same passage says it is deprecated.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from textrl import ConfigError, spec
from textrl.rollout.vllm import SERVER_FLAGS, VLLM_OPTIONS, VLLM_SERVE, vllm_config

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("README.md", "docs", "textrl", "spec", "generated", "examples", "bench")
SUFFIXES = {".md", ".py", ".json", ".yaml", ".yml", ".txt", ".sh", ".jinja", ".lua", ".jsonc"}
OLD = re.compile(r"trl\s+vllm[-_]serve")
WINDOW = 200  # characters either side of a mention that must say it is deprecated


def _flat(text: str) -> str:
    return " ".join(text.split())


def _files() -> list[Path]:
    found = []
    for name in SCANNED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        found += [p for p in candidates if p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return found


def recommendations(text: str) -> list[int]:
    """Lines of `text` that name `trl vllm-serve` without saying, within WINDOW characters, that it is deprecated."""
    lines = []
    for match in OLD.finditer(text):
        around = text[max(0, match.start() - WINDOW) : match.end() + WINDOW]
        if "deprecated" not in _flat(around).lower():
            lines.append(text.count("\n", 0, match.start()) + 1)
    return lines


def test_the_checker_tells_a_recommendation_from_a_deprecation_note() -> None:
    assert recommendations("Set vllm_mode: server and start `trl vllm-serve --model M`.") == [1]
    assert recommendations("one\nthe server sets it: `trl  vllm_serve --port ...`") == [2]
    assert recommendations("`trl vllm-serve` only runs this command and is deprecated.") == []
    assert recommendations(f"`vllm serve MODEL` ({VLLM_SERVE})") == []


def test_the_scan_covers_the_docs_code_spec_and_generated_files() -> None:
    scanned = {p.relative_to(ROOT).parts[0] for p in _files()}
    assert scanned == set(SCANNED)
    assert ROOT / "generated/cli_flags.py" in _files() and ROOT / "textrl/rollout/vllm.py" in _files()


def test_trl_vllm_serve_is_recommended_nowhere() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _files()
        for line in recommendations(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, (
        f"`trl vllm-serve` is deprecated (TRL 1.13 to 1.16; removed in 2.0) but recommended at {found}. "
        f"Fix: name the command TRL asks for instead, `{VLLM_SERVE}` (textrl.rollout.vllm.VLLM_SERVE), or say "
        "in the same passage that the old one is deprecated."
    )


def test_the_command_is_the_one_trl_builds() -> None:
    """VLLM_SERVE: TRL's dev-mode variable, `vllm serve MODEL`, and the flags TRL's own `trl vllm-serve` appends
    (weight transfer over NCCL, processed log-probabilities, no log-probability cap), with the same values."""
    from trl.scripts.vllm_serve import ScriptArguments, build_command

    env, *command = shlex.split(VLLM_SERVE)
    assert env == "VLLM_SERVER_DEV_MODE=1" and command[:3] == ["vllm", "serve", "MODEL"]
    ours = command[3:]
    trl = build_command(ScriptArguments(model="MODEL"))
    theirs = trl[trl.index("--weight-transfer-config") :]
    assert ours[0::2] == theirs[0::2]  # the flags, in TRL's order
    assert json.loads(ours[1]) == json.loads(theirs[1]) == {"backend": "nccl"}
    assert ours[3::2] == theirs[3::2]


def test_the_docs_and_the_option_give_the_command() -> None:
    descriptions = {o.description for a in spec.ALGORITHMS for o in a.options if o.name == "vllm_mode"}
    (description,) = descriptions
    for where, text in (
        ("spec: vllm_mode's description", description),
        ("generated/docs/cli.md", (ROOT / "generated/docs/cli.md").read_text(encoding="utf-8")),
        ("README.md", (ROOT / "README.md").read_text(encoding="utf-8")),
        ("docs/migration.md", (ROOT / "docs/migration.md").read_text(encoding="utf-8")),
    ):
        assert VLLM_SERVE in _flat(text), f"{where} should give the server command `{VLLM_SERVE}`"


def test_a_colocate_only_setting_in_server_mode_names_the_servers_flag() -> None:
    assert set(SERVER_FLAGS) == {key for key, (_, modes) in VLLM_OPTIONS.items() if modes == ("colocate",)}
    with pytest.raises(ConfigError) as info:
        vllm_config("server", max_model_length=4096, gpu_memory_utilization=0.5, check_installed=False)
    text = str(info.value)
    assert "max_model_length: does not apply to mode='server': the server sets it: `vllm serve MODEL " in text
    assert "--max-model-len ...`" in text and "--gpu-memory-utilization ...`" in text
