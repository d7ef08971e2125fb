"""The shape of the handwritten code: no module of 400 lines or more (tests, bench and scripts too), no import cycle among TextRL's modules
(imports inside functions count), and no private name imported from another module (tests included).

Read with `ast` from the source files; nothing is imported."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HANDWRITTEN = ("textrl", "spec")
MAX_LINES = 400


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's __init__)."""
    found = {}
    for top in HANDWRITTEN:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(path: Path, module: str, is_package: bool) -> Iterator[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import in the file, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            for alias in node.names:
                yield (f"{source}.{alias.name}", None) if f"{source}.{alias.name}" in MODULES else (source, alias.name)


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, (path, is_package) in MODULES.items():
        targets = {target for target, _ in _imports(path, module, is_package) if target in MODULES}
        # a module importing its own package's __init__ is Python's import order, not a cycle of ours
        graph[module] = {t for t in targets if t != module and not module.startswith(t + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_textrl_modules() -> None:
    assert len(MODULES) > 80  # the walk found the tree
    assert _cycles(_graph()) == []


def test_no_handwritten_module_reaches_400_lines() -> None:
    files = [p for p, _ in MODULES.values()]
    files += [p for folder in ("tests", "bench", "scripts", "examples") for p in sorted((ROOT / folder).rglob("*.py"))]
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert {m: n for m, n in sizes.items() if n >= MAX_LINES} == {}


def test_no_private_name_is_imported_from_another_module() -> None:
    files = [(m, p, pkg) for m, (p, pkg) in MODULES.items()]
    for folder in ("tests", "bench", "scripts", "examples"):
        files += [(f"{folder}.{p.stem}", p, False) for p in sorted((ROOT / folder).rglob("*.py"))]
    private = [
        f"{path.relative_to(ROOT)}: {source}.{name}"
        for module, path, is_package in files
        for source, name in _imports(path, module, is_package)
        if name and name.startswith("_") and not name.startswith("__") and source.split(".")[0] in HANDWRITTEN
    ]
    assert private == []
