"""What textrl/trainers/eval_progress.py reads of transformers: ProgressCallback's `prediction_bar` (opened on the
first prediction step only when it is None, updated there, closed on_evaluate) and `training_bar`, and the Trainer's
`get_eval_dataloader`. A transformers release that renames them fails here, not silently in a run."""

from __future__ import annotations

import inspect

import pytest

pytestmark = pytest.mark.slow


def test_progress_callback_keeps_its_bars_where_eval_progress_looks() -> None:
    from transformers import Trainer
    from transformers.trainer_callback import ProgressCallback

    callback = ProgressCallback()
    assert callback.prediction_bar is None and callback.training_bar is None
    step = inspect.getsource(ProgressCallback.on_prediction_step)
    assert "if self.prediction_bar is None" in step and "self.prediction_bar.update(1)" in step
    assert "self.prediction_bar.close()" in inspect.getsource(ProgressCallback.on_evaluate)
    assert "self.get_eval_dataloader(" in inspect.getsource(Trainer.evaluate)
