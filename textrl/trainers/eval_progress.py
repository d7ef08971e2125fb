"""An evaluation shows its progress bar when it starts, not after its first batch.

transformers' ProgressCallback opens the evaluation bar on the first `on_prediction_step`, that is once the first
batch is done. For online algorithms a batch is a round of generation: the main job sat 56 s at `eval_on_start` with
nothing on the screen. `EvalProgress` is mixed in front of the TRL trainer class (as AtomicCheckpoints is) and opens
the bar, at 0 of its batches, as soon as the evaluation's data loader exists; ProgressCallback then updates and
closes it as usual. tests/drift/test_eval_progress_internals.py fails when transformers renames what this reads.
"""

from __future__ import annotations

from typing import Any


class EvalProgress:
    """Mixin placed before a transformers `Trainer` subclass in the MRO."""

    def get_eval_dataloader(self, eval_dataset: Any = None) -> Any:
        loader = super().get_eval_dataloader(eval_dataset)  # type: ignore[misc]
        trainer: Any = self
        if trainer.args.disable_tqdm or not trainer.is_world_process_zero():
            return loader
        try:
            batches = len(loader)
        except TypeError:  # an iterable dataset: no length to show
            return loader
        from transformers.trainer_callback import ProgressCallback

        for callback in trainer.callback_handler.callbacks:  # (a notebook's own callback is another class: left be)
            if type(callback) is ProgressCallback and callback.prediction_bar is None:
                from tqdm.auto import tqdm

                callback.prediction_bar = tqdm(
                    total=batches, leave=callback.training_bar is None, dynamic_ncols=True, desc="evaluating"
                )
        return loader
