"""An assembled run's data, reward and model, and the TextRL trainer built from them: shared by a training run
and by `--probe`, which builds the same trainer (same TRL config, same sampling settings) without training."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..validation.view import options

if TYPE_CHECKING:
    from ..trainers import TextRLTrainer
    from ..validation.config import TextRLConfig
    from .assemble import Assembled


def load_data(run: Assembled, cfg: TextRLConfig) -> tuple[Any, Any]:
    """The run's training set and its evaluation set (eval_dataset, or the rows test_split_size holds out; or None)."""
    from ..data import from_section, load_split
    from .assemble import require_section

    train, held_out = load_split(require_section(run, "dataset"), run.base_dir)
    eval_section = options(cfg).eval_dataset
    evaluation = (
        from_section(eval_section, run.base_dir, where="eval_dataset") if eval_section is not None else held_out
    )
    return train, evaluation


def build_trainer(run: Assembled, cfg: TextRLConfig, data: tuple[Any, Any] | None = None) -> TextRLTrainer:
    """Load the run's datasets (unless `data` gives them), reward and model (with a reference copy where the family
    needs one) and build its trainer for `cfg`: the run's config, or a probe's copy of it.

    The TRL config is built once, before a model loads: extra names, precision and distributed settings fail there,
    and with DeepSpeed ZeRO-3 that object is what makes from_pretrained partition the weights as they load."""
    from ..models import load_section
    from ..models.source import resolve_local
    from ..reference_cache.store import decide_for_run
    from ..rewards.refs import reward_from_section
    from ..spec import Reference
    from ..trainers import trainer_for
    from ..trl_support.build import build_trl_config
    from .assemble import require_section

    family = cfg.algorithm().family
    model_section = require_section(run, "model")
    model_section = model_section.model_copy(
        update={"name": resolve_local(model_section.name, run.base_dir, model_section.gguf_file)}
    )
    train, evaluation = data if data is not None else load_data(run, cfg)
    if data is None and hasattr(train, "__len__"):  # train() checks it too, but only after the model has loaded
        from ..validation.batch_plan import batch_lines
        from ..validation.config import processes

        batch_lines(cfg, len(train), processes())
    reward = reward_from_section(require_section(run, "reward"), run.base_dir) if family.needs_reward else None
    if isinstance(reward, str):  # a reward model: TRL loads it late, with transformers' messages
        from ..models.source import check_reward_model

        check_reward_model(reward)
    trl_config = build_trl_config(cfg)
    typed = options(cfg)
    mixed = typed.fp16 or typed.bf16 is False
    # with the reference cache the reference log-probs come from the cache or from the policy's initial weights
    decision = decide_for_run(cfg, train, evaluation) if family.reference is Reference.LOADED else None
    loads_reference = decision is not None and not decision.active
    model, tokenizer, ref = load_section(
        model_section,
        torch_dtype="float32" if mixed else None,
        load_ref=loads_reference,
        task=family.model_task,
        seed=typed.seed,
        base_dir=run.base_dir,
    )
    extra: dict[str, Any] = {"reward": reward} if family.needs_reward else {}
    if decision is not None:  # the reference-cache decision, taken once for all processes, goes down to the trainer
        extra |= {"ref_model": ref, "reference_cache": decision}
    return trainer_for(family)(
        model=model,
        tokenizer=tokenizer,
        config=cfg,
        train_dataset=train,
        eval_dataset=evaluation,
        trl_config=trl_config,
        **extra,
    )
