"""OnlineTrainer: GRPO (TRL's GRPOTrainer), RLOO and REINFORCE++ (TRL's RLOOTrainer), chosen by config.algo."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, Problem, RewardError
from ..rewards.adapters import TRLRewards, trl_rewards
from ..rewards.checks import check_preference_columns, check_signature, is_model
from ..validation.view import online
from .base import TextRLTrainer

if TYPE_CHECKING:
    from ..generated.view import OnlineOptions


def _model_id(model: Any) -> str | None:
    config = getattr(model, "config", None)
    return getattr(config, "_name_or_path", None)


class OnlineTrainer(TextRLTrainer):
    """Online RL: generates completions, scores them with `reward`, and updates the policy.

    `reward` is a function (see `textrl.rewards`), `compose(...)`, a sequence-classification model or its path,
    or a list of these; each component is logged as `rewards/<name>/mean`. TRL's GRPO and RLOO trainers build
    the reference model from the policy's checkpoint (none with LoRA or beta=0); a `ref_model` passed here (from
    that same checkpoint) is the one TRL uses instead of loading a second copy.
    """

    def __init__(self, *, model: Any, reward: Any, ref_model: Any = None, **kwargs: Any) -> None:
        if reward is None:
            raise ConfigError(
                [Problem("reward", "is required for online training. Fix: pass reward=<function or model>.")]
            )
        if ref_model is not None and _model_id(ref_model) != _model_id(model):
            raise ConfigError(
                [
                    Problem(
                        "ref_model",
                        f"comes from {_model_id(ref_model)!r} but the policy from {_model_id(model)!r}; TRL's "
                        "online trainers take the reference from the policy's own checkpoint. Fix: pass "
                        "ref_model=None, or start the policy from the checkpoint you want as reference.",
                    )
                ]
            )
        self.rewards: TRLRewards = trl_rewards(reward)
        """`reward` as TRL takes it: reward_funcs, the weights compose(...) set, the components run in threads."""
        self.reward_funcs = self.rewards.funcs
        self.skipped: dict[str, int] = {}
        """Batches skipped per reward under reward_errors='skip'."""
        self._ref_model = ref_model
        super().__init__(model=model, **kwargs)

    @property
    def _options(self) -> OnlineOptions:
        """The config, typed with the online algorithms' options."""
        typed = online(self.config)
        if typed is None:
            raise ConfigError([Problem("algo", f"got {self.config.algo!r}, which OnlineTrainer does not train.")])
        return typed

    def _build(self, model: Any, callbacks: list[Any] | None) -> Any:
        """TRL's online trainers load their reference from the policy's checkpoint themselves; a `ref_model` passed
        here is handed to TRL in place of that load (one copy in memory, not two), or refused when TRL uses none."""
        ref = self._ref_model
        if ref is None:
            return super()._build(model, callbacks)
        unused = None
        if self._options.beta == 0.0:
            unused = "beta=0, so TRL computes no KL term and uses no reference model"
        elif hasattr(model, "peft_config"):
            unused = "the policy is a LoRA (PEFT) model, and TRL uses it with the adapter disabled as the reference"
        if unused:
            raise ConfigError(
                [Problem("ref_model", f"would not be used: {unused}. Fix: pass ref_model=None (or set beta > 0).")]
            )
        module: Any = importlib.import_module(type(self).trl_class(self.config).__module__)
        load = module.create_model_from_path
        handed: list[Any] = []

        def reference(model_id: str, *args: Any, **kwargs: Any) -> Any:
            if handed or model_id != _model_id(model):
                return load(model_id, *args, **kwargs)
            handed.append(ref)
            return ref

        module.create_model_from_path = reference
        try:
            trainer = super()._build(model, callbacks)
        finally:
            module.create_model_from_path = load
        if not handed:
            raise ConfigError(
                [Problem("ref_model", "TRL did not ask for a reference model. Fix: pass ref_model=None.")]
            )
        return trainer

    def _generation_round(self) -> tuple[int, int]:
        args = self.trl_config  # TRL's post-init has resolved steps_per_generation
        spg = getattr(args, "steps_per_generation", None) or args.gradient_accumulation_steps
        return spg * getattr(args, "num_iterations", 1), args.gradient_accumulation_steps

    def _trl_arguments(self) -> dict[str, Any]:
        configured = self._options.reward_weights
        if self.rewards.weights is not None and configured is not None:
            raise ConfigError(
                [
                    Problem(
                        "reward_weights",
                        "is set in the config and compose(..., weights=...) gives weights too. Fix: keep one.",
                    )
                ]
            )
        weights = configured if configured is not None else self.rewards.weights
        if weights is not None and len(weights) != len(self.reward_funcs):
            raise ConfigError(
                [
                    Problem(
                        "reward_weights",
                        f"has {len(weights)} values for {len(self.reward_funcs)} rewards. Fix: give one per reward.",
                    )
                ]
            )
        self.trl_config.reward_weights = weights
        columns = list(self.train_dataset.column_names)
        for func in self.reward_funcs:  # now that the dataset's columns are known
            if not isinstance(func, str) and not is_model(func):
                try:
                    check_signature(func, columns)
                except RewardError as error:
                    raise ConfigError([Problem("reward", str(error))]) from None
        check_preference_columns(self.reward_funcs, columns, self.config.algo)
        skip = self._options.reward_errors == "skip"
        return {"reward_funcs": self.rewards.for_trl(self.skipped if skip else None)}
