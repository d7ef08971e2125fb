"""Who owns the process TextRL runs in, for what a signal may do to it. Imports nothing.

A console command (textrl-train) owns its process: the second Ctrl-C may end it on the spot, whatever the main
thread is doing (a reward in C code, a thread pool waiting for a 15-second judge). A Python session (a notebook, a
script) owns its interpreter: there the second Ctrl-C raises KeyboardInterrupt and the session goes on.
"""

from __future__ import annotations

console = False
"""True once a console command's main function runs (set by textrl.cli)."""
