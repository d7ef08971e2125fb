"""Console entry points: textrl-train, textrl-merge, textrl-eval, textrl-dump, textrl-report, textrl-convert.

Also `python -m textrl.cli <command>`.

`--help` and `textrl-train --dry-run` import no torch; each command imports what it needs when it runs.
"""

from __future__ import annotations

import sys

from .console import console
from .train import train_main as _train_main
from .train import train_parser

COMMANDS = ("train", "merge", "eval", "dump", "report", "convert")


@console("textrl-train")
def train_main(argv: list[str] | None = None) -> int:
    from ..engines import process_owner

    process_owner.console = True  # a second Ctrl-C ends the process at once, whatever it is doing
    return _train_main(argv)


@console("textrl-merge")
def merge_main(argv: list[str] | None = None) -> int:
    from .merge import merge_main as run

    return run(argv)


@console("textrl-dump")
def dump_main(argv: list[str] | None = None) -> int:
    from .merge import dump_main as run

    return run(argv)


@console("textrl-eval")
def eval_main(argv: list[str] | None = None) -> int:
    from .evaluate import eval_main as run

    return run(argv)


@console("textrl-report")
def report_main(argv: list[str] | None = None) -> int:
    from .report import report_main as run

    return run(argv)


@console("textrl-convert")
def convert_main(argv: list[str] | None = None) -> int:
    from .convert import convert_main as run

    return run(argv)


def main(argv: list[str] | None = None) -> int:
    """`python -m textrl.cli train --config cfg.yaml` (the form `accelerate launch -m textrl.cli` uses)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        print(f"usage: python -m textrl.cli {{{','.join(COMMANDS)}}} [options]", file=sys.stderr)
        return 2
    commands = {
        "train": train_main,
        "merge": merge_main,
        "eval": eval_main,
        "dump": dump_main,
        "report": report_main,
        "convert": convert_main,
    }
    return commands[args[0]](args[1:])


__all__ = ["convert_main", "dump_main", "eval_main", "main", "merge_main", "report_main", "train_main", "train_parser"]
