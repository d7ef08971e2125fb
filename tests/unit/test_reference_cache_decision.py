"""When a run uses the reference cache and what the dry run forecasts, decided before anything loads (no torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from textrl import TextRLConfig
from textrl.data import Rows
from textrl.errors import ConfigError
from textrl.reference_cache.plan import decide, forecast_key, rows_digest

PAIRS = Rows([{"prompt": f"p{i}", "chosen": f" c{i}", "rejected": f" r{i}"} for i in range(16)])


def _cfg(tmp_path: Path, **options: Any) -> Any:
    model = tmp_path / "model"
    if not model.is_dir():
        model.mkdir()
        (model / "model.safetensors").write_bytes(b"weights")
    return TextRLConfig.model_validate({"algo": "dpo", "output_dir": str(tmp_path / "out"), "max_steps": 4,
                                        "per_device_train_batch_size": 4, "model": {"name": str(model)},
                                        "reference_cache_dir": str(tmp_path / "cache"), **options})  # fmt: skip


def test_settings(tmp_path: Path) -> None:
    assert decide(_cfg(tmp_path), PAIRS, None, 1).active  # auto, 4 steps x 4 rows = every row once
    assert decide(_cfg(tmp_path, reference_cache=True), PAIRS, None, 1).reason == "reference_cache: on"
    off = decide(_cfg(tmp_path, reference_cache="off"), PAIRS, None, 1)
    assert not off.active and off.line() == "reference cache: off (reference_cache: off)"
    short = decide(_cfg(tmp_path, max_steps=2), PAIRS, None, 1)
    assert (
        not short.active and "draws 8 of the 16 training rows" in short.reason and "reference_cache: on" in short.reason
    )
    assert decide(_cfg(tmp_path, max_steps=2), PAIRS, None, 2).active  # two processes draw 16
    assert decide(_cfg(tmp_path, max_steps=2, precompute_ref_log_probs=True), PAIRS, None, 1).active
    synced = decide(_cfg(tmp_path, sync_ref_model=True), PAIRS, None, 1)
    assert not synced.active and "sync_ref_model" in synced.reason

    class Streamed:  # an IterableDataset has no length
        column_names = ("prompt", "chosen", "rejected")

    assert "streamed" in decide(_cfg(tmp_path), Streamed(), None, 1).reason
    grpo = TextRLConfig(algo="grpo", output_dir=str(tmp_path))
    assert not decide(grpo, PAIRS, None, 1).active


def test_sync_ref_model_with_the_cache_on_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"sync_ref_model=True and reference_cache='on' .* Fix: set reference_cache: auto"
    ):
        _cfg(tmp_path, sync_ref_model=True, reference_cache="on")
    with pytest.raises(ConfigError, match="reference_cache: got 'sometimes'"):
        _cfg(tmp_path, reference_cache="sometimes")


def test_zero3_keeps_the_cache_off(tmp_path: Path) -> None:
    """ZeRO-3 partitions the weights as they load, so the key could not fingerprint them: auto stays off, on is
    refused before anything loads; ZeRO-2 loads them whole."""
    zero3 = {"distributed": {"strategy": "deepspeed", "zero_stage": 3}}
    off = decide(_cfg(tmp_path, **zero3), PAIRS, None, 2)
    assert not off.active and "ZeRO-3 partitions the weights" in off.reason
    with pytest.raises(ConfigError, match=r"reference_cache='on' with distributed\.zero_stage=3: .* Fix: set "
                                          r"reference_cache: auto"):  # fmt: skip
        _cfg(tmp_path, **zero3, reference_cache="on")
    assert decide(_cfg(tmp_path, distributed={"strategy": "deepspeed", "zero_stage": 2}), PAIRS, None, 2).active


def test_the_forecast_key_follows_what_the_reference_reads(tmp_path: Path) -> None:
    base = forecast_key(_cfg(tmp_path), {"train": PAIRS})
    for same in ({"beta": 0.5}, {"loss_type": "ipo"}, {"learning_rate": 1e-6}, {"max_steps": 40}, {"seed": 3}):
        assert forecast_key(_cfg(tmp_path, **same), {"train": PAIRS}) == base, same
    for other in ({"max_length": 64}, {"ld_alpha": 0.5}, {"pad_to_multiple_of": 8}, {"truncation_mode": "keep_end"}):
        assert forecast_key(_cfg(tmp_path, **other), {"train": PAIRS}) != base, other
    changed = Rows([*PAIRS.rows[:-1], {"prompt": "p15", "chosen": " c15!", "rejected": " r15"}])
    assert forecast_key(_cfg(tmp_path), {"train": changed}) != base
    assert forecast_key(_cfg(tmp_path), {"train": PAIRS, "eval": PAIRS}) != base
    (tmp_path / "model" / "model.safetensors").write_bytes(b"other weights")  # the model folder's files changed
    assert forecast_key(_cfg(tmp_path), {"train": PAIRS}) != base


def test_a_lora_forecast(tmp_path: Path) -> None:
    """A fresh plain LoRA adapter adds exactly nothing (B is zero), so its run forecasts the full model's entry
    whatever its rank or seed; with DoRA or module copies the reference runs TRL's copy of the adapter, drawn from
    the seed, so the forecast follows the LoRA settings and the seed."""
    model = str(tmp_path / "model")
    full = forecast_key(_cfg(tmp_path), {"train": PAIRS})

    def key(peft: dict[str, Any], **options: Any) -> str:
        return forecast_key(_cfg(tmp_path, model={"name": model, "peft": {"type": "lora", **peft}}, **options),
                            {"train": PAIRS})  # fmt: skip

    assert key({"r": 4}) == key({"r": 16}, seed=3) == full
    dora = key({"r": 4, "use_dora": True})
    assert dora != full and key({"r": 4, "use_dora": True}, seed=3) != dora and key({"r": 8, "use_dora": True}) != dora
    assert key({"r": 4, "modules_to_save": ["lm_head"]}) != full
    assert forecast_key(_cfg(tmp_path, seed=3), {"train": PAIRS}) == full


def test_rows_digest_is_the_same_for_plain_rows_and_a_dataset() -> None:
    """The dry run reads a JSONL file as plain rows, the run as a datasets.Dataset (which fills missing keys)."""
    from datasets import Dataset

    rows = [{"prompt": "a", "chosen": "b", "rejected": "c", "x": 1}, {"prompt": "d", "chosen": "e", "rejected": "f"}]
    assert rows_digest(Rows(rows)) == rows_digest(Dataset.from_list(rows))


def test_forecast_hit_needs_every_entry_it_names(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    key = forecast_key(cfg, {"train": PAIRS, "eval": None})
    index = tmp_path / "cache" / "forecast" / f"{key}.json"
    index.parent.mkdir(parents=True)
    index.write_text(json.dumps({"entries": {"train": "abc"}}))
    assert not decide(cfg, PAIRS, None, 1).hit  # the entry it names is missing
    entry = tmp_path / "cache" / "entries" / "abc"
    entry.mkdir(parents=True)
    (entry / "meta.json").write_text("{}")
    hit = decide(_cfg(tmp_path, max_steps=1), PAIRS, None, 1)
    assert hit.active and hit.hit and "holds this run's" in hit.reason  # used even for a short run
    assert hit.line().startswith("reference cache: on, hit: the reference model will not run")


def test_memory_plan_counts_no_reference_while_precomputed(tmp_path: Path) -> None:
    from textrl.run.memory import plan

    assert plan(_cfg(tmp_path), 1000, None).reference > 0
    assert plan(_cfg(tmp_path, reference_cache="on"), 1000, None).reference == 0
    assert plan(_cfg(tmp_path, precompute_ref_log_probs=True), 1000, None).reference == 0
