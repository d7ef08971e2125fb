"""The shape of the handwritten code, read with `ast` from the source files (nothing is imported).

The layers of the package: every import arrow between TextRL's modules, including imports made inside functions and
through importlib, goes down to a lower layer or stays in its layer without a loop.

- `spec/` (textrl.spec) imports nothing of the runtime;
- `generated/` (textrl.generated) imports only the spec, itself and `textrl.validation.generated_support`;
- the runtime reaches generated code only at the named dispatch points (DISPATCH);
- no module reaches a higher layer (LAYERS), and the module graph has no cycle.

Imports under `if TYPE_CHECKING:` are left out: they are for the type checker and never run.

And: no module of 400 lines or more (tests, bench and scripts too), no private name imported from another module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"textrl": ROOT / "textrl", "textrl.spec": ROOT / "spec", "textrl.generated": ROOT / "generated"}

LAYERS: list[tuple[str, list[str]]] = [
    ("spec", ["textrl.spec"]),
    (
        "config: a config validated and turned into TRL's, no model",
        [
            "textrl.errors",
            "textrl.validation",
            "textrl.engines",
            "textrl.trl_support",
            "textrl.generated",
            "textrl.configs",
            "textrl.trl_build",
            "textrl.trl_recipe",
        ],
    ),
    (
        "parts: models, data, rewards and what a run keeps",
        [
            "textrl.tiny",
            "textrl.models",
            "textrl.data",
            "textrl.rewards",
            "textrl.checkpoints",
            "textrl.reference_cache",
            "textrl.report",
            "textrl.rollout",
        ],
    ),
    ("trainers", ["textrl.trainers"]),
    ("a run assembled from a config and flags", ["textrl.run", "textrl.probe"]),
    ("entry points", ["textrl.cli", "textrl.codegen", "textrl"]),
]
"""Lowest first. A module may import from its own layer or a lower one."""

DISPATCH = {
    "textrl.validation.config": "textrl.generated.configs",  # the config class for `algo`
    "textrl.trl_support.build": "textrl.generated.trl_builders",  # the TRL builder for `algo`
    "textrl.cli.train": "textrl.generated.cli_flags",  # the flag table of textrl-train
    "textrl.configs": "textrl.generated.configs",  # the public address of the typed config classes
}
"""The runtime modules that reach generated code, and what each may reach."""

GENERATED_MAY_IMPORT = ("textrl.spec", "textrl.generated", "textrl.validation.generated_support")


def read_tree() -> dict[str, tuple[str, bool]]:
    """Every module of the package: dotted name -> (source, is a package's __init__)."""
    modules: dict[str, tuple[str, bool]] = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts or (prefix == "textrl" and path.is_relative_to(ROOT / "textrl" / "spec")):
                continue
            parts = path.relative_to(folder).with_suffix("").parts
            is_init = parts[-1] == "__init__"
            name = ".".join([prefix, *parts[:-1]] if is_init else [prefix, *parts])
            modules[name] = (path.read_text(encoding="utf-8"), is_init)
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes inside `if TYPE_CHECKING:` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return inside


def _resolve(package: str, level: int, module: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _known(name: str, modules: dict[str, tuple[str, bool]]) -> str | None:
    """The longest known module that `name` is or lies in (`textrl.models.load_model` -> `textrl.models`)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def arrows(name: str, modules: dict[str, tuple[str, bool]]) -> Iterator[tuple[str, int, str]]:
    """(target module, line, how) for each import of a TextRL module in module `name`."""
    source, is_init = modules[name]
    package = name if is_init else name.rpartition(".")[0]
    tree = ast.parse(source)
    skipped = _type_checking_nodes(tree)
    uses_importlib = "import_module" in source
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        how = "import"
        if isinstance(node, ast.ImportFrom):
            base = _resolve(package, node.level, node.module) if node.level else (node.module or "")
            for alias in node.names:  # `from textrl import spec` imports the module textrl.spec
                targets.append(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif uses_importlib and isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value  # a module named in a string, in a module that imports by name
            if text.startswith("textrl.") or (text.startswith(".") and text.strip(".")):
                level = len(text) - len(text.lstrip("."))
                targets = [_resolve(package, level, text.lstrip(".")) if level else text]
                how = "importlib"
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            prefix = str(node.values[0].value)  # importlib.import_module(f"textrl.generated.configs.{name}")
            if prefix.startswith("textrl.") and prefix.endswith("."):
                targets = [prefix.rstrip(".")]
                how = "importlib"
        for target in targets:
            known = _known(target, modules) if target.startswith("textrl") else None
            if known is not None and known != name:
                yield known, getattr(node, "lineno", 0), how


def layer_of(name: str) -> int:
    best, found = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # the package's own __init__ is named alone: a loose module at the root belongs to no layer
            inside = name == prefix or (prefix != "textrl" and name.startswith(prefix + "."))
            if inside and len(prefix) > best:
                best, found = len(prefix), index
    return found


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every arrow that breaks a rule of the module docstring, and every cycle, as a line naming both ends."""
    found: list[str] = []
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name in sorted(modules):
        if layer_of(name) < 0:
            found.append(f"{name}: in no layer; add it to LAYERS")
        for target, line, how in arrows(name, modules):
            where = f"{name}:{line} -> {target} ({how})"
            if _within(name, "textrl.spec") and not _within(target, "textrl.spec"):
                found.append(f"{where}: the spec imports no runtime")
                continue
            if _within(name, "textrl.generated"):
                if not any(_within(target, allowed) for allowed in GENERATED_MAY_IMPORT):
                    found.append(f"{where}: generated code imports only {', '.join(GENERATED_MAY_IMPORT)}")
                continue
            if _within(target, "textrl.generated"):
                if not _within(target, DISPATCH.get(name, "-")):
                    found.append(f"{where}: the runtime reaches generated code only at DISPATCH")
                continue  # a dispatch is the one arrow that may close a loop (generated code calls back down)
            if layer_of(target) > layer_of(name):
                found.append(
                    f"{where}: '{LAYERS[layer_of(name)][0]}' may not import from the higher layer "
                    f"'{LAYERS[layer_of(target)][0]}'"
                )
            if not name.startswith(target + "."):  # a module importing its own package is Python's import order
                graph[name].add(target)
    found += [f"import cycle among {', '.join(cycle)}" for cycle in cycles(graph)]
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_keeps_its_layers() -> None:
    found = violations(read_tree())
    assert not found, "\n".join(found)


def test_the_root_holds_only_public_entry_modules() -> None:
    loose = sorted(p.name for p in (ROOT / "textrl").glob("*.py"))
    assert loose == ["__init__.py", "configs.py", "errors.py", "tiny.py", "trl_build.py"], loose


PLANTED = [
    ("textrl.spec.planted", "from textrl.models import load_model\n", "the spec imports no runtime"),
    ("textrl.generated.planted", "def f():\n    from textrl.models import load_model\n",
     "generated code imports only"),
    ("textrl.data.planted", "import importlib\nM = 'textrl.trainers.base'\nimportlib.import_module(M)\n",
     "may not import from the higher layer 'trainers'"),
    ("textrl.report.planted", "import importlib\nimportlib.import_module(f'textrl.generated.configs.{1}')\n",
     "the runtime reaches generated code only at DISPATCH"),
    ("textrl.planted_loose", "", "in no layer"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "source", "said"), PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_violation_fails(name: str, source: str, said: str) -> None:
    modules = read_tree()
    modules[name] = (source, False)
    found = violations(modules)
    assert any(name in line and said in line for line in found), found


def test_a_planted_cycle_fails() -> None:
    """Two modules of one layer that import each other (one of them inside a function) form a loop."""
    modules = read_tree()
    modules["textrl.data.planted_a"] = ("from textrl.data import planted_b\n", False)
    modules["textrl.data.planted_b"] = ("def f():\n    from . import planted_a\n", False)
    found = violations(modules)
    assert "import cycle among textrl.data.planted_a, textrl.data.planted_b" in found, found


MAX_LINES = 400
OTHER_FOLDERS = ("tests", "bench", "scripts", "examples")


def test_no_handwritten_module_reaches_400_lines() -> None:
    files = [p for top in ("textrl", "spec", *OTHER_FOLDERS) for p in sorted((ROOT / top).rglob("*.py"))]
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert {m: n for m, n in sizes.items() if n >= MAX_LINES} == {}


def _names_imported(source: str, package: str) -> Iterator[tuple[str, str]]:
    """(module, name) for each `from module import name` in `source`, at any depth."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = _resolve(package, node.level, node.module) if node.level else (node.module or "")
            yield from ((module, alias.name) for alias in node.names)


def test_no_private_name_is_imported_from_another_module() -> None:
    modules = read_tree()
    sources = [(name if is_init else name.rpartition(".")[0], text) for name, (text, is_init) in modules.items()]
    sources += [
        (folder, p.read_text(encoding="utf-8")) for folder in OTHER_FOLDERS for p in (ROOT / folder).rglob("*.py")
    ]
    private = sorted(
        f"{module}.{name}"
        for package, text in sources
        for module, name in _names_imported(text, package)
        if name.startswith("_") and not name.startswith("__") and module.split(".")[0] in ("textrl", "spec")
    )
    assert private == []


CONFIG_NAMES = {"cfg", "config", "self.config", "probe_cfg", "run.config", "typed"}
"""What the runtime calls a TextRL config."""


def test_the_runtime_reads_options_through_the_typed_view() -> None:
    """No `getattr(cfg, "option", default)` for an option the spec defines: the runtime reads options through
    textrl.validation.view, typed, and a default lives in the spec only."""
    from textrl import spec

    names = set(spec.all_option_names())
    found = []
    for name, (source, _) in read_tree().items():
        if _within(name, "textrl.spec") or _within(name, "textrl.generated"):
            continue
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) == 3 and ast.unparse(node.args[0]) in CONFIG_NAMES
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value in names):  # fmt: skip
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
