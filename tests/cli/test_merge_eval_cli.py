"""textrl-merge / textrl-dump produce a standalone checkpoint with the adapter's logits; textrl-eval scores and
writes every completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import GRPO, write

pytestmark = pytest.mark.slow


@pytest.fixture
def adapter(cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    write(tmp_path / "lora.yaml", GRPO.replace('model: {name: "textrl:tiny"}', 'model: {name: "textrl:tiny", peft: {r: 4}}')
          .replace("learning_rate: 1e-3", "learning_rate: 5e-2").replace("max_steps: 4", "max_steps: 2"))  # fmt: skip
    done = cli("textrl-train", "--config", "lora.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp_path / "out/grpo"


@pytest.mark.parametrize("command", ["textrl-merge", "textrl-dump"])
def test_merge_round_trip_keeps_the_logits(cli, adapter: Path, tmp_path: Path, command: str) -> None:  # type: ignore[no-untyped-def]
    import torch
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    done = cli(command, "--adapter", str(adapter), "--output", "merged")
    assert done.returncode == 0, done.stderr
    if command == "textrl-dump":
        assert "textrl-dump is deprecated since TextRL 1.0" in done.stderr
    merged_dir = tmp_path / "merged"
    assert not list(tmp_path.glob(".merged.tmp-*")), "the staging folder was left behind"
    tok = AutoTokenizer.from_pretrained(merged_dir)
    batch = tok(["Write a short poem.", "Hello"], return_tensors="pt", padding=True)
    with torch.no_grad():
        merged = AutoModelForCausalLM.from_pretrained(merged_dir)(**batch).logits
        peft_model = AutoPeftModelForCausalLM.from_pretrained(adapter)
        with_adapter = peft_model(**batch).logits
        with peft_model.disable_adapter():
            base = peft_model(**batch).logits
    assert torch.allclose(merged, with_adapter, atol=1e-5)
    assert not torch.allclose(merged, base, atol=1e-5), "the adapter changed nothing, so the test proves nothing"
    again = cli(command, "--adapter", str(adapter), "--output", "merged")
    assert (
        again.returncode == 2
        and "--output merged exists. Fix: choose a new folder, or pass --overwrite" in again.stderr
    )


def test_merge_refuses_a_folder_without_adapter(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    done = cli("textrl-merge", "--adapter", str(tmp_path), "--output", "merged")
    assert done.returncode == 2 and "no adapter_config.json there" in done.stderr


def test_eval_scores_and_writes_every_completion(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(
        tmp_path / "two_rewards.py",
        "def length(prompts, completions, **_):\n    return [float(len(c)) for c in completions]\n",
    )
    done = cli("textrl-eval", "--model", "textrl:tiny", "--dataset", "quickstart_prompts.jsonl", "--limit", "6",
               "--reward", "quickstart_rewards:lowercase_share", "--reward", "two_rewards:length",
               "--num-generations", "2", "--max-new-tokens", "6", "--batch-size", "4", "--output", "eval/out.jsonl")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "12 completions (6 prompts x 2)" in done.stdout
    assert "quickstart_rewards:lowercase_share" in done.stdout and "two_rewards:length" in done.stdout
    assert "generating" in done.stderr  # the progress bar
    rows = [json.loads(line) for line in (tmp_path / "eval/out.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and rows[0]["prompt"] == rows[1]["prompt"]
    assert set(rows[0]["rewards"]) == {"quickstart_rewards:lowercase_share", "two_rewards:length"}
    assert all(r["rewards"]["two_rewards:length"] == len(r["completion"]) for r in rows)


def test_eval_reports_a_bad_reward(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli("textrl-eval", "--model", "textrl:tiny", "--dataset", "quickstart_prompts.jsonl", "--reward", "nope:f")
    assert done.returncode == 2 and "no module 'nope'" in done.stderr


def test_merge_a_lora_reward_model(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A LoRA reward model (task SEQ_CLS) merges into a sequence classifier with the adapter's scores."""
    import torch
    from peft import AutoPeftModelForSequenceClassification
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rows = [{"chosen": f"good answer {i}", "rejected": f"bad {i}"} for i in range(8)]
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    write(tmp_path / "rm.yaml", "algo: reward_model\noutput_dir: out/rm\nmax_steps: 2\nper_device_train_batch_size: 4\n"
          "learning_rate: 5e-2\nsave_strategy: 'no'\ngradient_checkpointing: false\n"
          "model: {name: 'textrl:tiny-reward', peft: {r: 4}}\ndataset: {path: pairs.jsonl}\n")  # fmt: skip
    trained = cli("textrl-train", "--config", "rm.yaml")
    assert trained.returncode == 0, trained.stderr[-3000:]
    done = cli("textrl-merge", "--adapter", "out/rm", "--output", "rm_merged")
    assert done.returncode == 0, done.stderr[-3000:]
    tok = AutoTokenizer.from_pretrained(tmp_path / "rm_merged")
    batch = tok(["good answer", "bad"], return_tensors="pt", padding=True)
    with torch.no_grad():
        merged = AutoModelForSequenceClassification.from_pretrained(tmp_path / "rm_merged")(**batch).logits
        adapter = AutoPeftModelForSequenceClassification.from_pretrained(tmp_path / "out/rm")(**batch).logits
    assert merged.shape == (2, 1) and torch.allclose(merged, adapter, atol=1e-5)


def test_merge_overwrite_never_deletes_the_adapter_or_a_sibling_run(cli, adapter: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The reported data loss, with real files: `--adapter out/grpo --output out --overwrite` used to replace out/
    (the adapter, its checkpoints and a sibling run) and say "merged model written"; `--output` equal to the adapter
    replaced the run. Both are refused now, before anything loads; an earlier merge is still replaced."""
    import shutil

    shutil.copytree(adapter, tmp_path / "out/other")
    before = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "out").rglob("*"))
    assert any("checkpoint-" in p for p in before) and "out/grpo/adapter_model.safetensors" in before
    for output in ("out", "out/grpo"):
        done = cli("textrl-merge", "--adapter", "out/grpo", "--output", output, "--overwrite")
        assert done.returncode == 2, done.stdout
        assert (
            f"textrl-merge: --output: --overwrite would delete {output}, which holds --adapter out/grpo" in done.stderr
        )
        assert "merged model written" not in done.stdout
    assert sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "out").rglob("*")) == before
    first = cli("textrl-merge", "--adapter", "out/grpo", "--output", "merged")
    assert first.returncode == 0, first.stderr[-2000:]
    record = json.loads((tmp_path / "merged/textrl_merge.json").read_text())
    assert record["adapter"] == str((tmp_path / "out/grpo").resolve())
    again = cli("textrl-merge", "--adapter", "out/grpo", "--output", "merged", "--overwrite")
    assert again.returncode == 0, again.stderr[-2000:]
    assert (tmp_path / "merged/model.safetensors").is_file()
