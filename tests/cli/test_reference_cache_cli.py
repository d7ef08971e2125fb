"""textrl-train with the reference cache: the dry run forecasts a miss, the run fills the cache without loading a
reference copy, the next dry run forecasts a hit (also for a beta sweep), and a change to max_length misses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .conftest import write

BIN = Path(sys.executable).parent

WORDS = ["apple", "river", "sea", "dog", "tree", "stone", "cloud", "fire"]
DPO = """algo: dpo
output_dir: out/dpo
max_steps: 4
per_device_train_batch_size: 4
max_length: 32
learning_rate: 1e-3
save_strategy: "no"
gradient_checkpointing: false
reference_cache_dir: cache
model: {name: "textrl:tiny"}
dataset: {path: pairs.jsonl}
"""


def test_dry_run_forecast_and_a_run_without_a_reference_copy(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": f" {WORDS[(i + 3) % 8]}"}
            for i, w in enumerate(WORDS * 2)]  # fmt: skip
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    config = write(tmp_path / "dpo.yaml", DPO)

    dry = cli("textrl-train", "--config", str(config), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "reference cache: on, miss: computed once, then stored (auto: the run draws 16 training rows" in dry.stdout

    run = cli("textrl-train", "--config", str(config))
    assert run.returncode == 0, run.stderr
    assert "reference log-probs of the train set stored in" in run.stderr
    assert (tmp_path / "cache" / "entries").is_dir()

    for flags in ((), ("--beta", "0.5"), ("--loss-type", "ipo")):
        again = cli("textrl-train", "--config", str(config), "--dry-run", "--overwrite", *flags)
        assert "reference cache: on, hit: the reference model will not run" in again.stdout, (flags, again.stdout)
    shorter = cli("textrl-train", "--config", str(config), "--dry-run", "--overwrite", "--max-length", "24")
    assert "reference cache: on, miss" in shorter.stdout
    short = cli("textrl-train", "--config", str(config), "--dry-run", "--overwrite", "--max-steps", "2")
    assert "reference cache: on, hit" in short.stdout  # a hit is used however much of the data the run sees
    part = cli("textrl-train", "--config", str(config), "--dry-run", "--overwrite", "--max-steps", "2",
               "--max-length", "20")  # fmt: skip
    assert "reference cache: off (auto: the run draws 8 of the 16 training rows" in part.stdout

    rerun = cli("textrl-train", "--config", str(config), "--overwrite", "--beta", "0.5")
    assert rerun.returncode == 0, rerun.stderr
    assert "read from the reference cache" in rerun.stderr and "the reference model does not run" in rerun.stderr


def test_a_lora_run_in_a_new_process_reads_what_the_last_one_stored(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The next process's LoRA adapter is drawn afresh; its reference pass is still the base model's, and so is
    its key."""
    config = _pairs(tmp_path)
    lora = 'model: {name: "textrl:tiny", peft: {type: lora, r: 4, target_modules: [q_proj, v_proj]}}'
    text = config.read_text().replace('model: {name: "textrl:tiny"}', lora).replace("max_steps: 2", "max_steps: 4")
    config.write_text(text, encoding="utf-8")  # 4 steps of 4: every row once, so auto fills the cache
    first = cli("textrl-train", "--config", str(config))
    assert first.returncode == 0, first.stderr
    assert "reference log-probs of the train set stored in" in first.stderr
    second = cli("textrl-train", "--config", str(config), "--overwrite", "--beta", "0.5")
    assert second.returncode == 0, second.stderr
    assert "read from the reference cache" in second.stderr


def _pairs(tmp_path: Path) -> Path:
    rows = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": f" {WORDS[(i + 3) % 8]}"}
            for i, w in enumerate(WORDS * 2)]  # fmt: skip
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return write(tmp_path / "dpo.yaml", DPO.replace("max_steps: 4", "max_steps: 2"))


def test_two_processes_fill_the_cache_once_and_both_read_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """accelerate launch, 2 processes (gloo on CPU): process 0 names and writes the entry, both read it next time."""
    _pairs(tmp_path)
    wrote = cli("textrl-train", "--config", "dpo.yaml", "--write-accelerate-config", "acc.yaml", "--num-processes", "2")
    assert wrote.returncode == 0, wrote.stderr
    launch = (str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train", "--config",
              "dpo.yaml", "--overwrite")  # fmt: skip
    first = cli(*launch, timeout=240)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "2 of the" not in first.stderr and first.stderr.count("reference log-probs of the train set stored") == 1
    (entry,) = (tmp_path / "cache" / "entries").iterdir()
    second = cli(*launch, "--beta", "0.3", timeout=240)
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.stderr.count("read from the reference cache") == 1  # printed by process 0; both read it
    assert [p.name for p in (tmp_path / "cache" / "entries").iterdir()] == [entry.name]
    # TRL's own precompute with the cache off: raw TRL fails with 2 processes on in-memory data (rank 1 looks for
    # the result in its own temporary folder); TextRL hands the result over through output_dir, and keeps nothing
    third = cli(*launch, "--reference-cache", "off", "--precompute-ref-log-probs", timeout=240)
    assert third.returncode == 0, third.stderr[-3000:]
    assert "reference cache: off (reference_cache: off)" in third.stderr
    assert not [p for p in (tmp_path / "out" / "dpo").iterdir() if p.name.startswith(".textrl-reference")]
    assert [p.name for p in (tmp_path / "cache" / "entries").iterdir()] == [entry.name]


def test_the_cli_builds_no_reference_copy_while_the_cache_is_used(
    textrl_home: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """textrl-train's own trainer construction (run.build.build_trainer), in this process so the models are seen."""
    from textrl.run.assemble import assemble
    from textrl.run.build import build_trainer

    monkeypatch.setenv("TEXTRL_HOME", str(textrl_home))
    monkeypatch.chdir(tmp_path)
    rows = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": f" {WORDS[(i + 3) % 8]}"}
            for i, w in enumerate(WORDS * 2)]  # fmt: skip
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    config = write(tmp_path / "dpo.yaml", DPO)
    for setting, loaded in (("off", True), ("auto", False)):
        run = assemble(config, {}, {}, [f"reference_cache={setting}"])
        trainer = build_trainer(run, run.config)
        assert (trainer.ref_model is not None) is loaded, setting  # type: ignore[attr-defined]
        assert (trainer.trl_trainer.ref_model is not None) is loaded, setting
