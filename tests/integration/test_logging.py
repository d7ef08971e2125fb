"""report_to reaches TRL: a run with tensorboard writes an event file where the manifest says the logs went."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textrl import OnlineTrainer, load_model, spec
from textrl.data import from_list

from .conftest import fast, letters, rows_for

pytestmark = pytest.mark.slow


def test_tensorboard_event_file_is_written_where_the_manifest_says(tiny: Path, tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model, tok, _ = load_model(str(tiny), load_ref=False)
    cfg = fast("grpo", tmp_path / "run", report_to=["tensorboard"], log_completions=True)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=cfg,
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format)))  # fmt: skip
    trainer.train()
    logging = json.loads((tmp_path / "run/textrl_manifest.json").read_text())["logging"]
    assert logging["report_to"] == ["tensorboard"]
    assert logging["tensorboard"] == str(tmp_path / "run/runs")
    events = list(Path(logging["tensorboard"]).rglob("events.out.tfevents.*"))
    assert len(events) == 1, events
    accumulator = EventAccumulator(str(events[0].parent))
    accumulator.Reload()
    tags = set(accumulator.Tags()["scalars"])
    assert {"train/loss", "train/reward", "train/rewards/letters/mean"} <= tags, sorted(tags)
    assert len(accumulator.Scalars("train/reward")) == 2  # max_steps=2, logging_steps=1


def test_manifest_says_no_integration_when_report_to_is_none(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=fast("grpo", tmp_path / "run"),
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format)))  # fmt: skip
    trainer.train()
    logging = json.loads((tmp_path / "run/textrl_manifest.json").read_text())["logging"]
    assert logging["report_to"] == [] and "tensorboard" not in logging
    assert logging["log_history"] == str(tmp_path / "run/log_history.json")
