"""The TRL and transformers internals `textrl-train --probe` relies on (textrl/probe/): a TRL or transformers release
that renames one fails here, by name, rather than inside a user's probe."""

from __future__ import annotations

import inspect

import pytest
from transformers import GenerationConfig
from transformers.generation.utils import GenerationMixin
from trl import DPOTrainer, GRPOTrainer, RLOOTrainer


@pytest.mark.parametrize("trainer", [GRPOTrainer, RLOOTrainer])
def test_online_trainers_have_the_rollout_the_probe_calls(trainer: type) -> None:
    for method in ("_generate_and_score_completions", "_calculate_rewards", "compute_loss"):
        assert callable(getattr(trainer, method, None)), f"{trainer.__name__}.{method}"
    init = inspect.getsource(trainer.__init__)
    for attribute in ("self._metrics", "self.reward_weights", "self.reward_func_names", "self.generation_config"):
        assert attribute in init, f"{trainer.__name__}.__init__ no longer sets {attribute}"
    rollout = inspect.getsource(trainer._generate_and_score_completions) + inspect.getsource(trainer)
    assert '"completions/clipped_ratio"' in rollout and '"completions/mean_length"' in rollout


def test_dpo_exposes_its_reference_pass() -> None:
    assert list(inspect.signature(DPOTrainer.compute_ref_log_probs).parameters) == ["self", "model", "inputs"]


def test_transformers_resolves_generation_configs_as_the_probe_does() -> None:
    assert "generation_config" in inspect.signature(GenerationMixin._prepare_generation_config).parameters
    neutral = GenerationConfig()._get_default_generation_params()
    assert neutral["typical_p"] == 1.0 and neutral["no_repeat_ngram_size"] == 0
