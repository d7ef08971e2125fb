"""SIGTERM at any moment of a textrl-train run (issue 17, item 4): every run, resumed with --resume, ends at exactly
max_steps with the metrics and the weights of an uninterrupted run, and no checkpoint is ever past max_steps.

20 runs of `textrl-train` on textrl:tiny (max_steps 8, evaluation at steps 4 and 8, saves at 3, 6 and 8, two
checkpoints kept) are each sent SIGTERM at a moment chosen with a seeded generator (TEXTRL_STRESS_SEED overrides the
seed; the seed and every moment are printed): during start-up (before the handler is installed), as the first step
begins, mid-step, during an evaluation, during a save, at the last step, during the last evaluation and the last
save, while the final model is written (after the handler is removed), at a random time, and twice (the second
signal stops at once, in the middle of the save the first one asked for). Two of the resumed runs get a SIGTERM
of their own, at a random moment of their training, and are resumed again. The runs go two at a time.

Step max_steps + 1 (a run with max_steps 30 seen resumed to a trainer_state.json at global step 31): transformers
checks max_steps only after a step, so a run resumed from the checkpoint at max_steps (a run stopped at its last
step, during its last evaluation or save, or after it; or a finished run) trained one more step and saved it. The
moments at the last step and after it, and `test_resuming_a_finished_run_trains_no_further_step`, show it; TextRL's
AtomicCheckpoints.get_batch_samples stops such a run before that step.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .conftest import BIN, ROOT, write

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("TEXTRL_STRESS_SEED", "17"))
MAX_STEPS = 8
CONFIG = f"""algo: grpo
output_dir: out
num_generations: 4
per_device_train_batch_size: 8
per_device_eval_batch_size: 8
max_completion_length: 8
learning_rate: 1e-3
max_steps: {MAX_STEPS}
logging_steps: 1
save_steps: 3
save_total_limit: 2
eval_strategy: steps
eval_steps: 4
seed: 3
gradient_checkpointing: false
model: {{name: "textrl:tiny"}}
dataset: {{path: quickstart_prompts.jsonl}}
eval_dataset: {{path: held_out.jsonl}}
reward: stress_rewards:marked
"""
HELD_OUT = "".join(
    json.dumps({"prompt": f"A held out question, number {i}: what comes next?"}) + "\n" for i in range(4)
)
EVAL_CALLS = 2
"""Reward calls per evaluation: 4 held-out prompts x 4 generations, 8 completions a batch."""
REWARD = """import os
import time
from pathlib import Path


def _count(name):
    path = Path(name)
    count = int(path.read_text() or 0) + 1 if path.exists() else 1
    Path(name + ".tmp").write_text(str(count))
    os.replace(name + ".tmp", name)


def marked(prompts, completions, **_):
    # one call per training step, EVAL_CALLS per evaluation: the test reads the counts to time its signals
    _count("eval_calls" if any("held out" in str(p) for p in prompts) else "train_calls")
    time.sleep(0.05)  # room to send a signal mid-step
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]
"""
SLOW_SAVES = """import sys
import time
from pathlib import Path

from transformers import Trainer

from textrl.cli import train_main
from textrl.trainers.base import TextRLTrainer

write_rng_state, save_model = Trainer._save_rng_state, TextRLTrainer.save_model


def staged_slowly(self, output_dir):
    write_rng_state(self, output_dir)
    time.sleep(0.3)  # the checkpoint is staged, not yet published: room to send a signal during a save


def final_save_slowly(self, output_dir=None):
    Path("final_save").touch()
    time.sleep(0.3)  # training is over and the signal handler removed: room to send a signal
    save_model(self, output_dir)


Trainer._save_rng_state = staged_slowly
TextRLTrainer.save_model = final_save_slowly
sys.exit(train_main(sys.argv[1:]))
"""
TIMING = re.compile(r"runtime|per_second|step_time")
"""Logged keys that measure time, not training."""
STOPPED = re.compile(r"stopped by SIGTERM at step (\d+); checkpoint saved to (\S+)\. Resume with: (.*)")
FIRST_STEP_MOMENTS = ("startup", "first-step")
"""Moments that may come before GracefulStop is installed: SIGTERM's default action ends the process (-15)."""
LAST_STEP_MOMENTS = ("last-step", "final-eval", "final-save")


@dataclass(frozen=True)
class Case:
    moment: str
    target: float
    """startup: seconds after launch; mid-step, last-step: the training step (reward call) under way; eval,
    final-eval: the evaluation's reward call under way; save, final-save: the step of the checkpoint staged. random,
    first-step: the signal comes `delay` seconds after training starts (the manifest is written)."""
    delay: float = 0.0
    """Seconds between the moment and the signal."""
    again: float | None = None
    """Seconds after the first resumed run's first step begins to send it a SIGTERM too (then resume again)."""
    second: bool = False
    """Send a second SIGTERM (stop at once) during the save the first one asked for."""

    @property
    def slow_saves(self) -> bool:
        return self.moment in ("save", "final-save", "after-train") or self.second

    def __str__(self) -> str:
        extra = (f", again after {self.again:.2f}s" if self.again else "") + (", second signal" if self.second else "")
        return f"{self.moment} {self.target:g} (+{self.delay:.3f}s{extra})"


def stress_cases(seed: int) -> list[Case]:
    rng = random.Random(seed)
    cases = [Case("startup", round(rng.uniform(0.5, 5.0), 2)) for _ in range(2)]
    cases += [Case("first-step", 0, round(rng.uniform(0.0, 0.2), 3)) for _ in range(2)]
    cases += [Case("mid-step", rng.randint(1, MAX_STEPS - 1), round(rng.uniform(0, 0.04), 3)) for _ in range(4)]
    cases += [Case("eval", 1, round(rng.uniform(0, 0.04), 3)), Case("eval", 2, round(rng.uniform(0, 0.04), 3))]
    cases += [Case("save", 3), Case("save", 6)]
    cases += [Case("last-step", MAX_STEPS, round(rng.uniform(0, 0.04), 3)), Case("final-eval", 2 * EVAL_CALLS - 1)]
    cases += [Case("final-save", MAX_STEPS), Case("after-train", 0)]
    cases += [Case("random", 0, round(rng.uniform(0.0, 3.0), 2)) for _ in range(2)]
    cases += [Case("mid-step", rng.randint(4, MAX_STEPS - 1), second=True) for _ in range(2)]
    for index in (4, 10):  # resumed runs that are themselves interrupted, at a random moment of their training
        cases[index] = Case(cases[index].moment, cases[index].target, cases[index].delay, round(rng.uniform(0, 1.5), 2))
    return cases


CASES = stress_cases(SEED)


@dataclass
class Attempt:
    command: list[str]
    returncode: int | None = None
    signals: list[float] = field(default_factory=list)
    """Seconds after launch at which a SIGTERM was sent."""
    stdout: str = ""
    stderr: str = ""
    checkpoints: dict[int, int | None] = field(default_factory=dict)
    """checkpoint-N folders after the run: N -> global_step in its trainer_state.json (None: no such file)."""

    def tail(self) -> str:
        return f"$ {' '.join(self.command[-3:])} -> {self.returncode}, signals at {self.signals}\n{self.stderr[-1500:]}"


@dataclass
class Outcome:
    attempts: list[Attempt] = field(default_factory=list)
    error: str | None = None
    history: list[dict[str, Any]] | None = None
    model: bytes | None = None
    seconds: float = 0.0

    def report(self) -> str:
        return "\n".join(a.tail() for a in self.attempts) + (f"\n{self.error}" if self.error else "")


def checkpoints(run_dir: Path) -> dict[int, int | None]:
    found: dict[int, int | None] = {}
    for path in run_dir.glob("checkpoint-*") if run_dir.is_dir() else ():
        state = path / "trainer_state.json"
        if path.name.split("-")[1].isdigit():
            found[int(path.name.split("-")[1])] = (
                json.loads(state.read_text())["global_step"] if state.is_file() else None
            )
    return found


def count(case_dir: Path, name: str) -> int:
    try:
        return int((case_dir / name).read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def staged(case_dir: Path, at_least: int) -> bool:
    staging = case_dir / "out/.textrl-partial"
    return any(
        (p / "rng_state.pth").is_file() and int(p.name.split("-")[1]) >= at_least
        for p in (staging.glob("checkpoint-*") if staging.is_dir() else ())
        if p.name.split("-")[1].isdigit()
    )


def trigger(case: Case, case_dir: Path) -> Callable[[float], bool]:
    """Whether the case's moment has come, given the seconds since launch."""
    moment, target = case.moment, case.target
    if moment == "startup":
        return lambda elapsed: elapsed >= target
    if moment in ("first-step", "random"):  # random: `delay` after this
        return lambda _: (case_dir / "out/textrl_manifest.json").is_file()
    if moment in ("mid-step", "last-step"):
        return lambda _: count(case_dir, "train_calls") >= target
    if moment in ("eval", "final-eval"):
        return lambda _: count(case_dir, "eval_calls") >= target
    if moment in ("save", "final-save"):
        return lambda _: staged(case_dir, int(target))
    if moment == "after-train":
        return lambda _: (case_dir / "final_save").exists()
    raise AssertionError(moment)


class Runs:
    def __init__(self, textrl_home: Path) -> None:
        self.env = {**os.environ, "TEXTRL_HOME": str(textrl_home), "OMP_NUM_THREADS": "1"}

    def prepare(self, case_dir: Path) -> Path:
        case_dir.mkdir(parents=True)
        shutil.copy(ROOT / "examples/quickstart_prompts.jsonl", case_dir)
        write(case_dir / "held_out.jsonl", HELD_OUT)
        write(case_dir / "stress_rewards.py", REWARD)
        write(case_dir / "slow_saves.py", SLOW_SAVES)
        write(case_dir / "run.yaml", CONFIG)
        return case_dir

    def run(
        self, case_dir: Path, args: list[str], *, slow_saves: bool = False, when: Callable[[float], bool] | None = None,
        delay: float = 0.0, second: Callable[[float], bool] | None = None,
    ) -> Attempt:  # fmt: skip
        """Run textrl-train in `case_dir`; SIGTERM once `when(seconds since launch)` holds, then `delay` seconds
        later; with `second`, another SIGTERM once `second(seconds since launch)` holds."""
        for name in ("train_calls", "eval_calls", "final_save"):
            (case_dir / name).unlink(missing_ok=True)
        program = [sys.executable, "slow_saves.py"] if slow_saves else [str(BIN / "textrl-train")]
        attempt = Attempt([*program, "--config", "run.yaml", *args])
        number = len(list(case_dir.glob("*.stderr")))
        with open(case_dir / f"{number}.stdout", "w+") as out, open(case_dir / f"{number}.stderr", "w+") as err:
            proc = subprocess.Popen(attempt.command, cwd=case_dir, env=self.env, stdout=out, stderr=err, text=True)
            start = time.monotonic()
            try:
                for index, wait in enumerate(w for w in (when, second) if w is not None):
                    while proc.poll() is None and time.monotonic() - start < 240 and not wait(time.monotonic() - start):
                        time.sleep(0.01)
                    if index == 0 and delay and proc.poll() is None:
                        time.sleep(delay)
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGTERM)
                        attempt.signals.append(round(time.monotonic() - start, 2))
                attempt.returncode = proc.wait(timeout=max(300 - (time.monotonic() - start), 1))
            finally:
                if proc.poll() is None:  # timed out, or this thread failed: no process outlives the test
                    proc.kill()
                    proc.wait()
            out.seek(0), err.seek(0)
            attempt.stdout, attempt.stderr = out.read(), err.read()
        attempt.checkpoints = checkpoints(case_dir / "out")
        return attempt

    def finish(self, case_dir: Path, outcome: Outcome, *, again: float | None = None) -> None:
        """Resume until the run ends (at most 4 runs); the first, `again` seconds after its first step begins."""
        for _ in range(4):
            if outcome.attempts[-1].returncode == 0:
                break
            if any(g is not None for g in checkpoints(case_dir / "out").values()):
                args = ["--resume"]
            elif (case_dir / "out").is_dir() and any((case_dir / "out").iterdir()):
                refused = self.run(case_dir, ["--resume"])  # nothing to resume from: said so, then start over
                outcome.attempts.append(refused)
                args = ["--overwrite"]
            else:
                args = []
            if again is not None:
                steps = lambda _: count(case_dir, "train_calls") >= 1  # noqa: E731 (the first step is under way)
                outcome.attempts.append(self.run(case_dir, args, when=steps, delay=again))
                again = None
            else:
                outcome.attempts.append(self.run(case_dir, args))
        final = case_dir / f"out/checkpoint-{MAX_STEPS}/trainer_state.json"
        if outcome.attempts[-1].returncode == 0 and final.is_file():
            outcome.history = logged(json.loads(final.read_text())["log_history"])
            outcome.model = (case_dir / "out/model.safetensors").read_bytes()


def logged(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in h.items() if not TIMING.search(k)} for h in history]


def guarded(work: Callable[[Outcome], None]) -> Outcome:
    outcome, start = Outcome(), time.monotonic()
    try:
        work(outcome)
    except Exception:
        outcome.error = traceback.format_exc()
    outcome.seconds = round(time.monotonic() - start, 1)
    return outcome


@pytest.fixture(scope="module")
def stress(textrl_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every run, two at a time: the reference, the interrupted and resumed runs, the finished run resumed."""
    root, runs = tmp_path_factory.mktemp("stress"), Runs(textrl_home)
    print(f"\ninterrupt stress test: seed {SEED} (TEXTRL_STRESS_SEED), {len(CASES)} runs")

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
        assert len(first.signals) == 2 and "second SIGTERM: stopping at once" in first.stderr, why
        assert first.returncode in (-signal.SIGINT, -signal.SIGTERM), why
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

    from textrl.trainers.atomic import AtomicCheckpoints

    parameters = ["self", "epoch_iterator", "num_batches", "device"]
    assert list(inspect.signature(Trainer.get_batch_samples).parameters) == parameters
    assert list(inspect.signature(AtomicCheckpoints.get_batch_samples).parameters) == parameters
    loop = getattr(Trainer, "_run_epoch", Trainer._inner_training_loop)
    assert "self.get_batch_samples(" in inspect.getsource(loop)
