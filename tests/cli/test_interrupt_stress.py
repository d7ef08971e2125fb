"""SIGTERM at any moment of a textrl-train run (issue 17, item 4): every run, resumed with --resume, ends at exactly
max_steps with the metrics and the weights of an uninterrupted run, and no checkpoint is ever past max_steps.

13 runs (one per moment; TEXTRL_STRESS_FULL=1: 20, repeating moments at other offsets) of `textrl-train` on textrl:tiny (max_steps 8, evaluation at steps 4 and 8, saves at 3, 6 and 8, two
checkpoints kept) are each sent SIGTERM at a moment chosen with a seeded generator (TEXTRL_STRESS_SEED overrides the
seed; the seed and every moment are printed): during start-up (before the handler is installed), as the first step
begins, mid-step, during an evaluation, during a save, at the last step, during the last evaluation and the last
save, while the final model is written (after the handler is removed), at a random time, and twice (the second
signal ends the process at once, in the middle of the save the first one asked for). Two of the resumed runs get a SIGTERM
of their own, at a random moment of their training, and are resumed again. The runs go two at a time.

Step max_steps + 1 (a run with max_steps 30 seen resumed to a trainer_state.json at global step 31): transformers
checks max_steps only after a step, so a run resumed from the checkpoint at max_steps (a run stopped at its last
step, during its last evaluation or save, or after it; or a finished run) trained one more step and saved it. The
moments at the last step and after it, and `test_resuming_a_finished_run_trains_no_further_step`, show it; TextRL's
AtomicCheckpoints.get_batch_samples stops such a run before that step.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from .stress_runs import (
    CASES,
    FIRST_STEP_MOMENTS,
    LAST_STEP_MOMENTS,
    MAX_STEPS,
    SEED,
    STOPPED,
    Attempt,
    Case,
    Outcome,
    Runs,
    checkpoints,
    guarded,
    staged,
    trigger,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stress(textrl_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every run, two at a time: the reference, the interrupted and resumed runs, the finished run resumed."""
    root, runs = tmp_path_factory.mktemp("stress"), Runs(textrl_home)
    print(f"\ninterrupt stress test: seed {SEED} (TEXTRL_STRESS_SEED), {len(CASES)} runs (TEXTRL_STRESS_FULL=1: 20)")

    def reference(outcome: Outcome) -> None:
        outcome.attempts.append(runs.run(runs.prepare(root / "reference"), []))
        runs.finish(root / "reference", outcome)

    def interrupted(case: Case, name: str) -> Callable[[Outcome], None]:
        def work(outcome: Outcome) -> None:
            case_dir = runs.prepare(root / name)
            second = (lambda _: staged(case_dir, int(case.target))) if case.second else None
            when = trigger(case, case_dir)
            outcome.attempts.append(
                runs.run(case_dir, [], slow_saves=case.slow_saves, when=when, delay=case.delay, second=second)
            )
            runs.finish(case_dir, outcome, again=case.again)

        return work

    def finished(outcome: Outcome) -> None:
        reference_done.result()
        case_dir = root / "finished"
        shutil.copytree(root / "reference", case_dir)
        outcome.attempts.append(Attempt(["(the reference run)"], 0, checkpoints=checkpoints(case_dir / "out")))
        outcome.attempts.append(runs.run(case_dir, ["--resume"]))
        runs.finish(case_dir, outcome)

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        reference_done: Future[Outcome] = pool.submit(guarded, reference)
        futures = {f"{i:02d}-{c.moment}": pool.submit(guarded, interrupted(c, f"{i:02d}-{c.moment}")) for i, c in
                   enumerate(CASES)}  # fmt: skip
        futures["finished"] = pool.submit(guarded, finished)
        outcomes = {"reference": reference_done.result(), **{k: f.result() for k, f in futures.items()}}
    for (name, outcome), case in zip(outcomes.items(), [None, *CASES, None], strict=True):
        runs_seen = ", ".join(f"{a.command[-1]}:{a.returncode}@{a.signals}" for a in outcome.attempts)
        print(f"  {name}: {case or ''} -> {runs_seen} ({outcome.seconds}s)")
    print(f"  {len(outcomes)} lifecycles in {time.monotonic() - start:.0f}s")
    return outcomes


def never_past_max_steps(outcome: Outcome) -> None:
    """No checkpoint-N folder with N > max_steps, and no trainer_state.json past it, after any of the runs."""
    for attempt in outcome.attempts:
        assert max(attempt.checkpoints, default=0) <= MAX_STEPS, f"seed {SEED}: {attempt.tail()}"
        assert all(g is None or g <= MAX_STEPS for g in attempt.checkpoints.values()), f"seed {SEED}: {attempt.tail()}"


def same_end_as(outcome: Outcome, reference: Outcome) -> None:
    """Done at max_steps; checkpoint-<max_steps> logged what the reference logged (but timings); same weights."""
    last = outcome.attempts[-1]
    assert last.returncode == 0 and f"done at global step {MAX_STEPS}," in last.stdout, outcome.report()
    assert outcome.history is not None and reference.history is not None, outcome.report()
    assert [h["step"] for h in outcome.history] == [h["step"] for h in reference.history]
    for mine, theirs in zip(outcome.history, reference.history, strict=True):
        assert mine.keys() == theirs.keys() and mine == pytest.approx(theirs, abs=1e-6), (mine, theirs)
    assert outcome.model == reference.model, "the final weights differ from the uninterrupted run's"


def test_reference_run(stress: dict[str, Outcome]) -> None:
    reference = stress["reference"]
    assert reference.error is None and len(reference.attempts) == 1, reference.report()
    never_past_max_steps(reference)
    assert reference.history is not None and reference.attempts[0].checkpoints == {6: 6, MAX_STEPS: MAX_STEPS}
    steps = [h["step"] for h in reference.history if "reward" in h]
    evals = [h["step"] for h in reference.history if "eval_reward" in h]
    assert steps == list(range(1, MAX_STEPS + 1)) and evals == [4, 8], reference.history


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{i:02d}-{c.moment}" for i, c in enumerate(CASES)])
def test_sigterm_then_resume_ends_at_max_steps_like_an_uninterrupted_run(
    stress: dict[str, Outcome], index: int
) -> None:
    case = CASES[index]
    outcome = stress[f"{index:02d}-{case.moment}"]
    why = f"seed {SEED}, {case}:\n{outcome.report()}"
    assert outcome.error is None, why
    first = outcome.attempts[0]
    if case.moment == "random" and not first.signals:  # it ended first: then it is a finished run resumed
        assert first.returncode == 0, why
    else:
        assert first.signals, f"the run ended before its moment; {why}"
    if case.second:  # stopped at once, in the save the first signal asked for: only the staged folder is left
        # the first signal gave SIGTERM its default action back: the second ends the process in the kernel
        assert len(first.signals) == 2 and "send it again to stop at once" in first.stderr, why
        assert first.returncode == -signal.SIGTERM, why
        assert "a save that was cut off" in outcome.attempts[1].stderr, why
    elif first.returncode in (0, -signal.SIGTERM):  # before GracefulStop was installed, or after it was removed
        assert case.moment in (*FIRST_STEP_MOMENTS, "after-train", "random"), why
    else:  # GracefulStop: the step under way ends, its checkpoint is saved, exit status 143
        assert case.moment != "after-train" and first.returncode == 143, why
        stop = STOPPED.search(first.stderr)
        assert stop, why
        step = int(stop.group(1))
        assert stop.group(2) == f"out/checkpoint-{step}" and first.checkpoints.get(step) == step, why
        command = "textrl-train --resume" if case.slow_saves else "textrl-train --config run.yaml --resume"
        assert stop.group(3) == command, why
        if case.moment in LAST_STEP_MOMENTS:
            assert step == MAX_STEPS, why
        elif case.moment == "mid-step":  # the step under way (or a later one, if the signal came late)
            assert case.target <= step <= MAX_STEPS, why
        elif case.moment in ("eval", "save"):  # after a step's end (4; 3 or 6): the next step's end stops the run
            assert (4 if case.moment == "eval" else case.target) < step <= MAX_STEPS, why
    if case.moment == "after-train":
        assert first.returncode == -signal.SIGTERM and first.checkpoints == {6: 6, MAX_STEPS: MAX_STEPS}, why
    never_past_max_steps(outcome)
    for attempt in outcome.attempts[1:]:
        # a resumed run ends at max_steps, or was sent a signal (again), or found nothing to resume (2)
        assert attempt.returncode == 0 or attempt.signals or attempt.returncode == 2, why
        if "--resume" in attempt.command and attempt.returncode in (0, 143):
            newest = max(n for n, g in checkpoints_before(outcome, attempt).items() if g is not None)
            assert f"resuming from out/checkpoint-{newest}" in attempt.stderr, why
        if attempt.returncode == 2:  # --resume with no complete checkpoint: said so
            assert "found no complete checkpoint-N folder in out" in attempt.stderr, why
    same_end_as(outcome, stress["reference"])


def checkpoints_before(outcome: Outcome, attempt: Attempt) -> dict[int, int | None]:
    return outcome.attempts[outcome.attempts.index(attempt) - 1].checkpoints


def test_resuming_a_finished_run_trains_no_further_step(stress: dict[str, Outcome]) -> None:
    """transformers resumed from checkpoint-8 of a max_steps-8 run (8 steps are not a whole epoch) used to train
    step 9 and save checkpoint-9; the run ends at once with the checkpoint's weights."""
    outcome = stress["finished"]
    assert outcome.error is None and len(outcome.attempts) == 2, outcome.report()
    resumed = outcome.attempts[1]
    assert f"resuming from out/checkpoint-{MAX_STEPS}" in resumed.stderr, resumed.tail()
    assert resumed.checkpoints == {6: 6, MAX_STEPS: MAX_STEPS}, resumed.tail()
    never_past_max_steps(outcome)
    same_end_as(outcome, stress["reference"])


def test_the_max_steps_guard_hooks_a_method_the_training_loop_still_calls() -> None:
    """AtomicCheckpoints.get_batch_samples keeps a resumed run from training past max_steps: a transformers that
    renamed the method, or stopped calling it for each optimizer step, would let step max_steps + 1 back in."""
    import inspect

    from transformers import Trainer

    from textrl.checkpoints.atomic import AtomicCheckpoints

    parameters = ["self", "epoch_iterator", "num_batches", "device"]
    assert list(inspect.signature(Trainer.get_batch_samples).parameters) == parameters
    assert list(inspect.signature(AtomicCheckpoints.get_batch_samples).parameters) == parameters
    loop = getattr(Trainer, "_run_epoch", Trainer._inner_training_loop)
    assert "self.get_batch_samples(" in inspect.getsource(loop)
