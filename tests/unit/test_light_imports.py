"""Validating a config imports neither torch, transformers nor trl; checked in fresh interpreters."""

from __future__ import annotations

import subprocess
import sys

import pytest

from textrl import spec

HEAVY = ("torch", "transformers", "trl", "datasets", "peft", "accelerate")

PROGRAM = """
import sys
import textrl
from textrl import TextRLConfig, ConfigError
names = {names!r}
for name in names:
    TextRLConfig(algo=name, output_dir="o")
try:
    TextRLConfig(algo="grpo", output_dir="o", num_generations=3)
except ConfigError:
    pass
import textrl.configs, textrl.cli
textrl.cli.train_parser().format_help()
print(sorted(m for m in {heavy!r} if m in sys.modules))
"""


def test_config_validation_never_imports_torch_or_trl() -> None:
    code = PROGRAM.format(names=list(spec.BY_NAME), heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(
    ("main", "shown"),
    [
        ("train_main", "--learning-rate FLOAT"),
        ("report_main", "usage: textrl-report [-h] [--output PATH_PREFIX] OUTPUT_DIR [OTHER_DIR ...]"),
    ],
)
def test_help_does_not_import_torch(main: str, shown: str) -> None:
    """--help needs only argparse and the generated flag table (0.07 s here): no torch, not even pydantic; and
    importing textrl.report loads no plotting library (the report is SVG text, see textrl.report.svg_chart)."""
    code = (
        "import sys\nimport textrl.cli as cli, textrl.report\n"
        f"try:\n    cli.{main}(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'trl', 'transformers', 'pydantic', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().endswith("[]"), done.stdout
    assert shown in done.stdout


def test_each_trainer_imports_only_its_own_module() -> None:
    """A DPO script imports PreferenceTrainer alone: the online trainer's reward machinery stays unloaded (a cost
    of every run's start-up, bench/results.md's whole-process rows)."""
    code = (
        "import sys\nfrom textrl import PreferenceTrainer\n"
        "print(sorted(m for m in ('textrl.trainers.online', 'textrl.rewards.adapters', "
        "'textrl.trainers.reward_model', 'textrl.trainers.preference') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['textrl.trainers.preference']", done.stdout + done.stderr
