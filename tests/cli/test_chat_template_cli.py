"""`textrl-train --dry-run` on a model folder whose chat template uses transformers' {% generation %} markers
(TRL's Qwen 2.5 training template, ChatML like the tiny model): it renders the conversational rows through it and
reports their lengths; a template that does not compile, or that refuses a row, exits 2 with a message naming the
file, never a traceback."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import write

pytestmark = pytest.mark.slow

_TRL = importlib.util.find_spec("trl")  # found, not imported
assert _TRL is not None and _TRL.submodule_search_locations
TRAINING_TEMPLATE = Path(next(iter(_TRL.submodule_search_locations))) / "chat_templates" / "qwen2_5_training.jinja"

DPO = """algo: dpo
output_dir: out/dpo
max_steps: 2
per_device_train_batch_size: 4
max_length: 1024
gradient_checkpointing: false
model: {name: model}
dataset: {path: pairs.jsonl}
"""
LONG = "Repeat the word: sea -> " * 60  # 1,440 bytes: near max_length, so the dry run tokenizes it


def _pairs(prompt: list[dict[str, str]]) -> list[dict[str, object]]:
    row = {"chosen": [{"role": "assistant", "content": "sea"}], "rejected": [{"role": "assistant", "content": "no"}]}
    short = [[{"role": "user", "content": f"Repeat the word: {w} ->"}] for w in ("sea", "sky", "sun")]
    return [{"prompt": p, **row} for p in [*short, prompt]]


def _setup(textrl_home: Path, tmp_path: Path, template: str, prompt: list[dict[str, str]]) -> Path:
    """A copy of the tiny model with `template` as its chat template, a DPO config and conversational pairs."""
    model = tmp_path / "model"
    shutil.copytree(textrl_home / "tiny", model)
    write(model / "chat_template.jinja", template)
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(row) + "\n" for row in _pairs(prompt)))
    write(tmp_path / "dpo.yaml", DPO)
    return model


def test_generation_markers_render_and_the_lengths_are_checked(cli, textrl_home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    template = TRAINING_TEMPLATE.read_text(encoding="utf-8")
    assert "{%- generation %}" in template and "<|im_start|>" in template  # what this test is about
    _setup(textrl_home, tmp_path, template, [{"role": "user", "content": LONG}])
    done = cli("textrl-train", "--config", "dpo.yaml", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lengths: rows fit (context=2048, max_length=1024" in done.stdout
    assert "dry run: the run would start" in done.stdout


def test_the_rendering_dry_run_imports_no_transformers(textrl_home: Path, tmp_path: Path) -> None:
    _setup(textrl_home, tmp_path, TRAINING_TEMPLATE.read_text(encoding="utf-8"), [{"role": "user", "content": LONG}])
    code = ("import sys\nfrom textrl.cli import train_main\nrc = train_main(['--config', 'dpo.yaml', '--dry-run'])\n"
            "print('RC', rc, sorted(m for m in ('torch', 'transformers', 'trl') if m in sys.modules))")  # fmt: skip
    env = {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.stdout.strip().endswith("RC 0 []"), done.stdout + done.stderr


def test_a_template_that_does_not_compile_names_the_file(cli, textrl_home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    broken = TRAINING_TEMPLATE.read_text(encoding="utf-8").replace("{%- endgeneration %}", "{%- end_generation %}")
    _setup(textrl_home, tmp_path, broken, [{"role": "user", "content": "Hi"}])
    done = cli("textrl-train", "--config", "dpo.yaml", "--dry-run")
    assert done.returncode == 2, done.stdout + done.stderr
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "end_generation" in text)
    assert f"textrl-train: Invalid TextRL config: model/chat_template.jinja:{line}: chat_template: the chat " \
           "template does not compile: Encountered unknown tag 'end_generation'" in done.stderr  # fmt: skip
    assert "Fix: correct the template" in done.stderr and "Traceback" not in done.stderr


def test_a_template_that_refuses_a_row_names_the_file_and_its_message(cli, textrl_home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    refuses = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    template = refuses + TRAINING_TEMPLATE.read_text(encoding="utf-8")
    model = _setup(
        textrl_home, tmp_path, template, [{"role": "system", "content": LONG}, {"role": "user", "content": "Hi"}]
    )
    done = cli("textrl-train", "--config", "dpo.yaml", "--dry-run")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"textrl-train: {model / 'chat_template.jinja'}: the chat template refuses these messages: System role " \
           "not supported (messages: [{\"role\": \"system\"" in done.stderr  # fmt: skip
    assert "Traceback" not in done.stderr
