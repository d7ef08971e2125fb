"""textrl-train with rewards a careless user writes: an async reward in the dry run, and reward modules that do not
import (a syntax error, an exception at import) in the dry run and the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import GRPO, write

pytestmark = pytest.mark.slow

REWARDS = """import asyncio


async def judge(prompts, completions, **_):
    await asyncio.sleep(0)
    return [float(len(c)) for c in completions]


def plain(prompts, completions, **_):
    return [float(len(c)) for c in completions]
"""


@pytest.mark.parametrize("reward", ["plain", "judge"])
def test_dry_run_calls_sync_and_async_rewards(cli, tmp_path: Path, reward: str) -> None:  # type: ignore[no-untyped-def]
    """An async reward used to stop the dry run with "'coroutine' object is not iterable" (training awaited it)."""
    write(tmp_path / "my_rewards.py", REWARDS)
    write(tmp_path / "grpo.yaml", GRPO.replace("quickstart_rewards:lowercase_share", f"my_rewards:{reward}"))
    done = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"reward called on 4 dataset rows with placeholder completions: {reward} -> [33.0, 33.0, 33.0, 33.0]" in (
        done.stdout
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(prompts, completions):\n    return [1.0 for c in completions\n",
         "importing my_rewards failed: SyntaxError at {tmp}/my_rewards.py, line 2: '[' was never closed: "
         "'return [1.0 for c in completions'. Fix: correct that line (python -m py_compile {tmp}/my_rewards.py "
         "checks the file)."),
        ("import os\nURL = os.environ['TEXTRL_TEST_JUDGE_URL']\n",
         "importing my_rewards failed at {tmp}/my_rewards.py, line 2 (\"URL = os.environ['TEXTRL_TEST_JUDGE_URL']\"): "
         "KeyError: 'TEXTRL_TEST_JUDGE_URL'. Fix: make the module import without errors (python "
         "{tmp}/my_rewards.py shows the whole traceback)."),
        (REWARDS, None),
    ],
    ids=["syntax-error", "raises-at-import", "imports"],
)  # fmt: skip
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "run"])
def test_a_reward_module_that_does_not_import(cli, tmp_path: Path, source: str, message: str | None,
                                              dry_run: bool) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """Both used to be a raw traceback; now the reference, file and line, exception and fix, before any model."""
    write(tmp_path / "my_rewards.py", source)
    write(tmp_path / "grpo.yaml", GRPO.replace("quickstart_rewards:lowercase_share", "my_rewards:plain")
          .replace("max_steps: 4", "max_steps: 1"))  # fmt: skip
    done = cli("textrl-train", "--config", "grpo.yaml", *(["--dry-run"] if dry_run else []))
    if message is None:
        assert done.returncode == 0, done.stderr[-3000:]
        return
    assert done.returncode == 2, done.stdout[-2000:]
    expected = "textrl-train: Invalid TextRL config: reward: 'my_rewards:plain': " + message.format(
        tmp=tmp_path.resolve()
    )
    assert expected in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
