"""What every console command does at its edges: Ctrl-C and a closed pipe end it with a line, not a traceback.

Ctrl-C before training starts (while torch imports or the model loads) raises KeyboardInterrupt wherever the main
thread happens to be; a command piped into `head` finds stdout closed when it prints. Both are ordinary ways to
stop a command, so each ends it with the conventional status (130, 141) and, for Ctrl-C, one line saying so.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable


def console(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Wrap a command's main function (argv -> exit status) for the console."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None) -> int:
            try:
                return main(argv)
            except KeyboardInterrupt:
                print(
                    f"\n{prog}: interrupted (Ctrl-C); stopping. Checkpoints already in output_dir are complete "
                    "(each is written whole or not at all).",
                    file=sys.stderr,
                    flush=True,
                )
                return 130
            except BrokenPipeError:
                # the reader went away (| head): later writes, and the interpreter's final flush, go nowhere
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
                return 141

        return run

    return wrap
