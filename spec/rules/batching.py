"""Rules about batches: the generation and evaluation batches of online algorithms against num_generations."""

from collections.abc import Mapping
from typing import Any

from ..model import rule


def _divisors(total: int, most: int = 12) -> list[int]:
    """The divisors >= 2 of `total`, smallest first, at most `most` of them (found in O(sqrt(total)))."""
    small, large = [], []
    d = 1
    while d * d <= total:
        if total % d == 0:
            small.append(d)
            if d * d != total:
                large.append(total // d)
        d += 1
    return [x for x in small + large[::-1] if x >= 2][:most]


def generation_batch(cfg: Mapping[str, Any], processes: int) -> tuple[int, str]:
    """The completions generated per round over all processes, and how that number arises (TRL's arithmetic:
    generation_batch_size, or per_device_train_batch_size × steps_per_generation (default: the accumulation
    steps) × processes). The dry run prints both; the rule below checks them."""
    gen, spg = cfg.get("generation_batch_size"), cfg.get("steps_per_generation")
    if gen is not None:
        return gen, "generation_batch_size"
    steps = spg or cfg["gradient_accumulation_steps"]
    processes_part = f" × {processes} processes" if processes > 1 else ""
    source = (
        f"per_device_train_batch_size × {'steps_per_generation' if spg else 'gradient_accumulation_steps'}"
        f"{' × processes' if processes > 1 else ''} = {cfg['per_device_train_batch_size']} × {steps}{processes_part}"
    )
    return cfg["per_device_train_batch_size"] * steps * processes, source


@rule(
    "num_generations",
    "per_device_train_batch_size",
    "generation_batch_size",
    "steps_per_generation",
    description="The generation batch (per_device_train_batch_size × steps_per_generation × processes, or "
    "generation_batch_size) is a multiple of num_generations; the number of processes is the run's (textrl-train's "
    "--num_processes, or WORLD_SIZE in a launched process; 1 otherwise).",
    per_process=True,
)
def generation_batch_divisible(cfg: Mapping[str, Any], world: int) -> str | None:
    gen, spg = cfg.get("generation_batch_size"), cfg.get("steps_per_generation")
    per_device, n = cfg["per_device_train_batch_size"] * world, cfg["num_generations"]
    if gen is not None and spg is not None:
        return (
            f"generation_batch_size={gen} and steps_per_generation={spg} are both set; they say the same thing two "
            "ways. Fix: set only one of them."
        )
    gen, source = generation_batch(cfg, world)
    if cfg.get("generation_batch_size") is not None and gen % per_device:
        return (
            f"generation_batch_size={gen} is not a multiple of the global batch (per_device_train_batch_size × "
            f"processes = {per_device}). Fix: use a multiple of {per_device}, e.g. "
            f"{per_device * max(1, round(gen / per_device))}."
        )
    if gen % n:
        fits = _divisors(gen)
        where = f"over {world} processes" if world > 1 else "on one process"
        return (
            f"the generation batch ({source} = {gen} completions {where}) is not divisible by "
            f"num_generations={n}, so prompt groups would be split. Allowed num_generations for this batch: "
            f"{', '.join(map(str, fits)) or 'none'}. Fix: change num_generations or per_device_train_batch_size "
            "so that the batch is a multiple of num_generations."
        )
    return None


@rule(
    "per_device_eval_batch_size",
    "num_generations",
    "num_generations_eval",
    "eval_strategy",
    description="When evaluating, per_device_eval_batch_size × processes is a multiple of num_generations_eval (or "
    "num_generations).",
    per_process=True,
)
def eval_generation_batch_divisible(cfg: Mapping[str, Any], world: int) -> str | None:
    if cfg.get("eval_strategy", "no") == "no":
        return None
    n = cfg.get("num_generations_eval") or cfg["num_generations"]
    batch = cfg["per_device_eval_batch_size"] * world
    if batch % n == 0:
        return None
    which = "num_generations_eval" if cfg.get("num_generations_eval") else "num_generations"
    return (
        f"the evaluation batch (per_device_eval_batch_size × processes = {batch}) is not divisible by {which}={n}; "
        "TRL refuses it when the config is built. Fix: make per_device_eval_batch_size a multiple of "
        f"{n}, or set num_generations_eval to a divisor of {batch}."
    )
