"""The runs behind tests/cli/test_interrupt_stress.py: the configuration, the seeded moments, and the runner that
starts textrl-train, sends SIGTERM at a moment and resumes (see that module's docstring)."""

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .conftest import BIN, ROOT, write

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


EACH_MOMENT = (0, 2, 4, 5, 8, 10, 11, 12, 13, 14, 15, 16, 18)
"""Of the 20 cases, one per moment (two mid-step: one of them interrupted again after its resume; both saves: at 6
the kept-checkpoint rotation runs), a random moment and the run stopped twice: what `bash scripts/test.sh` runs.
The other 7 repeat a moment at another random offset; TEXTRL_STRESS_FULL=1 runs all 20."""
FULL = os.environ.get("TEXTRL_STRESS_FULL") == "1"
CASES = stress_cases(SEED) if FULL else [stress_cases(SEED)[i] for i in EACH_MOMENT]


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
