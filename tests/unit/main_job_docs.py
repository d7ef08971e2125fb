"""The held-out numbers the docs state for README's main job (GRPO on SmolLM2, examples/smollm2/grpo.yaml), read
from the doc text itself, so that the tests compare what a reader sees:

- README.md quotes textrl-train's closing line: "held-out evaluation ... correct 0.1250 -> 0.6719" (4 decimals, as
  textrl-train prints them);
- examples/smollm2/README.md has the table of every held-out score, before and after (3 decimals).

tests/unit/test_docs.py checks that the two docs agree; tests/real/test_smollm2.py runs the main job and checks both
against its log. Not a test module itself (no tests are collected from it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXAMPLE_README = ROOT / "examples" / "smollm2" / "README.md"
MAIN_JOB = ROOT / "examples" / "smollm2" / "grpo.yaml"
TABLE_HEADING = "## GRPO (README's main job)"

QUOTE = re.compile(r'"held-out evaluation \.\.\. correct (\d+\.\d{4}) -> (\d+\.\d{4})"')
METRICS = {
    "reward": "eval_reward",
    "correct": "eval_rewards/correct/mean",
    "only_number": "eval_rewards/only_number/mean",
    "brevity": "eval_rewards/brevity/mean",
}
"""A table row's first word -> the key textrl-train logs for it (log_history.json)."""


def readme_quote() -> tuple[str, str]:
    """README.md's quoted held-out `correct`, before and after, as written."""
    found = QUOTE.findall(README.read_text(encoding="utf-8"))
    assert len(found) == 1, (
        'README.md should quote the main job\'s closing line once, as "held-out evaluation ... correct B -> A" '
        f"(4 decimals); found {found}"
    )
    return found[0]


def example_table() -> dict[str, tuple[str, str]]:
    """examples/smollm2/README.md's held-out table under TABLE_HEADING: row name -> (before, after), as written."""
    text = EXAMPLE_README.read_text(encoding="utf-8")
    assert TABLE_HEADING in text, f"{EXAMPLE_README.relative_to(ROOT)} lost its heading {TABLE_HEADING!r}"
    lines = text[text.index(TABLE_HEADING) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    assert header[1:] == ["before", "after"], f"the held-out table's columns should be before, after: {header}"
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        name, before, after = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows[name.split()[0]] = (before, after)
    assert set(rows) == set(METRICS), f"the held-out table should have the rows {sorted(METRICS)}: {sorted(rows)}"
    return rows


def measured(history: Sequence[dict[str, Any]], decimals: int) -> dict[str, tuple[str, str]]:
    """A run's held-out scores, first evaluation and last, written with `decimals` decimals."""
    evals = [entry for entry in history if "eval_reward" in entry]
    assert len(evals) >= 2 and evals[0]["step"] == 0, "the main job scores the held-out set before and after training"
    first, last = evals[0], evals[-1]
    return {name: (f"{first[key]:.{decimals}f}", f"{last[key]:.{decimals}f}") for name, key in METRICS.items()}
