"""Code blocks of README.md and docs/*.md and the files they name: the parser behind tests/unit/test_docs.py
(which checks that blocks equal their files) and tests/integration/test_docs_run.py (which runs those files)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SCHEMA_PATH = ROOT / "generated/schema/textrl.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
LEGACY = ROOT / "docs/examples/legacy"
COMMENT = {"python": "#", "yaml": "#", "json": "//", "jsonc": "//", "lua": "--"}
"""The block languages the rule covers, and how each writes the `file:` comment."""
FILE_HOMES = ("examples", "docs")
FENCE = re.compile(r"^(\s*)```([\w+-]*)\s*$")


@dataclass(frozen=True)
class Block:
    """A fenced code block of a Markdown file."""

    doc: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{_shown(self.doc)}:{self.line}"

    def named_file(self) -> Path | None:
        """The file the block's first line names, or None when it names none."""
        prefix = f"{COMMENT.get(self.lang, '#')} file: "
        if self.lines and self.lines[0].startswith(prefix):
            return ROOT / self.lines[0][len(prefix) :].strip()
        return None


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def code_blocks(doc: Path) -> list[Block]:
    """Every fenced block of a Markdown file (an indented fence's indent is removed from its lines)."""
    blocks: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, lang = opening.group(1), opening.group(2).lower()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        assert end is not None, f"{_shown(doc)}:{i + 1}: a code block is never closed. Fix: add ```."
        body = tuple(line.removeprefix(indent) for line in lines[i + 1 : end])
        blocks.append(Block(doc, i + 1, lang, body))
        i = end + 1
    return blocks


def checked_blocks() -> list[Block]:
    """The blocks the rule covers, across README.md and docs/*.md."""
    return [b for doc in DOCS for b in code_blocks(doc) if b.lang in COMMENT]


def documented_files(suffix: str) -> list[Path]:
    """The files (with this suffix) that doc blocks show, each once, in order."""
    files = (b.named_file() for b in checked_blocks())
    return list(dict.fromkeys(f for f in files if f is not None and f.suffix == suffix))


def runnable_python() -> list[Path]:
    """Python files shown in the docs that the integration tests run: all but docs/examples/legacy/."""
    return [p for p in documented_files(".py") if not p.is_relative_to(LEGACY)]


def block_problem(block: Block) -> str | None:
    """Why a block breaks the rule (naming the doc, the line and the fix), or None."""
    comment = COMMENT[block.lang]
    named = block.named_file()
    if named is None:
        return (
            f"{block.where}: this ```{block.lang} block does not start with `{comment} file: <path>`. Fix: put the "
            f"code in a file under examples/ or docs/examples/ and make the block `{comment} file: <that path>` "
            "followed by the file's lines (the whole file or consecutive lines of it)."
        )
    shown = _shown(named)
    if not named.is_file():
        return f"{block.where}: the block names {shown}, which does not exist. Fix: create it, or correct the path."
    if named.relative_to(ROOT).parts[0] not in FILE_HOMES:
        return f"{block.where}: the block names {shown}, outside examples/ and docs/. Fix: move the file there."
    body = list(block.lines[1:])
    if not body:
        return f"{block.where}: the block shows nothing of {shown}. Fix: add the file's lines or remove the block."
    text = named.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(text) if line == body[0]]
    if any(text[i : i + len(body)] == body for i in starts):
        return None
    fix = f"Fix: make the block a copy of {shown}'s lines (whole, or consecutive lines), or edit both together."
    if not starts:
        return f"{block.where}: the block's first code line {body[0]!r} is not a line of {shown}. {fix}"
    best = max(starts, key=lambda i: _matching(text[i:], body))
    n = _matching(text[best:], body)
    seen = text[best + n] if best + n < len(text) else "<end of file>"
    return (
        f"{block.where}: the block differs from {shown} at line {block.line + 2 + n} of the doc "
        f"(line {best + n + 1} of the file): block {body[n]!r}, file {seen!r}. {fix}"
    )


def _matching(text: list[str], body: list[str]) -> int:
    """How many leading lines of `body` equal the lines of `text`."""
    n = 0
    while n < len(body) and n < len(text) and text[n] == body[n]:
        n += 1
    return n
