"""`textrl-report`: draw a run's training curves (report.svg + report.md), or overlay several runs on one figure."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def report_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="textrl-report",
        description="Report a run from OUTPUT_DIR/log_history.json or its newest checkpoint: first the held-out "
        "evaluation (before -> after), then the metrics it logged (loss, reward and its components, KL, completion "
        "length, preference accuracy and margin, learning rate). With several folders, each run is a line of its own "
        "on the same panels, written into the first folder unless --output says otherwise.",
    )
    parser.add_argument("output_dir", type=Path, metavar="OUTPUT_DIR", help="The run's output_dir.")
    parser.add_argument(
        "others", type=Path, nargs="*", metavar="OTHER_DIR", help="More runs' output_dirs to overlay on the first."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="PATH_PREFIX",
        help="Write PATH_PREFIX.svg and PATH_PREFIX.md (default: OUTPUT_DIR/report.svg and OUTPUT_DIR/report.md).",
    )
    return parser


def report_main(argv: list[str] | None = None) -> int:
    args = report_parser().parse_args(argv)
    from ..report import write_report

    try:
        svg = write_report(args.output_dir, compare=args.others, output=args.output)
    except (FileNotFoundError, ValueError) as exc:
        print(f"textrl-report: {exc}", file=sys.stderr)
        return 2
    print(f"textrl-report: wrote {svg} and {svg.with_suffix('.md')}")
    return 0
