"""The rollout probe of online algorithms (GRPO, RLOO, REINFORCE++): a few prompt groups generated and scored by the
run's own TRL trainer, before the long run.

It calls the TRL trainer's own rollout (`_generate_and_score_completions`), so the completions come from exactly the
sampling settings, chat template and reward plumbing of the run, and it records the per-reward scores TRL computes
(`_calculate_rewards`) and TRL's completion metrics (`_metrics`). Those are TRL internals: tests/drift/
test_probe_internals.py fails when a TRL release renames them. One forward and backward pass on the probe batch
(gradients discarded, no optimizer step) times the training half of a step.
"""

from __future__ import annotations

import json
import math
import time
from typing import TYPE_CHECKING, Any

from .findings import ProbeReport, share
from .sampling import resolve

if TYPE_CHECKING:
    from ..generated.view import OnlineOptions

ZERO_VARIANCE_WARN = 0.5
"""Share of groups whose completions all score the same above which the probe warns (they carry no signal)."""
TRUNCATED_WARN = 0.2
"""Share of completions cut at max_completion_length above which the probe warns."""
SCALE_WARN = 10.0
"""Ratio between the widest and the narrowest reward component's range above which the probe warns."""


def probe_online(trainer: Any, cfg: OnlineOptions, sources: dict[str, str], prompts: int) -> ProbeReport:
    """Generate and score one group per row of `trainer`'s training set (an OnlineTrainer built on the probe's
    prompts), time a training pass, and say what threatens the run. `prompts`: the full training set's size, for
    the estimate of the run's length."""
    trl = trainer.trl_trainer
    rows = [dict(row) for row in trainer.train_dataset]
    n = cfg.num_generations
    report = ProbeReport(f"{len(rows)} prompt group(s) x {n} generations, sampled with the run's settings")
    given = cfg.generation_kwargs  # TRL's value forms: a mapping, or the same as JSON text (TRL parses it)
    kwargs = json.loads(given) if isinstance(given, str) else given or {}
    settings = resolve(trl.generation_config, trl.model, sources, kwargs)
    report.lines.append("sampling: " + ", ".join(f"{s.name}={s.value!r} ({s.source})" for s in settings))
    for s in (s for s in settings if s.from_model):
        report.add(
            "warn",
            f"the model's generation_config.json sets {s.name}={s.value!r}; TRL leaves {s.name} unset, so it applies "
            "to every rollout.",
            f"set it explicitly, e.g. generation_kwargs: {{{s.name}: <value>}}, or remove it from the checkpoint's "
            "generation_config.json.",
        )

    scores: list[Any] = []
    calculate = trl._calculate_rewards

    def recording(*args: Any, **kwargs: Any) -> Any:
        out = calculate(*args, **kwargs)
        scores.append(out.detach().float().cpu())
        return out

    trl._calculate_rewards = recording
    trl.model.train()  # as in training: TRL generates with the model in train mode
    inputs = [row for row in rows for _ in range(n)]
    from . import say

    say(f"generating and scoring {len(rows)} group(s) x {n} completions of up to {cfg.max_completion_length} tokens")
    start = time.perf_counter()
    from ..rewards.adapters import NoneWatch

    NoneWatch.probing = True  # a batch no reward scored is a finding here (below), not the end of the probe
    try:
        output = trl._generate_and_score_completions(inputs)
    finally:
        del trl._calculate_rewards
        NoneWatch.probing = False
    generating = time.perf_counter() - start
    say(f"generated in {generating:.1f} s; timing one training pass on them")
    start = time.perf_counter()
    if not hasattr(trl, "current_gradient_accumulation_steps"):  # transformers sets it in its training loop
        trl.current_gradient_accumulation_steps = trl.args.gradient_accumulation_steps
    loss = trl.compute_loss(trl.model, output)
    loss.backward()
    trl.model.zero_grad(set_to_none=True)  # the probe trains nothing
    training = time.perf_counter() - start

    metrics = {k: v[-1] for k, v in trl._metrics["train"].items() if v}
    per_func = scores[-1]  # [completions, rewards]; NaN where a reward returned None
    names = list(getattr(trl, "reward_func_names", [f"reward_{i}" for i in range(per_func.shape[1])]))
    weights = trl.reward_weights.detach().float().cpu()
    total = (per_func * weights).nansum(dim=1).view(-1, n)
    zero = int((total.std(dim=1) == 0).sum()) if n > 1 else total.shape[0]
    count = per_func.shape[0]
    report.lines.append(
        f"groups whose {n} completions all score the same (no learning signal): {share(zero, len(rows))}"
    )
    clipped = metrics.get("completions/clipped_ratio", 0.0)
    report.lines.append(
        f"completions cut at max_completion_length={cfg.max_completion_length}: "
        f"{share(round(clipped * count), count)}; mean length {metrics.get('completions/mean_length', 0):.1f} tokens"
    )
    missing = int(per_func.isnan().all(dim=1).sum())
    report.lines.append(f"completions that every reward scored None/NaN: {share(missing, count)}")
    spans = []
    for i, name in enumerate(names):
        column = per_func[:, i]
        seen = column[~column.isnan()]
        nones = int(column.isnan().sum())
        if len(seen):
            low, high = float(seen.min()), float(seen.max())
            spans.append((high - low, name))
            report.lines.append(
                f"reward {name} (weight {float(weights[i]):g}): range [{low:.4g}, {high:.4g}], mean "
                f"{float(seen.mean()):.4g}, None {share(nones, count)}"
            )
        else:
            report.lines.append(f"reward {name} (weight {float(weights[i]):g}): None for every completion")
            report.add(
                "warn",
                f"reward {name} returned None for all {count} completions: it adds nothing to the run.",
                "check the columns it reads and the completions it expects (its None means 'skip this completion').",
            )

    tokens = metrics.get("completions/mean_length", 0.0) * count
    per_step = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps * _processes()
    step = per_step * (generating / count / max(1, cfg.num_iterations) + training / count)
    report.lines.append(
        f"speed: {count} completions, {tokens:.0f} tokens generated in {generating:.2f} s "
        f"({tokens / generating:.1f} tokens/s); one training pass over them {training:.2f} s"
    )
    steps = _total_steps(cfg, prompts, per_step)
    report.lines.append(
        f"estimate: about {step:.1f} s per optimizer step ({per_step} completions)"
        + (f", about {_duration(step * steps)} for {steps} steps" if steps else "")
    )

    if zero == len(rows):
        report.add(
            "fatal",
            f"every group's {n} completions got the same total reward, so every advantage is 0: the run would "
            "learn nothing.",
            "make the reward graded (partial credit), raise num_generations (now "
            f"{n}) or temperature (now {cfg.temperature}) so that completions differ, or start from a model that "
            "sometimes succeeds.",
        )
    elif zero / len(rows) >= ZERO_VARIANCE_WARN:
        report.add(
            "warn",
            f"{share(zero, len(rows))} of the groups carry no signal (every completion scored the same).",
            f"raise num_generations (now {n}) or temperature (now {cfg.temperature}), or grade the reward more finely.",
        )
    if clipped >= TRUNCATED_WARN:
        report.add(
            "warn",
            f"{clipped:.0%} of completions were cut at max_completion_length={cfg.max_completion_length}, before "
            "the end of sequence: their rewards judge unfinished answers.",
            f"raise max_completion_length (e.g. to {cfg.max_completion_length * 2}), or reward brevity.",
        )
    if missing:
        report.add(
            "warn" if missing == count else "note",
            f"{share(missing, count)} completions were scored None by every reward; TRL counts them as 0.",
            "return a number for every completion a reward can judge.",
        )
    spans = [(span, name) for span, name in spans if span > 0]
    if len(spans) >= 2 and max(spans)[0] >= SCALE_WARN * min(spans)[0]:
        (wide, wide_name), (narrow, narrow_name) = max(spans), min(spans)
        report.add(
            "warn",
            f"reward {wide_name} spans {wide:.4g} and {narrow_name} {narrow:.4g}: {wide_name} decides the advantage "
            f"alone, whatever {narrow_name} says.",
            f"scale them: give {wide_name} a weight near {narrow / wide:.2g} (reward.weights), or rescale it.",
        )
    return report


def _processes() -> int:
    from ..validation.config import processes

    return processes()


def _total_steps(cfg: OnlineOptions, prompts: int, per_step: int) -> int:
    if cfg.max_steps > 0:
        return int(cfg.max_steps)
    completions = prompts * cfg.num_generations * max(1, cfg.num_iterations)
    return math.ceil(cfg.num_train_epochs * math.ceil(completions / per_step))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
