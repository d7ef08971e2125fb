"""textrl-eval as a careless user meets it: --output checked before the model loads (and never replacing a file
without --overwrite), async rewards, file-path references, import errors, and progress while it works."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import write

pytestmark = pytest.mark.slow

EVAL = ("textrl-eval", "--model", "textrl:tiny", "--dataset", "quickstart_prompts.jsonl", "--limit", "6")
REWARD = ("--reward", "quickstart_rewards:lowercase_share")
ASYNC_JUDGE = """import asyncio


async def judge(prompts, completions, **_):
    await asyncio.sleep(0)
    return [float(len(c)) for c in completions]
"""


@pytest.mark.parametrize(
    ("output", "extra", "message"),
    [
        ("earlier.jsonl", (), "--output: earlier.jsonl exists. Fix: choose a new file, or pass --overwrite to replace it."),
        ("quickstart_prompts.jsonl/scores.jsonl", (), "--output: quickstart_prompts.jsonl/scores.jsonl cannot be written: "
         "quickstart_prompts.jsonl is a file, not a folder. Fix: choose a path in a folder"),
        ("results", (), "--output: results is a folder; --output takes a file. Fix: give a file name, e.g. "
         "results/scores.jsonl."),
        ("/sys/textrl_scores.jsonl", (), "--output: /sys/textrl_scores.jsonl cannot be written: creating a file in /sys "
         "failed"),
        ("quickstart_prompts.jsonl", ("--overwrite",), "--output: quickstart_prompts.jsonl is --dataset "
         "quickstart_prompts.jsonl"),
        ("quickstart_rewards.py", ("--overwrite",), "--output: quickstart_rewards.py is the module of --reward "
         "quickstart_rewards:lowercase_share"),
        ("rewards/judge.py", ("--overwrite",), "--output: rewards/judge.py is the module of --reward "
         "rewards/judge.py:judge"),
    ],
    ids=["exists", "parent-is-a-file", "folder", "unwritable", "the-dataset", "a-reward-module", "a-reward-file"],
)  # fmt: skip
def test_output_is_refused_before_the_model_loads(cli, tmp_path: Path, output: str, extra: tuple[str, ...],
                                                  message: str) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """Before: an existing file was silently replaced, and a path under a file died with a traceback after every
    completion had been generated. Now each is refused first, and nothing on disk changes."""
    write(tmp_path / "earlier.jsonl", '{"kept": true}\n')
    (tmp_path / "results").mkdir()
    (tmp_path / "rewards").mkdir()
    write(tmp_path / "rewards/judge.py", ASYNC_JUDGE)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    done = cli(*EVAL, *REWARD, "--reward", "rewards/judge.py:judge", "--output", output, *extra)
    assert done.returncode == 2, done.stdout + done.stderr[-2000:]
    assert f"textrl-eval: Invalid TextRL config: {message}" in done.stderr
    assert "Traceback" not in done.stderr and "loading the model" not in done.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_eval_replaces_with_overwrite_runs_async_and_file_rewards_and_shows_progress(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The passing twin: --overwrite replaces an earlier output; an async reward (which used to crash with
    "'coroutine' object is not iterable") and a file-path reference score; stderr says what happens while the
    model loads, and the token bar moves within a batch (at batch 1/1 it passes 0 before the batch ends)."""
    write(tmp_path / "earlier.jsonl", '{"kept": true}\n')
    (tmp_path / "rewards").mkdir()
    write(tmp_path / "rewards/judge.py", ASYNC_JUDGE)
    done = cli(*EVAL, *REWARD, "--reward", "rewards/judge.py:judge", "--max-new-tokens", "6", "--batch-size", "6",
               "--output", "earlier.jsonl", "--overwrite", env={"TQDM_MININTERVAL": "0"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "6 completions (6 prompts x 1)" in done.stdout and "rewards/judge.py:judge" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "earlier.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["rewards"]["rewards/judge.py:judge"] == len(r["completion"]) for r in rows)
    assert not list(tmp_path.glob(".earlier.jsonl.*")), "the temporary file was left behind"
    err = done.stderr
    for line in ("textrl-eval: reading prompts from quickstart_prompts.jsonl",
                 "textrl-eval: loading the model textrl:tiny (onto cpu) ...", "textrl-eval: model loaded in",
                 "textrl-eval: generating 6 completions (6 prompts x 1) in 1 batch(es) of up to 6 prompts, at most 6 "
                 "new tokens each", "textrl-eval: scoring with 2 reward(s)"):  # fmt: skip
        assert line in err, err[-3000:]
    assert err.index("loading the model") < err.index("model loaded in") < err.index("generating:")
    assert "6/36 [" in err and "batch 1/1" in err, err[-3000:]  # one token of six prompts, inside the only batch


def test_overwrite_without_output_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli(*EVAL, *REWARD, "--overwrite")
    assert done.returncode == 2
    assert "--overwrite: is given without --output. Fix: add --output FILE.jsonl." in done.stderr


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        ("broken_rewards:f", "'broken_rewards:f': importing broken_rewards failed: SyntaxError at "),
        ("./broken_rewards.py:f", "importing {tmp}/broken_rewards.py failed: SyntaxError at "),
        ("raising_rewards:f", "importing raising_rewards failed at {tmp}/raising_rewards.py, "
         "line 1 ('raise RuntimeError(\"set JUDGE_URL\")'): RuntimeError: set JUDGE_URL. Fix:"),
        ("nope_rewards:f", "no module 'nope_rewards' in {tmp} or the installed packages. --reward takes "
         "MODULE:FUNCTION, a module importable from the working directory"),
        ("nope/rewards.py:f", "'nope/rewards.py:f': nope/rewards.py in {tmp} (the working directory) does not "
         "exist. --reward takes MODULE:FUNCTION"),
    ],
)  # fmt: skip
def test_reward_references_that_do_not_import(cli, tmp_path: Path, reward: str, message: str) -> None:  # type: ignore[no-untyped-def]
    """A syntax error or an exception at import used to be a raw traceback; a missing module told an eval user to
    put it "beside the config file", which eval does not have."""
    write(tmp_path / "broken_rewards.py", "def f(prompts, completions):\n    return [1.0 for c in completions\n")
    write(tmp_path / "raising_rewards.py", 'raise RuntimeError("set JUDGE_URL")\n')
    done = cli(*EVAL, "--reward", reward)
    assert done.returncode == 2, done.stdout
    real = str(tmp_path.resolve())
    assert message.format(tmp=real) in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "config file" not in done.stderr
