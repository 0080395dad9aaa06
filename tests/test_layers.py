"""The package's layers (issue 26): every import in ``hybridmap/`` goes to its own layer or one
below it, and no two modules import each other, directly or around a loop.

The layers, lowest first, are the data flow of ``docs/design.md``. Every import counts: at the
top of a module, inside a function (a lazy import is still a dependency) and under
``TYPE_CHECKING`` (a type is a dependency too). ``hybridmap/__init__.py`` and ``__main__.py``
are the facade over all of them and are not in a layer; below them only ``__version__`` may be
read from the package root.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hybridmap"

#: Lowest first. A module's layer is its longest matching prefix; one layer may hold several.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("infra",),  # no knowledge of maps: escaping, boundaries, logs, ignore rules, git, the sandbox
    ("model", "settings", "schema"),  # the vocabulary
    ("store",),  # the content-keyed cache and its codec
    ("languages",),  # one rule per concept: registry, visibility, path kinds, words of names
    ("workspace",),  # the repository's files and their current state
    ("sources",),  # tree-sitter, language servers, SCIP
    ("pipeline.inputs",),  # conversation, session, co-change
    ("pipeline.merge", "pipeline.policies", "pipeline.python_imports", "pipeline.import_targets"),
    ("pipeline.graph",),
    ("pipeline.rank",),
    ("pipeline.render",),
    ("pipeline.pack",),
    ("pipeline",),  # build, request, budget: the pipeline run as one
    ("features",),  # tools over the pipeline's data
    ("api",),
    ("frontends",),  # cli, mcp, evaluate
)
FACADE = frozenset({"", "__main__"})


def module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str, modules: frozenset[str]) -> Iterator[str]:
    """The package modules ``path`` (module ``name``) imports, relative names resolved; a name
    imported from a package counts as its submodule when it is one."""
    base = name.split(".") if name else []
    if path.name != "__init__.py":
        base = base[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - (node.level - 1)]
                target = ".".join([*parent, *([node.module] if node.module else [])])
            elif node.module and (node.module == "hybridmap" or node.module.startswith("hybridmap.")):
                target = node.module.removeprefix("hybridmap").removeprefix(".")
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                if sub in modules:
                    yield sub
                elif target or alias.name != "__version__":  # a constant of the root, set before any import
                    yield target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("hybridmap."):
                    yield alias.name.removeprefix("hybridmap.")


def import_graph(package: Path) -> dict[str, set[str]]:
    paths = {module_name(p, package): p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    modules = frozenset(paths)
    return {name: {t for t in imports_of(path, name, modules) if t != name} for name, path in paths.items()}


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> int | None:
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best else None


def layer_problems(graph: Mapping[str, set[str]], layers: Sequence[Sequence[str]]) -> list[str]:
    problems = []
    for module in sorted(graph):
        if module in FACADE:
            continue
        own = layer_of(module, layers)
        if own is None:
            problems.append(f"{module}: in no layer (add it to LAYERS and docs/design.md)")
            continue
        for target in sorted(graph[module]):
            theirs = layer_of(target, layers)
            if theirs is not None and theirs > own:
                problems.append(f"{module} -> {target}: imports upward")
            if target in FACADE and target != module:
                problems.append(f"{module} -> hybridmap.{target}: imports the facade")
    return problems


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_import_goes_down_a_layer_or_stays() -> None:
    assert layer_problems(import_graph(PACKAGE), LAYERS) == []


def test_no_import_cycles() -> None:
    graph = import_graph(PACKAGE)
    assert cycles({m: t - FACADE for m, t in graph.items() if m not in FACADE}) == []


def test_the_check_sees_the_package() -> None:
    """The walk finds every layer's modules and the imports it is meant to check."""
    graph = import_graph(PACKAGE)
    assert "pipeline.build" in graph and "sources.lsp.resolver" in graph
    assert "languages.lexical" in graph["sources.lsp.resolver"]  # a relative import, three dots
    assert "infra.git" in graph["workspace.walk"]  # ``from ..infra import git``: a submodule
    held = {layer_of(m, LAYERS) for m in graph}
    assert held >= set(range(len(LAYERS)))  # every layer holds a module: no stale prefix


def test_an_upward_import_a_cycle_and_a_stray_module_are_caught(tmp_path: Path) -> None:
    package = tmp_path / "hybridmap"
    files = {
        "errors.py": "",
        "infra/__init__.py": "",
        "infra/git.py": "def f():\n    from ..pipeline import build  # lazy, still upward\n",
        "pipeline/__init__.py": "",
        "pipeline/build.py": "from . import request\n",
        "pipeline/request.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .build import X\n",
        "features/__init__.py": "",
        "features/export.py": "from .. import __version__\nfrom .. import RepoMap\n",
        "stray.py": "",
    }
    for rel, text in files.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    graph = import_graph(package)
    assert layer_problems(graph, LAYERS) == [
        "features.export -> hybridmap.: imports the facade",
        "infra.git -> pipeline.build: imports upward",
        "stray: in no layer (add it to LAYERS and docs/design.md)",
    ]
    assert cycles(graph) == [["pipeline.build", "pipeline.request"]]


def unnamed_modules(package: Path, doc: str) -> list[str]:
    """Modules ``doc`` does not name: by path from the package, or by file name (or stem, in a
    list of one directory's modules) where the doc names the directory."""
    missing = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts or path.name == "__init__.py":
            continue
        rel = path.relative_to(package)
        directory = f"{rel.parent}/"
        named_in_directory = directory in doc and re.search(rf"`{re.escape(path.stem)}(\.py)?`", doc)
        if str(rel) not in doc and not named_in_directory:
            missing.append(str(rel))
    return missing


def test_the_design_doc_names_every_module() -> None:
    doc = (PACKAGE.parent / "docs" / "design.md").read_text(encoding="utf-8")
    assert unnamed_modules(PACKAGE, doc) == []
    assert unnamed_modules(PACKAGE, doc.replace("`text_sync.py`", "")) == ["sources/lsp/text_sync.py"]


def test_no_test_module_imports_another() -> None:
    """Shared test code lives in ``tests/helpers.py`` (and fixtures in ``conftest.py``): a test
    module is never a helper library for others."""
    tests = Path(__file__).resolve().parent
    importing = []
    for path in sorted(tests.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            module = node.module or ""
            ours = node.level > 0 or module.startswith("tests.")  # relative, or tests.x.test_y
            if ours and module.split(".")[-1].startswith("test_"):
                importing.append(f"{path.relative_to(tests)} imports {module}")
    assert importing == []
