"""Every algorithm in the spec trains for real on the tiny model: finite losses, weights that moved, and the
algorithm's own metrics. Parametrized from the spec, so a new algorithm is tested without a new test."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, OnlineTrainer, PreferenceTrainer, RewardModelTrainer, load_model, reward_fn, spec
from textrl.data import from_list
from textrl.trainers import trainer_for

from .conftest import fast, letters, rows_for

pytestmark = pytest.mark.slow

METRICS = {  # a metric each family's TRL trainer logs, proving the algorithm ran (not just a loss)
    spec.Family.ONLINE: "reward",
    spec.Family.PAIRWISE: "rewards/accuracies",
    spec.Family.BINARY: "rewards/margins",
    spec.Family.REWARD_MODEL: "accuracy",
    spec.Family.SUPERVISED: "mean_token_accuracy",
}


def _snapshot(model: Any) -> dict[str, Any]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def _run(algo: spec.Algorithm, path: Path, out: Path, *, lora: bool) -> tuple[list[dict[str, Any]], bool]:
    peft = {"type": "lora", "r": 4} if lora else None
    model, tok, ref = load_model(str(path), peft=peft)
    before = _snapshot(model)
    kwargs: dict[str, Any] = {"model": model, "tokenizer": tok, "train_dataset": from_list(rows_for(algo.data_format)),
                              "config": fast(algo.name, out)}  # fmt: skip
    if algo.family is spec.Family.ONLINE:
        kwargs["reward"] = letters
    elif algo.family.reference is spec.Reference.LOADED:
        kwargs["ref_model"] = ref
    trainer = trainer_for(algo.family)(**kwargs)
    trainer.train()
    after = dict(model.named_parameters())
    moved = any(not after[n].detach().equal(v) for n, v in before.items())
    manifest = json.loads((out / "textrl_manifest.json").read_text())
    assert manifest["textrl_config"]["algo"] == algo.name and manifest["versions"]["trl"]
    assert manifest["trl_config_changes"]["max_steps"] == 2 and manifest["datasets"]["train"]["rows"] == 16
    assert manifest["datasets"]["train"]["fingerprint"]
    return trainer.log_history, moved


def _check(history: list[dict[str, Any]], family: spec.Family) -> None:
    steps = [h for h in history if "loss" in h]
    assert len(steps) == 2, history
    assert all(math.isfinite(h["loss"]) for h in steps), steps
    assert all(METRICS[family] in h for h in steps), f"{METRICS[family]} missing from {sorted(steps[0])}"


@pytest.mark.parametrize("algo", [a for a in spec.ALGORITHMS if a.family is not spec.Family.REWARD_MODEL],
                         ids=lambda a: a.name)  # fmt: skip
def test_trains_with_full_weights(algo: spec.Algorithm, tiny: Path, tmp_path: Path) -> None:
    history, moved = _run(algo, tiny, tmp_path, lora=False)
    _check(history, algo.family)
    assert moved, "no trainable weight changed"


@pytest.mark.parametrize("algo", [a for a in spec.ALGORITHMS if a.family in (spec.Family.PAIRWISE, spec.Family.BINARY)]
                         + [spec.BY_NAME["grpo"], spec.BY_NAME["sft"]], ids=lambda a: a.name)  # fmt: skip
def test_trains_with_lora_and_no_reference_model(algo: spec.Algorithm, tiny: Path, tmp_path: Path) -> None:
    history, moved = _run(algo, tiny, tmp_path, lora=True)
    _check(history, algo.family)
    assert moved, "no LoRA weight changed"


def test_reward_model_then_rloo_and_grpo_scored_by_it(tiny: Path, tiny_rm: Path, tmp_path: Path) -> None:
    """The issue's chain: train a reward model with RewardModelTrainer, then RLOO and GRPO with it as the reward."""
    rm, rm_tok, no_ref = load_model(str(tiny_rm), load_ref=False)
    assert no_ref is None and type(rm).__name__.endswith("ForSequenceClassification")
    before = _snapshot(rm)
    trainer = RewardModelTrainer(model=rm, tokenizer=rm_tok, train_dataset=from_list(rows_for(spec.BY_NAME["reward_model"].data_format)),
                                 config=fast("reward_model", tmp_path / "rm"))  # fmt: skip
    trainer.train()
    _check(trainer.log_history, spec.Family.REWARD_MODEL)
    assert any(not p.detach().equal(before[n]) for n, p in rm.named_parameters() if n in before)
    trainer.save_model(str(tmp_path / "rm_saved"))
    rm_tok.save_pretrained(tmp_path / "rm_saved")
    scorer, _, _ = load_model(str(tmp_path / "rm_saved"), load_ref=False)
    for algo, reward in (("rloo", scorer), ("grpo", str(tmp_path / "rm_saved"))):  # the model, or its path
        model, tok, ref = load_model(str(tiny))
        online = OnlineTrainer(model=model, ref_model=ref, tokenizer=tok, reward=reward,
                               train_dataset=from_list(rows_for(spec.BY_NAME[algo].data_format)),
                               config=fast(algo, tmp_path / algo, beta=0.05))  # fmt: skip
        online.train()
        _check(online.log_history, spec.Family.ONLINE)
        assert "rewards/rm_saved/mean" in online.log_history[0], sorted(online.log_history[0])


def test_composed_reward_logs_each_component(tiny: Path, tmp_path: Path) -> None:
    from textrl.rewards import compose, length_penalty

    model, tok, _ = load_model(str(tiny), peft={"type": "lora", "r": 4})
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=compose(letters, length_penalty(8), weights=[1.0, 0.5]),
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format)),
                            config=fast("grpo", tmp_path))  # fmt: skip
    trainer.train()
    first = trainer.log_history[0]
    assert {"rewards/letters/mean", "rewards/length_penalty/mean"} <= set(first)
    expected = first["rewards/letters/mean"] + 0.5 * first["rewards/length_penalty/mean"]
    assert first["reward"] == pytest.approx(expected, abs=1e-5)
    assert trainer.trl_config.reward_weights == [1.0, 0.5]


def test_composed_rewards_run_concurrently_in_training(tiny: Path, tmp_path: Path) -> None:
    """Three synchronous rewards that each wait at a 3-party barrier: they pass only if TRL runs all three at
    once (TRL calls plain functions one after another; TextRL hands them over as threaded async callables).
    A reward scoring its batch on its own would break the barrier (BrokenBarrierError after 10 s)."""
    import threading

    from textrl.rewards import compose

    barrier = threading.Barrier(3, timeout=10)

    def waits(name: str) -> Any:
        @reward_fn(name=name)
        def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            barrier.wait()
            return [float(len(c) % 3) for c in completions]

        return reward

    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=compose(waits("a"), waits("b"), waits("c")),
                            train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format)),
                            config=fast("grpo", tmp_path))  # fmt: skip
    trainer.train()
    assert {"rewards/a/mean", "rewards/b/mean", "rewards/c/mean"} <= set(trainer.log_history[0])
    assert not barrier.broken


def test_rewards_stay_on_the_main_thread_unless_composed_concurrently(tiny: Path, tmp_path: Path) -> None:
    """A plain reward list, compose(..., concurrent=False), and TRL's own reward functions are called by TRL on
    the main thread (signal-based timeouts, such as accuracy_reward's, work only there)."""
    import threading

    from trl.rewards import accuracy_reward

    from textrl.rewards import compose
    from textrl.rewards.adapters import threadable

    seen: list[bool] = []

    def on_main(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        seen.append(threading.current_thread() is threading.main_thread())
        return [1.0] * len(completions)

    assert not threadable(reward_fn(accuracy_reward)) and threadable(reward_fn(on_main))
    for reward in ([on_main, letters], compose(on_main, letters, concurrent=False)):
        model, tok, _ = load_model(str(tiny), load_ref=False)
        OnlineTrainer(model=model, tokenizer=tok, reward=reward, config=fast("grpo", tmp_path / str(len(seen))),
                      train_dataset=from_list(rows_for(spec.BY_NAME["grpo"].data_format))).train()  # fmt: skip
    assert seen and all(seen), seen


def test_issue_example_shapes(tiny: Path, tmp_path: Path) -> None:
    """The seed example's call shapes, with the tiny model in place of a hub model."""
    from textrl import TextRLConfig

    @reward_fn
    def length_reward(prompts, completions, **_):  # type: ignore[no-untyped-def]
        return [-abs(len(c) - 64) / 64 for c in completions]

    model, tok, _ = load_model(str(tiny), peft={"type": "lora", "r": 16})
    cfg = TextRLConfig(algo="grpo", output_dir=str(tmp_path), num_generations=8, beta=0.04, learning_rate=5e-6,
                       max_steps=1, max_completion_length=8, gradient_checkpointing=False, save_strategy="no")  # fmt: skip
    OnlineTrainer(model=model, tokenizer=tok, reward=length_reward,
                  train_dataset=from_list(["Write a short poem.", "Explain gradient descent."] * 32), config=cfg).train()  # fmt: skip


@pytest.mark.parametrize(("trainer", "algo", "right"), [(PreferenceTrainer, "grpo", "OnlineTrainer"),
                         (OnlineTrainer, "dpo", "PreferenceTrainer"), (RewardModelTrainer, "kto", "PreferenceTrainer"),
                         (PreferenceTrainer, "reward_model", "RewardModelTrainer")])  # fmt: skip
def test_trainer_must_match_the_family(trainer: Any, algo: str, right: str, tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    data = from_list(rows_for(spec.BY_NAME[algo].data_format))
    extra = {"reward": letters} if trainer is OnlineTrainer else {}
    with pytest.raises(
        ConfigError, match=rf"algo: algo='{algo}' is a .* algorithm, but {trainer.__name__} trains .* Fix: use {right}"
    ):
        trainer(model=model, tokenizer=tok, train_dataset=data, config=fast(algo, tmp_path), **extra)


def test_checkpoints_land_whole_with_best_model_and_rotation(tiny: Path, tmp_path: Path) -> None:
    """Staged checkpoints keep transformers' bookkeeping: best_model_checkpoint names the real folder (not the
    staging one), save_total_limit rotates, load_best_model_at_end loads it, and no staging folder is left."""
    import json

    model, tok, ref = load_model(str(tiny))
    rows = rows_for(spec.BY_NAME["dpo"].data_format)
    cfg = fast("dpo", tmp_path / "run", max_steps=6, save_strategy="steps", save_steps=2, eval_strategy="steps",
               eval_steps=2, metric_for_best_model="eval_loss", save_total_limit=1, extra={"load_best_model_at_end": True})  # fmt: skip
    trainer = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tok, config=cfg,
                                train_dataset=from_list(rows), eval_dataset=from_list(rows[:4]))  # fmt: skip
    trainer.train()
    trainer.save_model()
    run = tmp_path / "run"
    state = json.loads((run / "checkpoint-6/trainer_state.json").read_text())
    best = Path(state["best_model_checkpoint"])
    assert best.parent == run and best.is_dir() and (best / "trainer_state.json").is_file(), best
    kept = sorted(p.name for p in run.glob("checkpoint-*"))
    assert kept == sorted({"checkpoint-6", best.name}), kept
    assert not (run / ".textrl-partial").exists()
    assert (run / "model.safetensors").is_file() and (run / "config.json").is_file()
    weights = {p.name for p in run.rglob("*") if p.suffix in (".bin", ".pt", ".safetensors") and "model" in p.name}
    assert weights == {"model.safetensors"}, weights  # checkpoints and the final model: safetensors only
