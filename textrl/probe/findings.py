"""What a probe found: lines of measurements, then findings, each threatening one with its fix."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

LEARNS_NOTHING = 3
"""Exit status of `textrl-train --probe` when the run would learn nothing (2 is a config error, 0 a usable run)."""


@dataclass(frozen=True)
class Finding:
    level: str
    """"fatal" (the run would learn nothing), "warn" (it threatens the run) or "note"."""
    text: str
    fix: str = ""

    def line(self) -> str:
        tag = {"fatal": "FATAL", "warn": "WARNING", "note": "note"}[self.level]
        return f"  {tag}: {self.text}" + (f" Fix: {self.fix}" if self.fix else "")


@dataclass
class ProbeReport:
    title: str
    lines: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def add(self, level: str, text: str, fix: str = "") -> None:
        self.findings.append(Finding(level, text, fix))

    @property
    def exit_code(self) -> int:
        return LEARNS_NOTHING if any(f.level == "fatal" for f in self.findings) else 0

    def print(self) -> int:
        out = [f"textrl-train --probe: {self.title}", *(f"  {line}" for line in self.lines)]
        serious = [f for f in self.findings if f.level != "note"]
        notes = [f for f in self.findings if f.level == "note"]
        if serious:
            out += [f"findings ({len(serious)}):", *(f.line() for f in serious)]
        else:
            out.append("findings: none that threaten the run")
        out += [f.line() for f in notes]
        if self.exit_code:
            out.append(f"verdict: this run would learn nothing as configured (exit status {LEARNS_NOTHING})")
        else:
            out.append("verdict: the run can learn" + (" (read the warnings first)" if serious else ""))
        print("\n".join(out), file=sys.stdout, flush=True)
        return self.exit_code


def share(count: int, total: int) -> str:
    return f"{count}/{total} ({100 * count / total:.0f}%)" if total else "0/0"
