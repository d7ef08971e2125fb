"""Greedy replies to the 32 held-out questions, before training (the base model) and after (a run's output).

    .venv/bin/python examples/smollm2/before_after.py out/smollm2-dpo      # or out/smollm2-grpo

Runs textrl-eval twice with the same prompts, greedy decoding and 12 new tokens, and prints each reward's mean
before -> after: `correct` (the reply's last number is the sum) and `only_number` (the reply is just a number).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from textrl.cli.evaluate import eval_main

HERE = Path(__file__).resolve().parent
REWARDS = ("correct", "only_number")


def scores(model: str, out: Path) -> dict[str, float]:
    flags = ["--model", model, "--dataset", str(HERE / "heldout.jsonl"), "--temperature", "0"]
    flags += ["--max-new-tokens", "12", "--batch-size", "32", "--output", str(out)]
    for name in REWARDS:
        flags += ["--reward", f"arithmetic_rewards:{name}"]
    if eval_main(flags) != 0:
        raise SystemExit(f"textrl-eval failed for {model}")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return {name: statistics.fmean(r["rewards"][f"arithmetic_rewards:{name}"] for r in rows) for name in REWARDS}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.path.insert(0, str(HERE))  # arithmetic_rewards, wherever this is run from
    with tempfile.TemporaryDirectory() as tmp:
        before = scores("textrl:smollm2", Path(tmp) / "before.jsonl")
        after = scores(sys.argv[1], Path(tmp) / "after.jsonl")
    print(f"held-out, greedy, 32 questions: textrl:smollm2 -> {sys.argv[1]}")
    for name in REWARDS:
        print(f"  {name:<12} {before[name]:.3f} -> {after[name]:.3f}")


if __name__ == "__main__":
    main()
