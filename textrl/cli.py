"""Console entry points. `textrl-train --help` lists the flags generated from the spec.

Training, merging and evaluation from the command line are not implemented yet: each command says
so and exits with status 2 instead of pretending to work. Use the Python API meanwhile.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def train_parser() -> argparse.ArgumentParser:
    """The `textrl-train` parser: --config plus one flag per spec option (generated/cli_flags.py)."""
    from .generated.cli_flags import FLAGS

    parser = argparse.ArgumentParser(
        prog="textrl-train",
        description="Train a text generator with TRL from a TextRL YAML config. Flags override the YAML file.",
        argument_default=argparse.SUPPRESS,
    )
    parser.add_argument("--config", metavar="FILE", help="The YAML config (algo, options, model, dataset, reward).")
    parser.add_argument("--version", action="version", version=f"textrl {__version__}")
    options = parser.add_argument_group("options (from the spec; each applies to the algorithms listed in docs)")
    for flag in FLAGS:
        if flag.is_bool:
            options.add_argument(flag.flag, dest=flag.dest, action=argparse.BooleanOptionalAction, help=flag.help)
        else:
            options.add_argument(flag.flag, dest=flag.dest, metavar=flag.metavar, help=flag.help)
    return parser


def _not_yet(command: str) -> int:
    print(
        f"{command}: not implemented yet in TextRL {__version__}. Use the Python API (textrl.TextRLConfig and "
        "the TRL builders) for now.",
        file=sys.stderr,
    )
    return 2


def train_main(argv: list[str] | None = None) -> int:
    train_parser().parse_args(argv)
    return _not_yet("textrl-train")


def merge_main(argv: list[str] | None = None) -> int:
    return _not_yet("textrl-merge")


def eval_main(argv: list[str] | None = None) -> int:
    return _not_yet("textrl-eval")


def dump_main(argv: list[str] | None = None) -> int:
    return _not_yet("textrl-dump (deprecated alias of textrl-merge)")
