"""What online training does with rewards that score nothing and data that no reward reads, on real tiny GRPO/RLOO
runs: a batch no reward scored stops the run (TRL would train on no reward, with only a log warning), one reward of
several scoring nothing warns once, async rewards keep TRL's concurrency, and preference columns are refused."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, OnlineTrainer, RewardError, load_model, reward_fn
from textrl.data import from_list
from textrl.rewards import NoScoreWarning, as_reward

from .conftest import PROMPTS, fast, letters

pytestmark = pytest.mark.slow


def nones(name: str, *, every: bool = True) -> Any:
    """A reward returning None for every completion (or for every other one)."""

    @reward_fn(name=name)
    def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float | None]:
        return [None if every or i % 2 else float(len(c)) for i, c in enumerate(completions)]

    return reward


def trainer_for(tiny: Path, tmp_path: Path, reward: Any, rows: list[Any] | None = None, **options: Any) -> Any:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    data = from_list(rows if rows is not None else PROMPTS * 4)
    config = fast(options.pop("algo", "grpo"), tmp_path, **options)
    return OnlineTrainer(model=model, tokenizer=tok, reward=reward, train_dataset=data, config=config)


def test_a_batch_no_reward_scored_stops_the_run(tiny: Path, tmp_path: Path) -> None:
    """Before: TRL logged "All reward functions returned None" and trained on, every advantage 0."""
    trainer = trainer_for(tiny, tmp_path, [nones("unparsed"), nones("unjudged")])
    with pytest.raises(
        RewardError,
        match=r"every reward \('unparsed', 'unjudged'\) returned None for all 4 completions of a generation batch at "
        r"training step 1: TRL would train on no reward at all \(each completion's advantage is 0\)\. Fix: return a "
        r"number for each completion a reward can score",
    ) as info:
        trainer.train()
    assert info.value.reward == "unparsed"
    assert trainer.trl_trainer.state.global_step == 0


def test_one_reward_that_scores_nothing_stops_the_run_and_skip_does_not_hide_it(tiny: Path, tmp_path: Path) -> None:
    trainer = trainer_for(tiny, tmp_path, nones("unparsed"), reward_errors="skip")
    with pytest.raises(RewardError, match=r"every reward \('unparsed'\) returned None for all 4 completions"):
        trainer.train()


def test_a_run_that_raises_leaves_no_stall_watchdog_behind(tiny: Path, tmp_path: Path) -> None:
    """train() that raised used to leave the stall watchdog's thread running (TRL calls on_train_end only when
    training ends well): stall_timeout seconds later it wrote a stall file and ended the process with status 124,
    a notebook's kernel or, 30 minutes on, a test worker of this suite."""
    trainer = trainer_for(tiny, tmp_path, nones("unparsed"), reward_errors="skip", stall_timeout=600)
    with pytest.raises(RewardError):
        trainer.train()
    assert [t for t in threading.enumerate() if t.name == "textrl-stall-watchdog"] == []


def test_rewards_that_skip_some_completions_train(tiny: Path, tmp_path: Path) -> None:
    """The passing twin: None for some completions is what None is for (TRL leaves them out of that reward)."""
    trainer = trainer_for(tiny, tmp_path, nones("half", every=False))
    trainer.train()
    assert trainer.trl_trainer.state.global_step == 2 and "rewards/half/mean" in trainer.log_history[0]


def test_one_reward_of_several_scoring_nothing_warns_once(tiny: Path, tmp_path: Path) -> None:
    trainer = trainer_for(tiny, tmp_path, [letters, nones("unjudged")], max_steps=3)
    with pytest.warns(NoScoreWarning) as said:
        trainer.train()
    mine = [w for w in said if issubclass(w.category, NoScoreWarning)]
    assert len(mine) == 1, [str(w.message) for w in mine]
    assert str(mine[0].message).startswith(
        "reward 'unjudged' returned None for all 4 completions of a generation batch at training step 1; the other "
        "rewards ('letters') scored it, so training goes on without 'unjudged' for that batch (said once per reward)."
    )
    assert trainer.trl_trainer.state.global_step == 3


def test_async_rewards_still_run_concurrently_in_training(tiny: Path, tmp_path: Path) -> None:
    """Each async reward waits until the other has started: it passes only if TRL gathers them, which needs them
    handed over async (even one the user passed through as_reward, which runs it synchronously for the dry run)."""
    started: dict[str, asyncio.Event] = {}

    def waits(mine: str, other: str) -> Any:
        async def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            started.setdefault(mine, asyncio.Event()).set()
            await asyncio.wait_for(started.setdefault(other, asyncio.Event()).wait(), timeout=10)
            return [float(len(c)) for c in completions]

        reward.__name__ = mine
        return reward

    trainer = trainer_for(tiny, tmp_path, [waits("a", "b"), as_reward(waits("b", "a"))], max_steps=1)
    trainer.train()
    assert {"rewards/a/mean", "rewards/b/mean"} <= set(trainer.log_history[0])


PAIRS = [{"prompt": p, "chosen": " yes", "rejected": " no"} for p in PROMPTS * 4]
LABELLED = [{"prompt": p, "completion": " yes", "label": i % 2 == 0} for i, p in enumerate(PROMPTS * 4)]


@pytest.mark.parametrize(
    ("algo", "rows", "match"),
    [
        ("grpo", PAIRS, r"dataset: the dataset has preference columns chosen, rejected, and no reward reads them "
         r"\(rewards: 'letters'\): algo grpo generates its own completions and learns only from the rewards, so these "
         r"columns would be ignored\. Fix: to learn from preference data use algo dpo \(chosen/rejected\); or drop "
         r"the columns \(chosen, rejected\) from the dataset; or have a reward read them"),
        ("rloo", LABELLED, r"preference columns completion, label, and no reward reads them .* algo rloo .* use algo "
         r"kto \(completion/label\)"),
    ],
)  # fmt: skip
def test_preference_data_no_reward_reads_is_refused(tiny: Path, tmp_path: Path, algo: str, rows: list[Any],
                                                    match: str) -> None:  # fmt: skip
    with pytest.raises(ConfigError, match=match):
        trainer_for(tiny, tmp_path, letters, rows, algo=algo)


def test_preference_data_a_reward_reads_is_accepted(tiny: Path, tmp_path: Path) -> None:
    """The passing twins: a reward that declares the columns, or takes **columns, reads them."""

    @reward_fn
    def matches_chosen(prompts: list[str], completions: list[str], chosen: list[str], rejected: list[str]) -> Any:
        return [float(c.strip() == w.strip()) - float(c.strip() == r.strip()) for c, w, r in
                zip(completions, chosen, rejected, strict=True)]  # fmt: skip

    @reward_fn
    def reads_all(prompts: list[str], completions: list[str], **columns: Any) -> list[float]:
        return [float(label) for label in columns["label"]]

    trainer_for(tiny, tmp_path, [letters, matches_chosen], PAIRS)
    trainer_for(tiny, tmp_path, reads_all, LABELLED, algo="rloo").train()
