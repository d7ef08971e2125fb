"""How a dataset fills a run's batches, checked against its row count before any model loads.

TRL's online trainers draw prompts through `RepeatSampler`, which drops a last chunk smaller than one generation
round: a dataset with fewer distinct prompts than a round needs yields no batch at all, and the run trains 0 steps,
saves the untrained model and exits 0. With `dataloader_drop_last` the other trainers do the same with fewer rows
than one global batch. TextRL refuses both, and says how many rows each epoch leaves out. Imports no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError, Problem
from .view import online, options

if TYPE_CHECKING:
    from .config import TextRLConfig


def batch_lines(cfg: TextRLConfig, rows: int, world: int) -> list[str]:
    """What one epoch of `rows` training rows amounts to (printed by the dry run); raises ConfigError when it is
    not a single batch."""
    from ..spec.rules import generation_batch

    per_device = options(cfg).per_device_train_batch_size
    if (rollout := online(cfg)) is not None:
        n = rollout.num_generations
        gen, _ = generation_batch(cfg.model_dump(), world)
        prompts = gen // n
        rounds = rows // prompts
        if rounds == 0:
            raise ConfigError(
                [
                    Problem(
                        "per_device_train_batch_size",
                        f"one generation round takes {prompts} distinct prompts ({gen} completions / "
                        f"num_generations={n}), but the training set has {rows} rows, so TRL would draw no batch and "
                        f"train 0 steps. Fix: give at least {prompts} rows, or make the generation batch at most "
                        f"{rows * n} completions (per_device_train_batch_size x steps_per_generation x processes, or "
                        "generation_batch_size).",
                    )
                ],
                algo=cfg.algo,
            )
        left = rows - rounds * prompts
        tail = f"; {left} rows left out of each epoch (TRL drops a partial round)" if left else ""
        return [f"epoch: {rows} rows = {rounds} generation round(s) of {prompts} prompts{tail}"]
    batch = per_device * world
    if options(cfg).dataloader_drop_last and rows < batch:
        raise ConfigError(
            [
                Problem(
                    "dataloader_drop_last",
                    f"dataloader_drop_last=True drops a partial batch, and the training set's {rows} rows are less "
                    f"than one batch ({per_device} per device x {world} process(es) = {batch}), so the run would train "
                    f"0 steps. Fix: give at least {batch} rows, lower per_device_train_batch_size, or set "
                    "dataloader_drop_last: false.",
                )
            ],
            algo=cfg.algo,
        )
    return [f"epoch: {rows} rows = {-(-rows // batch)} batch(es) of up to {batch}"]
