"""The spec's Family is the one registry of family -> TextRL trainer, reference model, reward and model head."""

from __future__ import annotations

import pytest

from textrl import ConfigError, OnlineTrainer, TextRLConfig, spec
from textrl.trainers import TRAINERS, trainer_for
from textrl.trainers.base import TextRLTrainer


def test_every_family_has_a_trainer_and_each_trainer_lists_its_families() -> None:
    for family in spec.Family:
        assert family in trainer_for(family).families
    assert {f.trainer for f in spec.Family} == set(TRAINERS)
    assert sorted(f for cls in TRAINERS.values() for f in cls.families) == sorted(spec.Family)
    assert trainer_for(spec.Family.BINARY) is trainer_for(spec.Family.PAIRWISE)


def test_a_users_subclass_keeps_its_parents_families() -> None:
    class MyTrainer(OnlineTrainer):
        pass

    assert MyTrainer.families == (spec.Family.ONLINE,)
    assert TextRLTrainer.families == ()


@pytest.mark.parametrize(
    ("family", "beta", "peft", "held"),
    [
        (spec.Family.PAIRWISE, 0.1, False, True),
        (spec.Family.PAIRWISE, 0.1, True, False),  # LoRA: the adapter switched off is the reference
        (spec.Family.BINARY, 0.0, False, True),
        (spec.Family.ONLINE, 0.0, False, False),  # GRPO with beta=0 builds no reference
        (spec.Family.ONLINE, 0.04, False, True),
        (spec.Family.REWARD_MODEL, 0.1, False, False),
    ],
)
def test_which_runs_hold_a_reference_copy(family: spec.Family, beta: float, peft: bool, held: bool) -> None:
    assert family.holds_reference(beta=beta, peft=peft) is held


def test_the_wrong_trainer_names_the_right_one_from_the_spec() -> None:
    cfg = TextRLConfig(algo="dpo", output_dir="o")
    with pytest.raises(
        ConfigError, match=r"is a pairwise preference algorithm, but OnlineTrainer .* use PreferenceTrainer"
    ):
        OnlineTrainer(model=None, reward=lambda **_: [0.0], config=cfg, train_dataset=None)
