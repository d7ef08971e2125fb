"""The real pretrained model: `textrl:smollm2` and GGUF files load offline into models TRL trains, a TextRL step on
it logs exactly what the same step through TRL directly logs, and README's main job scores what the docs say."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from textrl import OnlineTrainer, PreferenceTrainer, TextRLConfig, load_model
from textrl.data import from_list
from textrl.models.gguf import SMOLLM2_GGUF_SHA256, SMOLLM2_MEMBER, STAMP, textrl_home

from ..unit.main_job_docs import EXAMPLE_README, MAIN_JOB, README, ROOT, example_table, measured, readme_quote

pytestmark = [pytest.mark.slow, pytest.mark.real]

QUESTION = "What is {a} plus {b}? Answer with only the number."
PROMPTS = [[{"role": "user", "content": QUESTION.format(a=a, b=b)}] for a, b in ((7, 5), (3, 4), (9, 2), (6, 6))]
PAIRS = [
    {"prompt": p, "chosen": [{"role": "assistant", "content": str(s)}],
     "rejected": [{"role": "assistant", "content": f"The answer is {s}. To find it, we add the two numbers."}]}
    for p, s in zip(PROMPTS, (12, 7, 11, 12), strict=True)
]  # fmt: skip
TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos"}
COMMON = {"max_steps": 1, "logging_steps": 1, "save_strategy": "no", "seed": 3, "learning_rate": 1e-5}


def only_number(completions: list[Any], **_: Any) -> list[float]:
    """1.0 for a reply that is a bare number, else 0.0 minus a little per character (so groups differ)."""
    texts = [c[-1]["content"] for c in completions]
    return [1.0 if t.strip().isdigit() else -len(t) / 100 for t in texts]


def _same_logs(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    assert len(ours) == len(theirs)
    for mine, raw in zip(ours, theirs, strict=True):
        assert set(mine) == set(raw)
        for key in set(mine) - TIMING:
            assert mine[key] == pytest.approx(raw[key], rel=1e-5, abs=1e-7), key


def test_builtin_loads_as_a_plain_trainable_model(smollm2: Path) -> None:
    """SmolLM2-135M-Instruct: Llama, 134.5M parameters, float32, no quantizer left, chat template, and it can add."""
    import torch

    model, tok, ref = load_model("textrl:smollm2", load_ref=False)
    assert type(model).__name__ == "LlamaForCausalLM" and ref is None
    assert sum(p.numel() for p in model.parameters()) == 134_515_008
    assert getattr(model, "hf_quantizer", None) is None and not hasattr(model.config, "quantization_config")
    assert all(p.dtype == torch.float32 and p.requires_grad for p in model.parameters())
    assert "quantization_config" not in json.loads((smollm2 / "config.json").read_text())
    assert json.loads((smollm2 / STAMP).read_text())["sha256"] == SMOLLM2_GGUF_SHA256
    text = tok.apply_chat_template(PROMPTS[0], tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n") and tok.eos_token == "<|im_end|>"
    batch = tok(text, return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=12, do_sample=False, pad_token_id=tok.pad_token_id)
    answer = tok.decode(out[0, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    assert "12" in answer, answer  # measured: "7 + 5 = 12 ..."


def test_gguf_file_and_gguf_file_in_folder_give_the_same_model(
    smollm2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .gguf path converts once into $TEXTRL_HOME/gguf; naming it as gguf_file beside its folder reuses that."""
    import torch

    source = textrl_home() / "downloads" / Path(SMOLLM2_MEMBER).name
    assert source.is_file(), "textrl:smollm2 keeps its GGUF file in the cache"
    copy = tmp_path / "models" / "smol.Q4_1.gguf"
    copy.parent.mkdir()
    shutil.copyfile(source, copy)
    monkeypatch.setenv("TEXTRL_HOME", str(tmp_path / "home"))
    model, tok, ref = load_model(str(copy), load_ref=False)
    converted = list((tmp_path / "home" / "gguf").iterdir())
    assert [p.name for p in converted] == [f"smol.Q4_1-{SMOLLM2_GGUF_SHA256[:16]}"]
    assert not [p for p in converted[0].parent.iterdir() if p.name.startswith(".")]  # no staging left behind
    mtime = (converted[0] / "model.safetensors").stat().st_mtime
    again, _, _ = load_model(str(copy.parent), gguf_file=copy.name, load_ref=False)
    assert (converted[0] / "model.safetensors").stat().st_mtime == mtime  # not converted a second time
    builtin, _, _ = load_model(str(smollm2), load_ref=False)
    for (name, a), b, c in zip(model.state_dict().items(), again.state_dict().values(), builtin.state_dict().values(),
                               strict=True):  # fmt: skip
        assert torch.equal(a, b) and torch.equal(a, c), name
    assert tok.chat_template and ref is None


def test_lora_on_the_real_model(smollm2: Path) -> None:
    """r 8 on every linear layer: 30 layers x 8 x (q 576+576, k 576+192, v 576+192, o 576+576, gate/up/down
    3 x (576+1536)) = 2,442,240 trainable parameters; the frozen base needs no reference copy."""
    model, _, ref = load_model("textrl:smollm2", peft={"type": "lora", "r": 8, "target_modules": "all-linear"})
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert ref is None and trainable == 30 * 8 * (2 * 1152 + 2 * 768 + 3 * 2112) == 2_442_240


def test_grpo_step_parity_with_trl(smollm2: Path, tmp_path: Path) -> None:
    """One GRPO step (full fine-tuning, chat prompts) logs the same numbers through TextRL as through TRL."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    online = {"num_generations": 4, "per_device_train_batch_size": 8, "max_completion_length": 8, "beta": 0.0}
    model, tok, _ = load_model("textrl:smollm2", load_ref=False)
    cfg = TextRLConfig(algo="grpo", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False,
                       **COMMON, **online)  # fmt: skip
    ours = OnlineTrainer(model=model, tokenizer=tok, reward=only_number, config=cfg,
                         train_dataset=from_list([{"prompt": p} for p in PROMPTS]))  # fmt: skip
    ours.train()

    args = GRPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                      **COMMON, **online)  # fmt: skip
    raw = GRPOTrainer(model=AutoModelForCausalLM.from_pretrained(smollm2), reward_funcs=only_number, args=args,
                      train_dataset=Dataset.from_list([{"prompt": p} for p in PROMPTS]),
                      processing_class=AutoTokenizer.from_pretrained(smollm2))  # fmt: skip
    raw.train()
    assert ours.log_history[0]["rewards/only_number/mean"] is not None
    _same_logs(ours.log_history, raw.state.log_history)


def test_dpo_step_parity_with_trl(smollm2: Path, tmp_path: Path) -> None:
    """One DPO step (full fine-tuning with a reference copy, chat pairs) logs the same numbers as TRL directly."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    offline = {"per_device_train_batch_size": 4, "max_length": 64, "beta": 0.1}
    model, tok, ref = load_model("textrl:smollm2")
    cfg = TextRLConfig(algo="dpo", output_dir=str(tmp_path / "textrl"), gradient_checkpointing=False,
                       **COMMON, **offline)  # fmt: skip
    ours = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(PAIRS), config=cfg)
    ours.train()

    args = DPOConfig(output_dir=str(tmp_path / "trl"), bf16=False, activation_checkpointing=False, report_to="none",
                     **COMMON, **offline)  # fmt: skip
    raw = DPOTrainer(model=AutoModelForCausalLM.from_pretrained(smollm2), args=args, train_dataset=Dataset.from_list(PAIRS),
                     processing_class=AutoTokenizer.from_pretrained(smollm2))  # fmt: skip
    raw.train()
    assert "rewards/accuracies" in ours.log_history[0]
    _same_logs(ours.log_history, raw.state.log_history)


def test_a_file_that_is_not_gguf_is_refused_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrl.errors import ConfigError

    monkeypatch.setenv("TEXTRL_HOME", str(tmp_path / "home"))
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ConfigError) as err:
        load_model(str(bad), load_ref=False)
    assert f"{bad} could not be read as a GGUF checkpoint by transformers" in str(err.value)
    assert "Fix: check the file" in str(err.value)
    assert list((tmp_path / "home" / "gguf").iterdir()) == []  # the private staging folder is gone too


def test_merge_and_eval_take_the_real_model(smollm2: Path, tmp_path: Path) -> None:
    """textrl-merge folds a LoRA adapter of textrl:smollm2 into a standalone model; textrl-eval reads both the
    built-in name and the merged folder (real console scripts in subprocesses)."""
    import os
    import subprocess
    import sys

    model, tok, _ = load_model("textrl:smollm2", peft={"type": "lora", "r": 4, "target_modules": "all-linear"})
    model.save_pretrained(tmp_path / "adapter")
    tok.save_pretrained(tmp_path / "adapter")
    assert json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())["base_model_name_or_path"] == str(
        smollm2
    )
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    merge = [
        str(bin_dir / "textrl-merge"),
        "--adapter",
        str(tmp_path / "adapter"),
        "--output",
        str(tmp_path / "merged"),
    ]
    done = subprocess.run(merge, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "merged" / "model.safetensors").is_file()
    (tmp_path / "q.jsonl").write_text(json.dumps({"prompt": PROMPTS[0]}) + "\n")
    (tmp_path / "score.py").write_text(
        "def length(completions, **_):\n    return [float(len(c[-1]['content'])) for c in completions]\n"
    )
    for name in ("textrl:smollm2", str(tmp_path / "merged")):
        done = subprocess.run([str(bin_dir / "textrl-eval"), "--model", name, "--dataset", "q.jsonl", "--reward",
                               "score:length", "--temperature", "0", "--max-new-tokens", "4"],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert "1 completions (1 prompts x 1)" in done.stdout and "score:length" in done.stdout


def test_probe_on_the_real_example(smollm2: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--probe on the README's main job: one group of 8 real completions, scored by the example's three rewards."""
    from textrl.cli.train import train_main

    example = Path(__file__).resolve().parents[2] / "examples" / "smollm2" / "grpo.yaml"
    assert train_main(["--config", str(example), "--probe", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 prompt group(s) x 8 generations" in out
    assert "sampling: max_new_tokens=12 (max_completion_length, YAML)" in out
    for name, weight in (("correct", "1"), ("only_number", "1"), ("brevity", "0.5")):
        assert f"reward {name} (weight {weight}): range [" in out
    assert "s per optimizer step (16 completions), about" in out and "for 10 steps" in out


def test_the_main_job_scores_what_the_docs_state(smollm2: Path, tmp_path: Path) -> None:
    """README's main job, run as README gives it (textrl-train, here with one torch thread: 5 minutes of CPU), ends
    with the held-out numbers README.md quotes and examples/smollm2/README.md tabulates, read from the docs' text.

    The run is deterministic on one machine: four runs here (one torch thread and two) logged identical values at
    every step. Another CPU (other kernels) may round differently and sample other replies; then this test names
    the numbers it got, to check by hand and copy into both docs."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = tmp_path / "smollm2-grpo"
    command = [str(Path(sys.executable).parent / "textrl-train"), "--config", str(MAIN_JOB), "--set",
               f"output_dir={out}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    history = json.loads((out / "log_history.json").read_text(encoding="utf-8"))
    got_four, got_three = measured(history, 4), measured(history, 3)
    fix = (
        f"this run measured {got_three} (4 decimals: {got_four}). Fix: if training changed on purpose, put these "
        f"numbers into {README.name} and {EXAMPLE_README.relative_to(ROOT)}, with where they were measured."
    )
    assert readme_quote() == got_four["correct"], f"{README.name} quotes correct {readme_quote()}; {fix}"
    assert example_table() == got_three, f"{EXAMPLE_README.relative_to(ROOT)}'s table is {example_table()}; {fix}"
    # the quote is textrl-train's own closing line, whitespace aside
    closing = " ".join(done.stdout[done.stdout.index("held-out evaluation (eval_dataset)") :].split())
    assert "correct {} -> {}".format(*got_four["correct"]) in closing, done.stdout[-2000:]
