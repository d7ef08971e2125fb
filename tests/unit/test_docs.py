"""Docs that cannot rot: code blocks are real files, links resolve, and the migration guide agrees with TextRL.

The rule for code blocks in README.md and docs/*.md: a ```python, ```yaml, ```json(c) or ```lua block starts
with a comment naming a file under examples/ or docs/ (`# file: examples/python_api.py`; `//` in JSON, `--` in
Lua), and the rest of the block is that file's text: the whole file or a run of consecutive whole lines of it.
The named files are then checked here (YAML configs validate against the JSON Schema and TextRLConfig; Python
files compile) and in tests/integration/test_docs_run.py (Python files run on the tiny model, YAML configs pass
`textrl-train --dry-run`). Python under docs/examples/legacy/ shows APIs that no longer exist (the PFRL-based
TextRL, older TRL): it is compiled, never run.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from pathlib import Path

import jsonschema
import pytest

from textrl import ConfigError, TextRLConfig, spec
from textrl.validation.yaml_io import load_yaml_file

from ..doc_blocks import (
    DOCS,
    LEGACY,
    ROOT,
    SCHEMA,
    SCHEMA_PATH,
    Block,
    block_problem,
    checked_blocks,
    code_blocks,
    documented_files,
    runnable_python,
)
from .main_job_docs import EXAMPLE_README, README, example_table, readme_quote

# --- the rule for code blocks -----------------------------------------------------------------------------------


def test_the_docs_show_code() -> None:
    assert len(checked_blocks()) >= 10
    assert runnable_python() and documented_files(".yaml") and documented_files(".json")


@pytest.mark.parametrize("block", checked_blocks(), ids=lambda b: b.where)
def test_block_is_a_real_file(block: Block) -> None:
    problem = block_problem(block)
    assert problem is None, problem


def test_a_block_that_drifted_from_its_file_is_named_with_the_fix(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        "# Guide\n\n```python\n# file: docs/examples/catching_errors.py\n"
        'from textrl import ConfigError, MigrationError, TextRLConfig\n\nprint("changed")\n```\n\n'
        "```yaml\nalgo: grpo\n```\n",
        encoding="utf-8",
    )
    drifted, unnamed = (block_problem(b) for b in code_blocks(doc))
    assert drifted is not None and unnamed is not None
    assert "guide.md:3: the block differs from docs/examples/catching_errors.py at line 7 of the doc" in drifted
    assert "block 'print(\"changed\")'" in drifted and "Fix: make the block a copy" in drifted
    assert (
        "guide.md:10: this ```yaml block does not start with `# file: <path>`. Fix: put the code in a file" in unnamed
    )


def test_a_block_naming_a_missing_file_is_an_error(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text("```lua\n-- file: docs/editor/nope.lua\nprint(1)\n```\n", encoding="utf-8")
    (block,) = code_blocks(doc)
    assert str(block_problem(block)).endswith(
        ":1: the block names docs/editor/nope.lua, which does not exist. Fix: create it, or correct the path."
    )


@pytest.mark.parametrize("path", documented_files(".py"), ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_python_compiles(path: Path) -> None:
    compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_legacy_code_says_why_it_is_not_run() -> None:
    legacy = [p for p in documented_files(".py") if p.is_relative_to(LEGACY)]
    assert legacy
    for path in legacy:
        docstring = " ".join(path.read_text(encoding="utf-8").split('"""')[1].split())
        assert "only compile" in docstring, f"{path.relative_to(ROOT)}: its docstring should say it is only compiled"


def _yaml_files() -> list[Path]:
    """Configs shown in the docs, and every YAML file under docs/ (shown or not, none may be invalid)."""
    return list(dict.fromkeys([*documented_files(".yaml"), *sorted((ROOT / "docs").rglob("*.yaml"))]))


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_yaml_is_a_valid_config(path: Path) -> None:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema="), f"{path}: start with the modeline"
    assert (path.parent / first.split("=", 1)[1]).resolve() == SCHEMA_PATH
    data = load_yaml_file(path)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    jsonschema.Draft7Validator(SCHEMA).validate(data)  # what yaml-language-server implements (docs/editor.md)
    assert TextRLConfig.from_yaml(path).algo == data["algo"]


# --- links ------------------------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)


def _prose(doc: Path) -> str:
    """The doc without code blocks and inline code, where link syntax is only an example."""
    text = doc.read_text(encoding="utf-8")
    for block in code_blocks(doc):
        text = text.replace("\n".join(block.lines), "")
    return re.sub(r"`[^`\n]*`", "", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def relative_links(doc: Path) -> list[str]:
    text = _prose(doc)
    found = LINK.findall(text) + REFERENCE.findall(text)
    return [t for t in found if not re.match(r"^[a-zA-Z][\w+.-]*:", t)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_relative_links_point_at_existing_files(doc: Path) -> None:
    broken = []
    for target in relative_links(doc):
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists():
            broken.append(f"{target} (no such file: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path})")
        elif anchor and path.suffix == ".md":
            headings = re.findall(r"^#+\s+(.*)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            if anchor not in {_slug(h) for h in headings}:
                broken.append(f"{target} (no heading with anchor #{anchor} in {path.name})")
    assert not broken, f"{doc.relative_to(ROOT)}: broken links: {broken}. Fix: correct the path or the anchor."


def test_link_checker_finds_broken_links(tmp_path: Path) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(
        "# Title\n\nSee [a](missing.md), [b](#title), [c](https://x.org/y), `[d](nope.md)`, [e](#nope).\n\n"
        "```markdown\n[f](also-missing.md)\n```\n\n[g]: ref-missing.md\n",
        encoding="utf-8",
    )
    assert relative_links(doc) == ["missing.md", "#title", "#nope", "ref-missing.md"]


def test_readme_links_every_guide_and_generated_doc() -> None:
    links = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    wanted = [*sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "generated/docs").glob("*.md")), SCHEMA_PATH]
    assert [p.relative_to(ROOT) for p in wanted if p not in links] == []
    assert any(p.parent == ROOT / "generated/docs/options" for p in links)


# --- the migration guide against the spec and TextRL's errors ---------------------------------------------------

MIGRATION = ROOT / "docs/migration.md"


def _table_rows(heading: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first table after a heading of docs/migration.md."""
    text = MIGRATION.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}")
    lines = text[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return table


def _code_spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _versions(text: str) -> list[str]:
    return re.findall(r"\b\d+\.\d+\b", text)


def _fix(error: ConfigError, field: str) -> str:
    """The `Fix:` text of the problem about `field`, without its final full stop."""
    (message,) = [p.message for p in error.problems if p.field == field]
    return message.split("Fix: ", 1)[1].removesuffix(".")


def test_removed_table_lists_exactly_the_spec() -> None:
    assert [row[0] for row in _table_rows("## 2. Removed algorithms")] == [f"`{r.name}`" for r in spec.REMOVED]


@pytest.mark.parametrize("removed", spec.REMOVED, ids=lambda r: r.name)
def test_removed_row_agrees_with_the_error(removed: spec.Removed) -> None:
    (row,) = [row for row in _table_rows("## 2. Removed algorithms") if row[0] == f"`{removed.name}`"]
    with pytest.raises(ConfigError) as info:
        TextRLConfig(algo=removed.name, output_dir="o")
    fix = _fix(info.value, "algo").removeprefix("use ")
    use_instead = row[2]
    for name in set(re.findall(r"\b([a-z_]+)=", fix)) | set(re.findall(r"algo='([a-z_]+)'", fix)):
        assert name in use_instead, f"migration.md, removed `{removed.name}`: the error's fix names {name}: {fix}"
    for version in _versions(removed.what_happened):
        assert version in " ".join(row[:2]), f"migration.md, removed `{removed.name}`: TRL {version} is missing"


def _algo_for(renamed: spec.Renamed) -> str:
    """An algorithm that rejects the old key with its rename message."""
    return next(a.name for a in spec.ALGORITHMS if not renamed.families or a.family in renamed.families)


@pytest.mark.parametrize("renamed", spec.RENAMED, ids=lambda r: r.old)
def test_renamed_row_gives_the_errors_fix(renamed: spec.Renamed) -> None:
    table = _table_rows("## 3. TRL and transformers renames")
    rows = [row for row in table if renamed.old in (s.rstrip("=") for s in _code_spans(row[0]))]
    assert len(rows) == 1, f"docs/migration.md section 3 needs one row for `{renamed.old}`; found {len(rows)}"
    (row,) = rows
    with pytest.raises(ConfigError) as info:
        TextRLConfig(algo=_algo_for(renamed), output_dir="o", **{renamed.old: 1})
    fix = _fix(info.value, renamed.old)
    assert row[2].replace("`", "").startswith(fix), (
        f"docs/migration.md, row `{renamed.old}`: the last column must start with the error's fix, {fix!r}; "
        f"it reads {row[2]!r}. Fix: copy the fix (code in backticks is fine), or change spec/removed.py."
    )
    for version in _versions(renamed.what_happened):
        assert version in row[1], f"docs/migration.md, row `{renamed.old}`: version {version} is missing"


def test_transcript_is_the_actual_output() -> None:
    """The ```text block of `>>>` lines: each statement raises exactly the exception printed under it."""
    (block,) = [b for b in code_blocks(MIGRATION) if b.lang == "text" and b.lines and b.lines[0].startswith(">>>")]
    pairs = [(line[4:], block.lines[i + 1]) for i, line in enumerate(block.lines) if line.startswith(">>> ")]
    assert len(pairs) >= 3
    for statement, printed in pairs:
        with pytest.raises(Exception) as info:
            exec(statement, {"TextRLConfig": TextRLConfig})
        actual = traceback.format_exception_only(info.type, info.value)[-1].rstrip("\n")
        assert actual == printed, f"docs/migration.md:{block.line}: `{statement}` now prints:\n{actual}"


# --- editor set-up (docs/editor.md) -----------------------------------------------------------------------------

EDITOR = ROOT / "docs/editor"


def _pattern_matches(pattern: str, relative: str) -> bool:
    """yaml-language-server's file pattern test: `*` is any text, and the pattern must match the path's end."""
    regex = re.sub(r"[-\\{}+?|^$.,\[\]()#\s]", lambda m: "\\" + m.group(0), pattern).replace("*", ".*")
    return re.search(regex + "$", "/" + relative) is not None


def _repo_yaml() -> list[str]:
    """Every YAML file of the checkout (outside virtualenvs, build output and VCS folders), relative to it."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [s for s in subfolders if s not in {".venv", "build", ".git", "node_modules"}]
        found += [str((Path(folder) / f).relative_to(ROOT)) for f in files if f.endswith(".yaml")]
    return sorted(found)


def test_vscode_settings_map_real_files_to_the_schema() -> None:
    settings = json.loads((EDITOR / "vscode-settings.json").read_text(encoding="utf-8"))
    ((schema, patterns),) = settings["yaml.schemas"].items()
    assert (ROOT / schema).resolve() == SCHEMA_PATH
    for pattern in patterns:
        matched = [p for p in _repo_yaml() if _pattern_matches(pattern, p)]
        assert matched, f"{pattern!r} matches no YAML file in the repository"
        for path in matched:  # every file the editor checks against the schema is a valid config
            jsonschema.Draft7Validator(SCHEMA).validate(load_yaml_file(ROOT / path))


def test_neovim_settings_match_the_vscode_settings() -> None:
    lua = (EDITOR / "yamlls.lua").read_text(encoding="utf-8")
    vscode = json.loads((EDITOR / "vscode-settings.json").read_text(encoding="utf-8"))["yaml.schemas"]
    mappings = re.findall(r'\["([^"]+)"\]\s*=\s*\{([^}]*)\}', lua)
    assert {path: re.findall(r'"([^"]+)"', globs) for path, globs in mappings} == vscode
    assert 'vim.lsp.config("yamlls"' in lua and 'vim.lsp.enable("yamlls")' in lua


def test_schema_refs_stand_alone_so_draft_7_editors_read_it_fully() -> None:
    """Draft 7 ignores keywords beside `$ref`; docs/editor.md promises there are none."""

    def refs(node: object) -> list[dict[str, object]]:
        if isinstance(node, dict):
            return ([node] if "$ref" in node else []) + [r for v in node.values() for r in refs(v)]
        return [r for v in node for r in refs(v)] if isinstance(node, list) else []

    found = refs(SCHEMA)
    assert found and all(len(r) == 1 for r in found)


def test_editor_guide_names_the_ways_to_get_the_schema() -> None:
    text = (ROOT / "docs/editor.md").read_text(encoding="utf-8")
    for needle in ("textrl-train --print-schema > textrl.schema.json", "generated/schema/textrl.schema.json",
                   "# yaml-language-server: $schema=", "JSON Schema Mappings", "yaml.schemas"):  # fmt: skip
        assert needle in text, needle


# --- the main job's measured numbers (README.md and examples/smollm2/README.md) --------------------------------------


def test_the_main_jobs_held_out_numbers_agree_between_the_docs() -> None:
    """README.md quotes the main job's held-out `correct` (4 decimals); examples/smollm2/README.md's table has the
    same run (3 decimals). tests/real/test_smollm2.py checks both against a run of the job; this check is the cheap
    half, run everywhere: one doc edited without the other fails here."""
    quoted = readme_quote()
    written = example_table()["correct"]
    for when, four, three in zip(("before", "after"), quoted, written, strict=True):
        assert abs(float(four) - float(three)) <= 0.00051, (
            f"{README.name} quotes correct {when} training as {four}, {EXAMPLE_README.relative_to(ROOT)} as {three}. "
            "Fix: copy the numbers of one measured run into both (tests/real/test_smollm2.py measures them)."
        )
        # 32 held-out questions x 2 sampled replies: a share of correct replies is k/64
        assert any(f"{k / 64:.4f}" == four for k in range(65)), f"correct {when} = {four} is no share of 64 replies"
