"""The names of the files a TextRL run writes into its output_dir, shared by the code that writes them (trainers,
textrl-merge) and the code that reads them (reports, resume and --overwrite checks). Imports nothing."""

from __future__ import annotations

import re

MANIFEST = "textrl_manifest.json"
"""Written to every training run's output_dir (textrl.checkpoints.manifest)."""
MERGE_RECORD = "textrl_merge.json"
"""Written into every folder textrl-merge produces: what was merged, from where."""
LOG_HISTORY = "log_history.json"
"""The log history of a finished run, written by `TextRLTrainer.train()`."""
REPORT = "report"
"""The training curves' file stem: `report.svg` and `report.md` (textrl.report)."""
REPORT_SVG = f"{REPORT}.svg"
REPORT_MD = f"{REPORT}.md"
TRAINER_STATE = "trainer_state.json"
"""transformers' state file in each checkpoint folder, written last: a checkpoint without it was cut off."""
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
"""A checkpoint folder's name, `checkpoint-N`; group 1 is the global step."""
FINGERPRINT = "textrl_fingerprint.json"
"""Written into each checkpoint folder: what the run that wrote it was (config, data, rewards, processes, versions),
compared on --resume (textrl.checkpoints.fingerprint)."""
LOCK = ".textrl-lock"
"""Held by the run that writes an output_dir (textrl.checkpoints.lock); what a killed run leaves of it is ignored."""
