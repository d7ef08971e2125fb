"""The command line under random use (issue 31): generated configs, output paths, datasets, models and rewards,
valid and broken in the ways careless users break them, through `textrl-train`. Property: no raw traceback, ever;
every refusal is one `textrl-train: ...` line naming the problem and a fix; a dry run writes nothing anywhere; a run
writes nothing outside its output_dir (and the caches TextRL and the hub keep).

The dry runs go in-process (train_main, the console script's function; no torch), hundreds of them; a few generated
configs that pass the dry run are trained for real in subprocesses, and the run must then do what the dry run said.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from textrl.cli import train_main

# TextRL's warnings (an unknown TRL field in extra, rows TRL will cut) go to stderr in the command, as they should
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

FUZZ = settings(max_examples=150, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])  # fmt: skip

ROWS = {
    "prompts": [{"prompt": p} for p in ["Say hi.", "Write a poem.", "Count to 3.", "Name a tree."] * 4],
    "pairs": [{"prompt": f"Repeat {w}:", "chosen": f" {w}", "rejected": " no"} for w in "abcdefgh"],
    "chat": [{"prompt": [{"role": "user", "content": w}]} for w in "abcdefgh"],
    "bad role": [{"prompt": [{"role": "usr", "content": w}]} for w in "abcd"],
    "labels": [{"prompt": "Say:", "completion": f" {w}", "label": i % 2 == 0} for i, w in enumerate("abcdefgh")],
}
DATA_FILES = {  # name -> how it is written
    "rows.jsonl": lambda rows: "".join(json.dumps(r) + "\n" for r in rows),
    "rows.csv": lambda rows: "prompt,chosen\n" + "".join(f"{r.get('prompt')!s:.20},x\n" for r in rows[:6]),
    "semicolon.csv": lambda rows: "prompt;chosen\na;b\nc;d\n",
    "ragged.csv": lambda rows: "prompt,chosen\na,b,c\n",
    "empty.jsonl": lambda rows: "",
    "broken.jsonl": lambda rows: '{"prompt": "a"\n',
    "latin1.jsonl": lambda rows: '{"prompt": "caf\xe9"}\n',
}
REWARD_MODULES = {
    "fine": "def score(prompts, completions, **_):\n    return [float(len(str(c)) % 3) for c in completions]\n",
    "syntax": "def score(prompts, completions:\n    return []\n",
    "raises": "raise RuntimeError('import-time failure')\n",
    "async": "async def score(prompts, completions, **_):\n    return [1.0 for _ in completions]\n",
    "nones": "def score(prompts, completions, **_):\n    return [None for _ in completions]\n",
    "short": "def score(prompts, completions, **_):\n    return [1.0]\n",
}

ALGOS = st.sampled_from(["grpo", "rloo", "dpo", "kto", "reward_model", "ppo", "GRPO", "reinforce++"])
OUTPUTS = st.sampled_from([
    "out/run", "$RUNS/run", "${RUNS}/r2", "$UNSET_FUZZ_VAR/x", "~/fuzz-run", "data", "data/run", "rows.jsonl/run",
    "rows.jsonl", ".", "out/with space", "out/ünïcödé", "", "/proc/fuzz", "out/run/../run",
])  # fmt: skip
DATASETS = st.one_of(
    st.sampled_from([*DATA_FILES, "data", "missing.jsonl", "data/*.jsonl", "trl-lib/tldr"]).map(lambda p: {"path": p}),
    st.sampled_from(["trl-lib/tldr", "nope/none"]).map(lambda h: {"hub": h}),
    st.sampled_from(list(ROWS)).map(lambda k: {"list": ROWS[k]}),
    st.just({"path": "data", "data_files": ["*.jsonl"]}),
    st.just({"path": ".", "data_files": "nothing-*.jsonl"}),
    st.just({"list": []}),
)
MODELS = st.sampled_from(["textrl:tiny", "textrl:nope", "tiny-copy", "no-config", "cut-weights", "/no/such/model",
                          "org/model", "rows.jsonl", "", "textrl:tiny-reward"]).map(lambda n: {"name": n})  # fmt: skip
REWARDS = st.sampled_from([*(f"{m}_RUN:score" for m in REWARD_MODULES), "missing_mod:score", "fine_RUN:nothere",
                           "rewards/fine_RUN.py:score", "{model: textrl:tiny-reward}", "[fine_RUN:score, fine_RUN:score]",
                           "{compose: [fine_RUN:score, async_RUN:score], weights: [1, 2, 3]}"])  # fmt: skip
OPTIONS = st.dictionaries(
    st.sampled_from(["num_generations", "per_device_train_batch_size", "max_steps", "learning_rate", "beta",
                     "max_completion_length", "max_length", "reward_weights", "padding_free", "loss_type",
                     "gradient_accumulation_steps", "lerning_rate", "save_steps", "eval_strategy"]),
    st.one_of(st.integers(-2, 70), st.floats(-1, 1e3, allow_nan=False), st.sampled_from(
        ["sigmoid", "ipo", "foo", True, "no", "steps", [1.0, 2.0]])),
    max_size=4,
)  # fmt: skip
SETS = st.lists(st.sampled_from(["beta=0.1", " beta = 0.2", "lerning_rate=1", "model.name=textrl:tiny", "oops",
                                 "dataset.path=missing.jsonl", "log_unique_prompts=true"]), max_size=2)  # fmt: skip


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from textrl.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)


def project(root: Path, tiny: Path, run: int) -> None:
    """The sandbox a fuzzed command runs in: data files, a data folder, model folders whole and broken, and reward
    modules (named per example: Python caches imported modules by name)."""
    for name, write in DATA_FILES.items():
        data = write(ROWS["prompts"])
        (root / name).write_bytes(data.encode("latin-1") if name.startswith("latin1") else data.encode())
    (root / "data").mkdir()
    (root / "data" / "train.jsonl").write_text(DATA_FILES["rows.jsonl"](ROWS["prompts"]))
    shutil.copytree(tiny, root / "tiny-copy")
    shutil.copytree(tiny, root / "no-config")
    (root / "no-config" / "config.json").unlink()
    shutil.copytree(tiny, root / "cut-weights")
    weights = root / "cut-weights" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    (root / "rewards").mkdir()
    for name, source in REWARD_MODULES.items():
        (root / f"{name}_{run}.py").write_text(source)
        (root / "rewards" / f"{name}_{run}.py").write_text(source)


CACHES = ("home/.cache", "textrl-home", "hf-cache")
"""Where the libraries keep caches in the sandbox (HOME and TEXTRL_HOME point into it): datasets converts a data
folder to Arrow there, even in a dry run. Not the user's files."""


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` with its size and time, less the caches and Python's bytecode of reward modules."""
    return {
        name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not (name := str(p.relative_to(root))).startswith(CACHES)
    }


def config_text(draw: Any, run: int) -> str:
    body: dict[str, Any] = {"algo": draw(ALGOS), "output_dir": draw(OUTPUTS), "model": draw(MODELS),
                            "dataset": draw(DATASETS), **draw(OPTIONS)}  # fmt: skip
    text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False)
    reward = draw(REWARDS).replace("RUN", str(run))
    return text + f"reward: {reward}\n" if draw(st.booleans()) else text


COUNTER = iter(range(10**9))


def dry_run(root: Path, args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = train_main(args)
            except SystemExit as stop:  # argparse: a malformed command line is its usage error, status 2
                code = stop.code if isinstance(stop.code, int) else 2
    finally:
        os.chdir(cwd)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@FUZZ
@given(data=st.data())
def test_random_dry_runs_refuse_cleanly_and_write_nothing(
    data: Any, tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = next(COUNTER)
    with tempfile.TemporaryDirectory(prefix="textrl-fuzz-") as scratch:
        root = Path(scratch)
        project(root, tiny, run)
        monkeypatch.setenv("RUNS", str(root / "runs"))
        monkeypatch.setenv("HOME", str(root / "home"))
        monkeypatch.setenv("TEXTRL_HOME", str(root / "textrl-home"))
        (root / "textrl-home").mkdir()
        (root / "textrl-home" / "tiny").symlink_to(tiny)
        monkeypatch.delenv("UNSET_FUZZ_VAR", raising=False)
        (root / "run.yaml").write_text(config_text(data.draw, run))
        args = ["--config", "run.yaml", "--dry-run", *(a for s in data.draw(SETS) for a in ("--set", s))]
        args += data.draw(st.sampled_from([[], ["--overwrite"], ["--resume"], ["--resume", "--overwrite"]]))
        before = snapshot(root)
        code, out, err = dry_run(root, args)
        assert "Traceback" not in err + out, f"{(root / 'run.yaml').read_text()}\n{args}\n{err}"
        assert code in (0, 2), (code, err)
        if code == 0:
            assert out.rstrip().endswith("dry run: the run would start"), out
        else:
            message = [line for line in err.splitlines() if line.startswith(("textrl-train: ", "usage: "))]
            assert message and ("Fix" in err or "allowed" in err or "usage:" in err or "required" in err), err
        assert snapshot(root) == before, "a dry run wrote or changed a file"


TRAINABLE = st.fixed_dictionaries({
    "algo": st.sampled_from(["grpo", "rloo"]),
    "output_dir": st.sampled_from(["out/run", "$RUNS/run", "~/fuzz-run", "out/with space"]),
    "dataset": st.sampled_from([{"path": "rows.jsonl"}, {"path": "data"}, {"list": ROWS["prompts"]},
                                {"path": "data", "data_files": ["*.jsonl"]}]),
    "per_device_train_batch_size": st.sampled_from([4, 8]),
    "num_generations": st.sampled_from([2, 4]),
})  # fmt: skip


@pytest.mark.slow
@settings(max_examples=4, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip
@given(body=TRAINABLE)
def test_runs_write_only_into_their_output_dir(body: dict[str, Any], tiny: Path) -> None:
    run = next(COUNTER)
    with tempfile.TemporaryDirectory(prefix="textrl-fuzz-run-") as scratch:
        root = Path(scratch)
        project(root, tiny, run)
        home = root / "textrl-home"
        home.mkdir()
        (home / "tiny").symlink_to(tiny)
        options = {"max_steps": 1, "max_completion_length": 4, "gradient_checkpointing": False}
        text = yaml.safe_dump({**body, **options, "model": {"name": "textrl:tiny"}}, sort_keys=False)
        (root / "run.yaml").write_text(text + f"reward: fine_{run}:score\n")
        env = {**os.environ, "RUNS": str(root / "runs"), "HOME": str(root / "home"), "TEXTRL_HOME": str(home),
               "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(root / "hf-cache")}  # fmt: skip
        command = [str(Path(sys.executable).parent / "textrl-train"), "--config", "run.yaml"]
        dry = subprocess.run([*command, "--dry-run"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
        assert dry.returncode == 0, dry.stderr
        before = snapshot(root)
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]  # the dry run said so
        output = Path(body["output_dir"].replace("$RUNS", str(root / "runs")).replace("~", str(root / "home")))
        output = output if output.is_absolute() else root / output
        assert (output / "model.safetensors").is_file() and (output / "textrl_manifest.json").is_file()
        changed = {p for p, stat in snapshot(root).items() if before.get(p) != stat}
        outside = {p for p in changed if not (root / p).resolve().is_relative_to(output.resolve())}
        assert outside == set(), f"the run wrote outside {output}: {sorted(outside)}"
