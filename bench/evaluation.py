"""Evaluation throughput: `textrl-eval` on the tiny model, batched against one prompt at a time.

Runs the real console script; textrl-eval prints how long generation took (model loading left out), which is
what is compared. Used by bench/run.py.
"""

from __future__ import annotations

import os
import re
import subprocess

from common import BIN, ROOT, Row

THROUGHPUT = re.compile(r"(\d+) completions .* generated in ([\d.]+) s")


def completions_per_second(home: str, *args: str) -> float:
    done = subprocess.run(
        [str(BIN / "textrl-eval"), "--model", "textrl:tiny", "--dataset", "quickstart_prompts.jsonl",
         "--reward", "quickstart_rewards:lowercase_share", "--max-new-tokens", "32", *args],
        cwd=ROOT / "examples", capture_output=True, text=True, check=True,
        env={**os.environ, "TEXTRL_HOME": home, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    match = THROUGHPUT.search(done.stdout)
    assert match, done.stdout + done.stderr
    return int(match.group(1)) / float(match.group(2))


def rows(home: str, prompts: int = 64) -> list[Row]:
    limit = ["--limit", str(prompts)]
    batched = completions_per_second(home, *limit, "--batch-size", "16")
    single = completions_per_second(home, *limit, "--batch-size", "1")
    batched_g = completions_per_second(home, *limit, "--batch-size", "16", "--num-generations", "4")
    single_g = completions_per_second(home, *limit, "--batch-size", "1", "--num-generations", "4")
    note = f"{prompts} prompts, 32 new tokens, sampling; throughput, higher is better"
    return [
        Row("eval: completions/s, batch 16 vs one prompt at a time", batched, single, "completions/s", note),
        Row("eval: completions/s with --num-generations 4, batch 16 vs batch 1", batched_g, single_g, "completions/s",
            note),
    ]  # fmt: skip
