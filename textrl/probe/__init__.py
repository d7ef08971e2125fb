"""`textrl-train --config C --probe [N]`: a short look at what the run will do before it runs for hours.

Online algorithms: N prompt groups generated and scored with the run's own sampling settings and rewards (groups
without reward variance, completions cut at max_completion_length, None rewards, each reward's range, where each
sampling setting comes from, speed and an estimate of the run's length). Pairwise algorithms: the reference model's
margin between chosen and rejected on N rows, and the rows' lengths against max_length. Other families get the
checks the trainer's build makes. Exit status 3 when the run would learn nothing.
"""

from __future__ import annotations

import sys
import tempfile
from typing import TYPE_CHECKING

from ..validation import view as config_view  # not its names: online and pairwise are this package's modules
from .findings import LEARNS_NOTHING, Finding, ProbeReport

if TYPE_CHECKING:
    from ..run.assemble import Assembled

DEFAULT_GROUPS = 4


def say(what: str) -> None:
    """A line on stderr while the probe works: loading a real model and generating take tens of seconds."""
    print(f"probe: {what} ...", file=sys.stderr, flush=True)


def run_probe(run: Assembled, groups: int = DEFAULT_GROUPS) -> int:
    """Build the run's trainer on its first `groups` training rows (output in a temporary folder, no tracker), probe
    it and print what was found; returns the exit status."""
    from ..run.assemble import require_section
    from ..run.build import build_trainer, load_data

    cfg = run.config
    family = cfg.algorithm().family
    say(f"reading the data of {run.path or 'the config'}")
    train, evaluation = load_data(run, cfg)
    from ..validation.batch_plan import batch_lines
    from ..validation.config import processes

    batch_lines(cfg, len(train), processes())  # the run's batch against the run's rows, as the run checks it
    rows = train.select(range(min(groups, len(train))))
    say(f"loading {require_section(run, 'model').name} and building the run's trainer on {len(rows)} row(s)")
    with tempfile.TemporaryDirectory(prefix="textrl-probe-") as scratch:
        scratch_run = {"output_dir": scratch, "report_to": ["none"]}
        if config_view.preference(cfg) is not None:  # a probe of a few rows neither fills nor needs the reference cache
            scratch_run["reference_cache"] = "off"
        probe_cfg = cfg.model_copy(update=scratch_run)
        trainer = build_trainer(run, probe_cfg, (rows, evaluation))
        if (rollout := config_view.online(probe_cfg)) is not None:
            from .online import probe_online

            report = probe_online(trainer, rollout, run.sources, len(train))
        elif (pairs := config_view.pairwise(probe_cfg)) is not None:
            from .pairwise import probe_pairwise

            report = probe_pairwise(trainer, pairs)
        else:
            report = ProbeReport(f"{len(rows)} row(s) of a {family.value} run")
            report.add(
                "note",
                "nothing is sampled for this family; the trainer was built on the probed rows, with its data and "
                "length checks (any warning above is theirs).",
            )
    return report.print()


__all__ = ["DEFAULT_GROUPS", "LEARNS_NOTHING", "Finding", "ProbeReport", "run_probe"]
