"""The reference cache: the same metrics with and without it, no reference pass on a hit, a miss whenever anything
the reference log-probs depend on changes, and an entry that is whole or absent.

TRL's DPOTrainer and KTOTrainer precompute reference log-probs in their constructor, so most tests build a trainer
without training it; `compute_ref_log_probs` calls are counted to tell a hit (none) from a miss.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from textrl import PreferenceTrainer, TextRLConfig, load_model
from textrl.data import from_list

from .conftest import rows_for

TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}
COMMON = {"max_steps": 4, "logging_steps": 1, "save_strategy": "no", "seed": 7, "learning_rate": 1e-3,
          "per_device_train_batch_size": 4, "max_length": 32, "gradient_checkpointing": False, "report_to": ["none"]}  # fmt: skip


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the reference forwards of TRL's precompute (DPOTrainer and KTOTrainer.compute_ref_log_probs)."""
    from trl import DPOTrainer, KTOTrainer

    calls = {"n": 0}
    for cls in (DPOTrainer, KTOTrainer):
        original = cls.compute_ref_log_probs

        def counting(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            calls["n"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "compute_ref_log_probs", counting)
    return calls


def _trainer(tiny: Path, out: Path, cache: Path, algo: str = "dpo", rows: list[dict[str, Any]] | None = None,
             with_ref: bool = False, model: Any = None, **options: Any) -> PreferenceTrainer:  # fmt: skip
    cfg = TextRLConfig(algo=algo, output_dir=str(out), reference_cache_dir=str(cache), **(COMMON | options))
    policy, tok, ref = load_model(str(tiny), load_ref=with_ref)
    data = rows if rows is not None else rows_for(cfg.algorithm().data_format, 16)
    return PreferenceTrainer(model=model if model is not None else policy, ref_model=ref, tokenizer=tok,
                             train_dataset=from_list(data), config=cfg)  # fmt: skip


def _logs(trainer: PreferenceTrainer) -> list[dict[str, Any]]:
    trainer.train()
    return [{k: v for k, v in h.items() if k not in TIMING} for h in trainer.log_history]


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert len(a) == len(b) and len(a) > 1
    for x, y in zip(a, b, strict=True):
        assert set(x) == set(y)
        for key in x:
            assert x[key] == pytest.approx(y[key], rel=1e-5, abs=1e-7), key


@pytest.mark.parametrize("algo", ["dpo", "kto"])
def test_cached_run_logs_what_an_uncached_run_logs(
    algo: str, tiny: Path, tmp_path: Path, counted: dict[str, int]
) -> None:
    """Same seed, same data: without the cache (TRL's reference model in the loop), filling it, reading it."""
    cache = tmp_path / "cache"
    plain = _trainer(tiny, tmp_path / "off", cache, algo, with_ref=True, reference_cache="off")
    assert plain.trl_trainer.ref_model is not None and not plain.reference_cache.active
    without = _logs(plain)
    assert not cache.exists()

    counted["n"] = 0
    filling = _trainer(tiny, tmp_path / "miss", cache, algo, reference_cache="on")
    assert counted["n"] > 0 and filling.reference_cache_used == {"train": False}
    assert filling.trl_trainer.ref_model is None  # precomputed with the policy's initial weights: no copy loaded
    missed = _logs(filling)

    counted["n"] = 0
    reading = _trainer(tiny, tmp_path / "hit", cache, algo)  # auto: the forecast finds the entry
    assert reading.reference_cache.active and reading.reference_cache.hit
    assert reading.reference_cache_used == {"train": True}
    assert reading.trl_trainer.ref_model is None
    hit = _logs(reading)
    assert counted["n"] == 0  # no reference forward, before or during training

    _same(without, missed)
    _same(without, hit)
    manifest = json.loads((tmp_path / "hit" / "textrl_manifest.json").read_text())
    assert "precompute_ref_log_probs" in json.dumps(manifest)


def test_lora_runs_read_the_base_models_entry(tiny: Path, tmp_path: Path, counted: dict[str, int]) -> None:
    """A LoRA policy's reference pass runs the base model with TRL's frozen copy of the fresh adapter, whose B is
    zero, so it is the base model's pass exactly: an entry a full fine-tuning run filled serves LoRA runs of any
    rank, seed or beta, and their logs equal an uncached LoRA run's. An adapter that already changes the output
    (B not zero, as a pretrained one's) has entries of its own."""
    import torch

    cache = tmp_path / "cache"

    def lora(name: str, r: int = 4, seed: int = 42, nonzero: bool = False, **options: Any) -> PreferenceTrainer:
        torch.manual_seed(r * 100 + seed)  # a fresh process's random state
        model, _, ref = load_model(str(tiny), peft={"type": "lora", "r": r, "target_modules": ["q_proj", "v_proj"]},
                                   seed=seed)  # fmt: skip
        assert ref is None
        if nonzero:
            with torch.no_grad():
                for param_name, param in model.named_parameters():
                    if "lora_B" in param_name:
                        param.fill_(0.01)
        return _trainer(tiny, tmp_path / name, cache, model=model, **options)

    full = _trainer(tiny, tmp_path / "full", cache, reference_cache="on")
    assert full.reference_cache_used == {"train": False} and counted["n"] > 0
    without = _logs(lora("off", reference_cache="off"))

    counted["n"] = 0
    hit = lora("hit", reference_cache="on")
    assert hit.reference_cache_used == {"train": True} and counted["n"] == 0
    _same(without, _logs(hit))
    for r, seed, beta in ((8, 42, 0.1), (4, 7, 0.3)):
        assert lora(f"r{r}-s{seed}", r, seed, beta=beta).reference_cache_used == {"train": True}, (r, seed)
    assert counted["n"] == 0
    assert list((cache / "weights").iterdir())  # the base digest, remembered under TRL's digest of each adapter

    trained = lora("nonzero", nonzero=True, reference_cache="on")
    assert trained.reference_cache_used == {"train": False} and counted["n"] > 0


def test_a_second_writer_keeps_the_first_entry(tmp_path: Path) -> None:
    """Parallel sweep jobs all miss on their first run and store the same key: the entry first in place stays (a
    reader may be reading it); a damaged one is replaced; a killed writer's staging is removed after a day, TRL's
    scratch of a long precompute only after a week."""
    import os
    import time

    from datasets import Dataset

    from textrl.reference_cache.store import load_entry, store_entry

    columns = Dataset.from_dict({"ref_chosen_logps": [0.0, 1.0], "ref_rejected_logps": [2.0, 3.0]})
    first = store_entry(tmp_path, "k", columns, {"job": 1})
    written = json.loads((first / "meta.json").read_text())["written"]
    assert store_entry(tmp_path, "k", columns, {"job": 2}) == first
    assert json.loads((first / "meta.json").read_text())["written"] == written
    assert json.loads((first / "meta.json").read_text())["covers"] == {"job": 1}

    shutil.rmtree(first / "data")  # damaged
    store_entry(tmp_path, "k", columns, {"job": 3})
    entry = load_entry(tmp_path, "k", 2)
    assert entry is not None and entry["ref_rejected_logps"] == [2.0, 3.0]

    entries = tmp_path / "entries"
    day_and_more, two_days = time.time() - 90000, time.time() - 2 * 86400
    for name, when in ((".partial-old", day_and_more), (".trl-running", two_days), (".partial-new", time.time())):
        (entries / name).mkdir()
        os.utime(entries / name, (when, when))
    store_entry(tmp_path, "other", columns, {"job": 4})
    assert sorted(p.name for p in entries.iterdir() if p.name.startswith(".")) == [".partial-new", ".trl-running"]


def test_partitioned_weights_are_refused(tiny: Path) -> None:
    """Under DeepSpeed ZeRO-3 a parameter holds an empty tensor and carries `ds_id`; TRL's hash of such a model
    names only its architecture. DeepSpeed cannot run on this CPU machine, so the mark is set by hand."""
    from textrl.reference_cache.key import require_whole_weights

    model, _, _ = load_model(str(tiny), load_ref=False)
    require_whole_weights(model)
    next(model.parameters()).ds_id = 0
    with pytest.raises(RuntimeError, match=r"partitioned by DeepSpeed ZeRO-3.* Fix: set reference_cache: off"):
        require_whole_weights(model)


def test_a_change_to_what_the_reference_reads_misses(
    tiny: Path, tmp_path: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loss settings reuse the entry; max_length, a changed row, other reference weights, another config with the
    same weights (rotary base, norm epsilon), live dropout, another transformers release, another attention
    implementation and (KTO) the batch its KL term pairs in do not."""
    cache = tmp_path / "cache"
    _trainer(tiny, tmp_path / "a", cache, reference_cache="on")
    first = counted["n"]
    assert first > 0

    def misses(**kwargs: Any) -> bool:
        before = counted["n"]
        trainer = _trainer(tiny, tmp_path / "b", cache, **{"reference_cache": "on", **kwargs})
        assert trainer.reference_cache_used["train"] is (counted["n"] == before)
        return counted["n"] > before

    assert not misses(beta=0.5, loss_type=["ipo"], learning_rate=1e-5, max_steps=9, label_smoothing=0.1)
    assert misses(max_length=24)
    rows = rows_for(TextRLConfig(algo="dpo", output_dir="x").algorithm().data_format, 16)
    rows[3] = {**rows[3], "chosen": rows[3]["chosen"] + " again"}
    assert misses(rows=rows)
    assert misses(ld_alpha=0.5)

    import torch

    policy, _, _ = load_model(str(tiny), load_ref=False)
    with torch.no_grad():
        next(policy.parameters()).add_(1e-3)
    assert misses(model=policy)

    for change in ({"rope_parameters": {"rope_theta": 500.0, "rope_type": "default"}}, {"rms_norm_eps": 0.1}):
        folder = tmp_path / f"tiny-{len(list(tmp_path.glob('tiny-*')))}"  # the same weights, another forward
        shutil.copytree(tiny, folder)
        config = json.loads((folder / "config.json").read_text()) | change
        (folder / "config.json").write_text(json.dumps(config))
        assert misses(model=load_model(str(folder), load_ref=False)[0]), change
    dropping, _, _ = load_model(str(tiny), load_ref=False)
    dropping.config.attention_dropout = 0.1
    assert misses(model=dropping)  # another config
    assert not misses(model=dropping)  # in eval mode (as loaded) the rate does nothing: the same pass
    dropping.train()  # TRL precomputes in the mode the model is in
    assert misses(model=dropping)  # now the pass draws dropout: its sample is keyed apart

    eager, _, _ = load_model(str(tiny), load_ref=False, attn_implementation="eager")
    assert eager.config._attn_implementation == "eager"
    assert misses(model=eager)
    from textrl.reference_cache import key as reference_key

    released = reference_key.libraries()
    monkeypatch.setattr(reference_key, "libraries", lambda: {**released, "transformers": "99.0"})
    assert misses()
    monkeypatch.undo()

    kto = _trainer(tiny, tmp_path / "k1", cache, "kto", reference_cache="on")
    assert kto.reference_cache_used == {"train": False}
    assert _trainer(tiny, tmp_path / "k2", cache, "kto", reference_cache="on").reference_cache_used == {"train": True}
    wider = _trainer(tiny, tmp_path / "k3", cache, "kto", reference_cache="on", per_device_train_batch_size=8)
    assert wider.reference_cache_used == {"train": False}  # KTO's KL pairs change with the batch


def test_a_damaged_or_interrupted_entry_is_never_read(
    tiny: Path, tmp_path: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    cache = tmp_path / "cache"
    from datasets import Dataset

    def cut_off(self: Any, path: str, *args: Any, **kwargs: Any) -> None:
        Path(path).mkdir(parents=True)
        (Path(path) / "data-00000-of-00001.arrow").write_bytes(b"half")
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(Dataset, "save_to_disk", cut_off)
        with pytest.raises(OSError, match="disk full"):
            _trainer(tiny, tmp_path / "a", cache, reference_cache="on")
    assert [p.name for p in (cache / "entries").iterdir()] == []  # no entry, and no staging folder left

    filled = _trainer(tiny, tmp_path / "b", cache, reference_cache="on")
    assert filled.reference_cache_used == {"train": False}
    (entry,) = (cache / "entries").iterdir()
    for arrow in (entry / "data").glob("*.arrow"):
        arrow.write_bytes(b"damaged")
    capsys.readouterr()
    again = _trainer(tiny, tmp_path / "c", cache, reference_cache="on")
    assert again.reference_cache_used == {"train": False}  # recomputed, not trusted
    assert "ignoring the damaged reference-cache entry" in capsys.readouterr().err
    assert _trainer(tiny, tmp_path / "d", cache).reference_cache_used == {"train": True}
    shutil.rmtree(cache)
    assert _trainer(tiny, tmp_path / "e", cache).reference_cache_used == {"train": False}  # deleting is safe


def test_auto_stays_off_when_the_run_sees_part_of_the_data(tiny: Path, tmp_path: Path) -> None:
    trainer = _trainer(tiny, tmp_path / "a", tmp_path / "cache", max_steps=2)  # 8 of 16 rows
    assert not trainer.reference_cache.active
    assert "draws 8 of the 16 training rows" in trainer.reference_cache.reason
    assert trainer.trl_trainer.args.precompute_ref_log_probs is False
    assert not (tmp_path / "cache").exists()
