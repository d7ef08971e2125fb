"""The Python API keeps the CLI's rules (issue 31): a trainer replaced an earlier run's output_dir silently
(`examples/python_api.py` run twice), while textrl-train refused without --overwrite; a dataset too small for one
generation round trained 0 steps; chat rows reached a tokenizer without a chat template. Real TRL trainers on the
tiny model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from textrl import OnlineTrainer, load_model
from textrl.data import from_list
from textrl.errors import ConfigError, DataError

from ..doc_blocks import ROOT
from .conftest import fast, letters

pytestmark = pytest.mark.slow


def trainer(tiny: Path, output_dir: Path, rows: list[str] | None = None, **options: object) -> OnlineTrainer:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    data = from_list(rows if rows is not None else ["Say hi.", "Say yes.", "Say no.", "Say ok."] * 2)
    return OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=data,
                         config=fast("grpo", output_dir, max_steps=1, **options))  # fmt: skip


def test_a_second_train_into_a_finished_run_needs_overwrite(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    trainer(tiny, out).train()
    (out / "notes.txt").write_text("the user's notes on the first run")
    with pytest.raises(ConfigError, match=r"output_dir: .*run is not empty \(.*\)\. Fix: "
                       r"train\(resume_from_checkpoint=True\) to continue from its last checkpoint, "
                       r"train\(overwrite=True\) to delete it and start over, or another output_dir"):  # fmt: skip
        trainer(tiny, out).train()
    assert (out / "notes.txt").is_file()  # nothing replaced
    trainer(tiny, out).train(overwrite=True)  # the twin: asked for, and the folder is an earlier run
    assert not (out / "notes.txt").exists() and (out / "textrl_manifest.json").is_file()


def test_overwrite_replaces_only_an_earlier_run(tiny: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "thesis.txt").write_text("months of work")
    with pytest.raises(ConfigError, match=r"output_dir: .*notes is not an earlier run \(no textrl_manifest\.json; it "
                       r"holds thesis\.txt\), and train\(overwrite=True\) replaces only an earlier run"):  # fmt: skip
        trainer(tiny, notes).train(overwrite=True)
    assert (notes / "thesis.txt").read_text() == "months of work"


def test_a_dataset_too_small_for_one_round_is_refused(tiny: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"per_device_train_batch_size: one generation round takes 4 distinct "
                       r"prompts \(16 completions / num_generations=4\), but the training set has 2 rows"):  # fmt: skip
        trainer(tiny, tmp_path / "small", ["a", "b"], per_device_train_batch_size=16).train()
    assert not (tmp_path / "small" / "textrl_manifest.json").exists()  # refused before the run wrote anything
    assert trainer(tiny, tmp_path / "fits", ["a", "b", "c", "d"], per_device_train_batch_size=16).train()


def test_chat_rows_need_the_tokenizers_chat_template(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    chats = from_list([{"prompt": [{"role": "user", "content": w}]} for w in ("hi", "yes", "no", "ok")])
    tok.chat_template = None
    with pytest.raises(DataError, match=r"the training set: its rows are chat messages \(prompt is a list of \{role, "
                       r"content\}\), which TRL renders with the tokenizer's chat template, and .* has none"):  # fmt: skip
        OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=chats,
                      config=fast("grpo", tmp_path / "chat", max_steps=1))  # fmt: skip
    model, tok, _ = load_model(str(tiny), load_ref=False)  # the twin: the tiny model's own template

    def length(prompts: list[object], completions: list[list[dict[str, str]]], **_: object) -> list[float]:
        return [float(len(c[0]["content"])) for c in completions]

    OnlineTrainer(model=model, tokenizer=tok, reward=length, train_dataset=chats,
                  config=fast("grpo", tmp_path / "chat", max_steps=1)).train()  # fmt: skip


def test_the_python_example_run_twice_is_refused_the_second_time(tmp_path: Path, tiny: Path) -> None:
    import os

    home = tmp_path / "home"
    home.mkdir()
    (home / "tiny").symlink_to(tiny)  # textrl:tiny, built once for the session
    env = {**os.environ, "TEXTRL_HOME": str(home), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    example = ROOT / "examples" / "python_api.py"
    first = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    second = subprocess.run([sys.executable, str(example)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=600)  # fmt: skip
    assert second.returncode == 1 and "out/grpo is not empty" in second.stderr
    assert "train(overwrite=True) to delete it and start over" in second.stderr
