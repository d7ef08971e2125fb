"""The reference cache on a sweep: 4 DPO runs over beta on SmolLM2-135M-Instruct (`textrl:smollm2`), each run a
fresh process, three ways:

- TextRL with `reference_cache: on` (the first run fills the cache, the other three read it; no reference copy);
- raw TRL with its defaults (the reference model loaded and run on every batch);
- raw TRL with `precompute_ref_log_probs=True` in every run (TRL keeps the result in the datasets cache of the
  tokenized data; for in-memory data, as here, that is a temporary folder per process, so each run computes it).

The runs of a beta are taken one after another, the three ways in rotating order, so that background load on a
shared machine falls on all of them; an untimed run before them reads the libraries and weights into the disk
cache. Whole-process wall time (imports and model load included) is what a sweep costs. Used by
`bench/run.py --sweep`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Row, run_training

BETAS = (0.05, 0.1, 0.2, 0.5)
WAYS = ("textrl-cache", "trl", "trl-precompute")


def _run(model: str, way: str, beta: float, cache: Path, base: list[str]) -> dict[str, Any]:
    mode = "textrl" if way.startswith("textrl") else "trl"
    extra = {"textrl-cache": ["--reference-cache", str(cache)], "trl": [], "trl-precompute": ["--trl-precompute"]}
    start = time.perf_counter()
    result = run_training(model, mode, "dpo", *base, "--beta", str(beta), *extra[way])
    result["process_s"] = time.perf_counter() - start
    hit = any("read from the reference cache" in line for line in result["textrl_lines"])
    print(f"sweep: beta {beta}, {way}: {result['process_s']:.1f} s ({result['total_s']:.1f} s inside the process, "
          f"{result['per_step_s']:.2f} s/step{', cache hit' if hit else ''})", file=sys.stderr)  # fmt: skip
    result["hit"] = hit
    return result


def rows(
    model: str, pairs: int = 32, steps: int = 4, max_length: int = 128, threads: int = 1, chat: bool = False
) -> list[Row]:
    from run import largest_difference

    base = ["--pairs", str(pairs), "--steps", str(steps), "--warmup", "1", "--max-length", str(max_length),
            "--learning-rate", "5e-6", "--threads", str(threads), *(["--chat"] if chat else [])]  # fmt: skip
    runs: dict[str, list[dict[str, Any]]] = {way: [] for way in WAYS}
    # Untimed: the first process may read torch, TRL and the weights from disk cold, and the order below would put
    # that on TextRL's filling run alone. (A filling run took 99 s as a sweep's first process, against 82-88 s for
    # TRL's precompute runs; alternated with them later, 71-75 s against 72-74 s.)
    print("sweep: warming the disk cache (untimed)", file=sys.stderr)
    run_training(model, "textrl", "dpo", "--pairs", "16", "--steps", "3", *base[4:])
    with tempfile.TemporaryDirectory() as cache:
        for i, beta in enumerate(BETAS):
            for way in WAYS[i % 3 :] + WAYS[: i % 3]:
                print(f"sweep: beta {beta}, {way}", file=sys.stderr)
                runs[way].append(_run(model, way, beta, Path(cache), base))

    def total(way: str) -> float:
        return sum(r["process_s"] for r in runs[way])

    warm = runs["textrl-cache"][1:]  # the first run filled the cache
    if runs["textrl-cache"][0]["hit"] or not all(r["hit"] for r in warm):
        raise SystemExit("sweep: the first TextRL run must fill the cache and every later one read it; see above")
    step = statistics.median(r["per_step_s"] for r in warm)
    trl_step = statistics.median(r["per_step_s"] for r in runs["trl"])
    pre_step = statistics.median(r["per_step_s"] for r in runs["trl-precompute"])
    peak = statistics.median(r["peak_mb"] for r in warm)
    trl_peak = statistics.median(r["peak_mb"] for r in runs["trl"])
    pairs_of_runs = zip(runs["textrl-cache"], runs["trl"], strict=True)  # the same beta
    diff = max(largest_difference(a["history"], b["history"]) for a, b in pairs_of_runs)
    same = f"logged metrics equal TRL's at each beta (max rel diff {diff:.1e})"
    what = (f"{len(BETAS)} runs (beta {', '.join(map(str, BETAS))}), {pairs} {'chat ' if chat else ''}pairs, "
            f"{steps} steps, batch 8, "
            f"{threads} torch thread{'s' if threads > 1 else ''}")  # fmt: skip
    cold = runs["textrl-cache"][0]["process_s"]
    ceiling = pre_step / trl_step
    bound = (f"no cache gets under (1 + 3 x {ceiling:.3f}) / 4 = {(1 + 3 * ceiling) / 4:.3f} here: the filling run "
             "costs about one TRL run, and each later one at best the ceiling below")  # fmt: skip
    return [
        Row("reference cache: DPO beta sweep, whole processes, TextRL (cache) vs TRL defaults", total("textrl-cache"),
            total("trl"), "s", f"{what}; the first TextRL run ({cold:.0f} s) fills the cache; {same}; {bound}; "
            "target <= 0.75"),
        Row("reference cache: DPO beta sweep, whole processes, TextRL (cache) vs TRL precompute_ref_log_probs=True",
            total("textrl-cache"), total("trl-precompute"), "s", f"{what}; TRL precomputes in every run; "
            "target <= 0.90"),
        Row("reference cache: warm-cache DPO run, time per optimizer step vs TRL defaults", step * 1000,
            trl_step * 1000, "ms", f"median of the {len(warm)} warm runs vs the {len(runs['trl'])} TRL runs, first "
            "step left out; target <= 0.80"),
        Row("reference cache: warm-cache DPO run, time per optimizer step vs TRL precompute_ref_log_probs=True",
            step * 1000, pre_step * 1000, "ms", "TRL's own step without a reference pass: the least a cached run can "
            "take per step"),
        Row("reference cache: the ceiling, TRL precompute_ref_log_probs=True vs TRL defaults, time per step",
            pre_step * 1000, trl_step * 1000, "ms", "how much of TRL's step the reference forward is here: no "
            "cache saves more per step"),
        Row("reference cache: warm-cache DPO run, peak memory (max RSS) vs TRL defaults", peak, trl_peak, "MB",
            "no reference copy loaded (TRL's default loads one); target < 1.0"),
    ]  # fmt: skip
