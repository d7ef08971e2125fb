"""textrl-train's closing lines: the held-out evaluation's first and last scores, per algorithm family."""

from __future__ import annotations

from textrl.cli.train import held_out_lines


def test_pairwise_runs_show_loss_accuracy_and_margin() -> None:
    history = [
        {"eval_loss": 0.69, "eval_rewards/accuracies": 0.5, "eval_rewards/margins": 0.0, "step": 0},
        {"loss": 0.5, "step": 1},
        {"eval_loss": 0.41, "eval_rewards/accuracies": 0.875, "eval_rewards/margins": 1.25, "step": 8},
    ]
    assert held_out_lines(history) == [
        "held-out evaluation (eval_dataset), step 0 -> step 8:",
        "  loss                0.6900 -> 0.4100",
        "  rewards/accuracies  0.5000 -> 0.8750",
        "  rewards/margins     0.0000 -> 1.2500",
    ]


def test_online_runs_show_the_reward_not_the_surrogate_loss() -> None:
    first = {
        "eval_loss": 0.03,
        "eval_reward": 0.35,
        "eval_rewards/correct/mean": 0.125,
        "eval_rewards/correct/std": 0.3,
    }
    last = {"eval_loss": 0.1, "eval_reward": 1.09, "eval_rewards/correct/mean": 0.53, "eval_rewards/correct/std": 0.5}
    lines = held_out_lines([{**first, "step": 0}, {**last, "step": 10}])
    assert lines[1:] == ["  reward   0.3500 -> 1.0900", "  correct  0.1250 -> 0.5300"]


def test_fewer_than_two_evaluations_print_nothing() -> None:
    assert held_out_lines([{"eval_loss": 0.5, "step": 4}, {"loss": 0.4}]) == []
