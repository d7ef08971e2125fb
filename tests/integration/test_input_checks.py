"""What a trainer checks when it is built, on the tiny model with its real tokenizer: over-long rows (against the
model's context and max_length, per family), reward objects and signatures against the dataset's columns, reward
names, and a resume of another algorithm's checkpoint. Each refusal beside a passing twin."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, DataError, OnlineTrainer, PreferenceTrainer, RewardModelTrainer, load_model
from textrl.data import from_list
from textrl.data.lengths import LengthWarning, Limits, check_lengths, folder_counter, tokenizer_counter

from .conftest import fast, letters

pytestmark = pytest.mark.slow

LONG = "word " * 20_000  # the reported case: one GRPO step ran over 10 minutes on a 512-position model


@pytest.fixture(scope="module")
def counters(tiny: Path) -> dict[str, Any]:
    """The trainer's counter (transformers tokenizer) and the dry run's (tokenizers + jinja2, no torch)."""
    from transformers import AutoTokenizer

    light = folder_counter(tiny)
    assert light is not None and light[1] == 2048  # the tiny model's context
    return {"trainer": tokenizer_counter(AutoTokenizer.from_pretrained(tiny)), "dry run": light[0]}


@pytest.mark.parametrize("which", ["trainer", "dry run"])
def test_both_counters_agree_on_text_and_chat(counters: dict[str, Any], which: str) -> None:
    chat = [{"role": "user", "content": "Say hi."}]
    assert counters[which](["Say hi.", chat], True) == counters["trainer"](["Say hi.", chat], True)
    assert counters[which]([chat], True)[0] > counters[which](["Say hi."], True)[0]  # the template's tokens count


@pytest.mark.parametrize("which", ["trainer", "dry run"])
def test_lengths_per_family(counters: dict[str, Any], which: str) -> None:
    count = counters[which]
    ok = from_list([{"prompt": "Say hi."}] * 4)
    assert check_lengths(ok, "online", Limits(512, None, 16), count) == []
    with pytest.raises(DataError, match=r"dataset: column 'prompt', row 2: longer than the model's context \(\d+ "
                                        r"tokens in row 2; the model has 512 positions\)"):  # fmt: skip
        check_lengths(
            from_list([{"prompt": "a"}, {"prompt": "b"}, {"prompt": LONG}]), "online", Limits(512, None, 16), count
        )
    tight = check_lengths(from_list([{"prompt": "word " * 120}]), "online", Limits(512, None, 400), count)
    assert len(tight) == 1 and "leave fewer than max_completion_length=400 positions of the model's 512" in tight[0]

    pair = {"prompt": "Repeat: sea ->", "chosen": " sea", "rejected": " no"}
    assert check_lengths(from_list([pair] * 4), "pairwise preference", Limits(512, 64), count) == []
    with pytest.raises(DataError, match=r"column 'prompt', row 1: the prompt alone is \d+ tokens, which fills "
                                        r"max_length=32; TRL keeps the start"):  # fmt: skip
        check_lengths(
            from_list([pair, {**pair, "prompt": "word " * 40}]), "pairwise preference", Limits(512, 32), count
        )
    cut = check_lengths(
        from_list([pair, {**pair, "chosen": " sea" * 60}]), "pairwise preference", Limits(512, 32), count
    )
    assert len(cut) == 1 and "1 of 2 rows (row 1) are longer than max_length=32 tokens; TRL cuts the end" in cut[0]
    over_context = check_lengths(
        from_list([{**pair, "chosen": " sea" * 600}]), "pairwise preference", Limits(512, 1024), count
    )
    assert "longer than the model's context=512" in over_context[0]

    kto = {"prompt": "word " * 40, "completion": " yes", "label": True}
    with pytest.raises(DataError, match=r"fills max_length=32"):
        check_lengths(from_list([kto]), "binary preference", Limits(512, 32), count)

    rm = [{"chosen": "good " * 40, "rejected": "bad"}, {"chosen": "good", "rejected": "bad"}]
    dropped = check_lengths(from_list(rm), "reward model", Limits(512, 32), count)
    assert "1 of 2 rows (row 0) are longer than max_length=32 tokens; TRL's RewardTrainer drops them" in dropped[0]
    with pytest.raises(DataError, match=r"every row is longer than max_length=32 tokens"):
        check_lengths(from_list(rm[:1] * 3), "reward model", Limits(512, 32), count)


def test_a_prompt_longer_than_the_model_is_refused_when_the_trainer_is_built(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    started = time.perf_counter()
    with pytest.raises(DataError, match=r"train_dataset: column 'prompt', row 4: longer than the model's context"):
        OnlineTrainer(model=model, tokenizer=tok, reward=letters, config=fast("grpo", tmp_path),
                      train_dataset=from_list(["Say hi."] * 4 + [LONG]))  # fmt: skip
    assert time.perf_counter() - started < 30  # the reported run spent over 10 minutes in one step


def test_rows_trl_would_cut_or_drop_are_a_warning(tiny: Path, tmp_path: Path) -> None:
    model, tok, ref = load_model(str(tiny))
    pairs = [{"prompt": "Repeat: sea ->", "chosen": " sea" * 40, "rejected": " no"}] + [
        {"prompt": "Repeat: sky ->", "chosen": " sky", "rejected": " no"}
    ] * 7
    with pytest.warns(LengthWarning, match=r"train_dataset: 1 of 8 rows \(row 0\) are longer than max_length=32"):
        PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, train_dataset=from_list(pairs),
                          config=fast("dpo", tmp_path, max_length=32))  # fmt: skip
    rm_model, rm_tok, _ = load_model(str(tiny), task="reward", load_ref=False)
    rows = [{"chosen": "good " * 40, "rejected": "bad"}] + [{"chosen": "good", "rejected": "bad"}] * 7
    with pytest.warns(LengthWarning, match=r"RewardTrainer drops them"):
        RewardModelTrainer(model=rm_model, tokenizer=rm_tok, train_dataset=from_list(rows),
                           config=fast("reward_model", tmp_path / "rm", max_length=16))  # fmt: skip


def test_reward_signatures_are_checked_against_the_dataset_columns(tiny: Path, tmp_path: Path) -> None:
    """Used to be accepted and fail at training step 1 with 'handle that input in the reward'."""
    model, tok, _ = load_model(str(tiny), load_ref=False)
    data = from_list([{"prompt": "Say hi.", "answer": "hi"}] * 8)

    def by_answer(completions: list[str], answer: list[str]) -> list[float]:
        return [float(a in c) for c, a in zip(completions, answer, strict=True)]

    def by_target(completions: list[str], target: list[str]) -> list[float]:
        return [0.0] * len(completions)

    class Judge:
        def __call__(self, prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            return [1.0] * len(completions)

    common = {"model": model, "tokenizer": tok, "train_dataset": data, "config": fast("grpo", tmp_path)}
    with pytest.raises(ConfigError, match=r"reward: reward 'by_target': required parameter 'target' is filled by "
                                          r"nothing: .* the dataset's columns \(here: answer\)"):  # fmt: skip
        OnlineTrainer(reward=by_target, **common)
    with pytest.raises(
        ConfigError, match=r"reward: got the class Judge, not a reward.*Fix: pass an instance, Judge\(\)"
    ):
        OnlineTrainer(reward=Judge, **common)
    with pytest.raises(ConfigError, match=r"reward\[1\]: got None; allowed"):
        OnlineTrainer(reward=[letters, None], **common)
    with pytest.raises(ConfigError, match=r"reward: rewards 0 and 1 are both named 'letters'"):
        OnlineTrainer(reward=[letters, letters], **common)
    trainer = OnlineTrainer(reward=[by_answer, Judge()], **common)
    trainer.train()
    assert {"rewards/by_answer/mean", "rewards/Judge/mean"} <= set(trainer.log_history[0])


def test_resuming_another_algorithms_checkpoint_is_refused(tiny: Path, tmp_path: Path) -> None:
    """A GRPO checkpoint used to continue as RLOO without a word; the manifest then forgot the GRPO run."""
    data = from_list(["Say hi.", "Say yes."] * 8)
    model, tok, _ = load_model(str(tiny), load_ref=False)
    OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=data,
                  config=fast("grpo", tmp_path, save_strategy="steps", save_steps=2)).train()  # fmt: skip
    checkpoint = tmp_path / "checkpoint-2"
    assert checkpoint.is_dir()
    model, tok, _ = load_model(str(tiny), load_ref=False)
    rloo = OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=data,
                         config=fast("rloo", tmp_path, max_steps=4))  # fmt: skip
    for resume in (str(checkpoint), True):
        with pytest.raises(ConfigError, match=r"algo: --resume: .* holds a run of algo='grpo' .*this config says "
                                              r"algo='rloo'"):  # fmt: skip
            rloo.train(resume_from_checkpoint=resume)
    manifest = json.loads((tmp_path / "textrl_manifest.json").read_text())
    assert manifest["textrl_config"]["algo"] == "grpo" and manifest["previous"] == []
    model, tok, _ = load_model(str(tiny), load_ref=False)
    OnlineTrainer(model=model, tokenizer=tok, reward=letters, train_dataset=data,
                  config=fast("grpo", tmp_path, max_steps=4)).train(resume_from_checkpoint=str(checkpoint))  # fmt: skip
    manifest = json.loads((tmp_path / "textrl_manifest.json").read_text())
    assert [m["textrl_config"]["max_steps"] for m in manifest["previous"]] == [2]
    assert manifest["textrl_config"]["max_steps"] == 4
