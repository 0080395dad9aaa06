"""Names imported from a specific repository file (pipeline/import_targets.py): modules resolved as
each language would, re-exports followed, the pairs kept up to date between merges equal to the
pairs read afresh, and the graph's edges going to the imported file alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.import_targets import MAX_REEXPORT_HOPS, ImportTargets, ModuleFiles
from hybridmap.pipeline.policies import read_facts
from hybridmap.sources.treesitter import ParseOptions, parse_file

from ..helpers import never_rebuilt


@dataclass(frozen=True)
class Facts:
    imports: Mapping[str, str] = field(default_factory=dict)
    names: tuple[str, ...] = ()
    stars: tuple[str, ...] = ()


def test_python_modules_resolve_relative_and_absolute() -> None:
    modules = ModuleFiles(
        [
            "src/pkg/__init__.py",
            "src/pkg/core.py",
            "src/pkg/core.pyi",
            "src/pkg/sub/__init__.py",
            "src/pkg/sub/mod.py",
            "tests/pkg/core.py",
            "setup.py",
        ]
    )
    files = modules.files
    assert files("src/pkg/sub/mod.py", ".") == ("src/pkg/sub/__init__.py",)
    assert files("src/pkg/sub/mod.py", "..") == ("src/pkg/__init__.py",)
    assert files("src/pkg/sub/mod.py", "..core") == ("src/pkg/core.py", "src/pkg/core.pyi")
    assert files("src/pkg/sub/__init__.py", ".mod") == ("src/pkg/sub/mod.py",)
    assert files("src/pkg/core.py", "....x") == ()  # above the root
    assert files("setup.py", "..x") == ()
    # Absolute: every module path ending with it (the test tree's copy too: both may define it).
    assert files("setup.py", "pkg.core") == ("src/pkg/core.py", "src/pkg/core.pyi", "tests/pkg/core.py")
    assert files("setup.py", "src.pkg.core") == ("src/pkg/core.py", "src/pkg/core.pyi")
    assert files("setup.py", "pkg.sub") == ("src/pkg/sub/__init__.py",)
    assert files("setup.py", "typing") == ()
    assert files("setup.py", "kg.core") == ()  # whole names at the dots


def test_script_specifiers_resolve_as_typescript_tries_them() -> None:
    modules = ModuleFiles(
        [
            "src/a.ts",
            "src/a.test.ts",
            "src/b/index.ts",
            "src/c.tsx",
            "src/d.js",
            "src/e.d.ts",
            "src/util/f.mts",
            "lib/g.ts",
        ]
    )
    files = modules.files
    assert files("src/x.ts", "./a") == ("src/a.ts",)
    assert files("src/x.ts", "./a.js") == ("src/a.ts",)  # ESM style: the emitted name
    assert files("src/x.ts", "./b") == ("src/b/index.ts",)
    assert files("src/x.ts", "./c") == ("src/c.tsx",)
    assert files("src/x.ts", "./d") == ("src/d.js",)
    assert files("src/x.ts", "./e") == ("src/e.d.ts",)
    assert files("src/util/y.ts", "./f.mjs") == ("src/util/f.mts",)
    assert files("src/util/y.ts", "../../lib/g") == ("lib/g.ts",)
    assert files("src/util/y.ts", "../../../g") == ()  # above the root
    assert files("src/x.ts", "react") == ()  # a package: not resolved here
    assert files("src/x.ts", "@/a") == ()  # an alias: not resolved here
    assert files("src/x.ts", "./missing") == ()
    assert files("src/x.py", "./a") == ()  # the importer's language decides


def test_java_imports_name_their_class_file() -> None:
    modules = ModuleFiles(["src/main/java/org/x/nodes/Element.java", "src/test/java/org/x/Element.java"])
    assert modules.files("A.java", "org.x.nodes.Element") == ("src/main/java/org/x/nodes/Element.java",)
    assert modules.files("A.java", "org.x.Element") == ("src/test/java/org/x/Element.java",)
    assert modules.files("A.java", "x.nodes.Element") == ("src/main/java/org/x/nodes/Element.java",)
    assert modules.files("A.java", "java.util.List") == ()


def test_reexports_are_followed_and_cycles_end() -> None:
    files = {
        "app.py": Facts({"Console": "pkg", "Style": "pkg", "Gone": "pkg", "Local": "pkg.core"}),
        "pkg/__init__.py": Facts({"Console": ".core", "Gone": ".core"}, stars=(".style",)),
        "pkg/core.py": Facts(names=("Console", "Local"), imports={"Gone": ".other"}),
        "pkg/other.py": Facts(imports={"Gone": ".core"}),  # a cycle: core <-> other
        "pkg/style.py": Facts(names=("Style",)),
        "elsewhere.py": Facts(names=("Console", "Style", "Local")),
        "web/index.ts": Facts(stars=("./parts",)),
        "web/parts/index.ts": Facts({"Button": "./button"}),
        "web/parts/button.ts": Facts(names=("Button",)),
        "web/page.ts": Facts({"Button": "."}),
        "web/other.ts": Facts(names=("Button",)),
    }
    pairs = ImportTargets().pairs(files)
    assert pairs == {
        ("app.py", "Console"): {"pkg/core.py": "name-match"},
        ("app.py", "Style"): {"pkg/style.py": "name-match"},
        ("app.py", "Local"): {"pkg/core.py": "name-match"},
        ("web/page.ts", "Button"): {"web/parts/button.ts": "name-match"},
        ("pkg/__init__.py", "Console"): {"pkg/core.py": "name-match"},  # the re-exporters' own
        ("web/parts/index.ts", "Button"): {"web/parts/button.ts": "name-match"},
    }
    assert MAX_REEXPORT_HOPS >= 2  # the barrel of barrels above


_PATHS = ("pkg/__init__.py", "pkg/core.py", "pkg/sub/mod.py", "app.py", "src/index.ts", "src/a.ts", "src/b/index.ts")
_NAME = st.sampled_from(["X", "Y", "Z"])
_MODULE = st.sampled_from([".core", ".", "..", "pkg", "pkg.core", "pkg.sub.mod", "./a", "./b", "../a", "."])
_FACTS = st.builds(
    Facts,
    st.dictionaries(_NAME, _MODULE, max_size=3),
    st.frozensets(_NAME, max_size=2).map(tuple),
    st.lists(_MODULE, max_size=2).map(tuple),
)
_FILES = st.dictionaries(st.sampled_from(_PATHS), _FACTS, min_size=1, max_size=7)


@settings(max_examples=300, deadline=None)
@given(
    _FILES,
    st.lists(st.lists(st.tuples(st.sampled_from(_PATHS), st.one_of(st.none(), _FACTS)), max_size=3), max_size=6),
    st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_pairs_kept_up_to_date_are_the_pairs_read_afresh(
    files: dict[str, Facts], batches: list[list[tuple[str, Facts | None]]], told: list[bool]
) -> None:
    """Edits, additions and removals (None), with and without the changed paths told: the kept
    answer is the answer of a new object over the same files (a file's links read other files,
    whose edits must reach it)."""
    targets = ImportTargets()
    assert targets.pairs(files) == ImportTargets().pairs(files)
    for batch, tell in zip(batches, told, strict=False):
        before, files = files, dict(files)
        for path, facts in dict(batch).items():
            if facts is None:
                files.pop(path, None)
            else:
                files[path] = facts
        changed = [path for path, _ in batch]
        got = targets.pairs(files, changed, before) if tell else targets.pairs(files)
        assert dict(got) == dict(ImportTargets().pairs(files))


def test_imports_are_read_from_each_language() -> None:
    registry = LanguageRegistry.load()
    cases = {
        ("python", "pkg/a.py"): (
            "from .console import Console as C, X\nfrom ..core import *\nfrom rich.text import Text\n",
            {"C": ".console", "X": ".console", "Text": "rich.text"},
            ("..core",),
        ),
        ("typescript", "src/a.ts"): (
            "import D, { a, b as c } from './x'\nimport * as ns from './n'\n"
            "export { e } from './z'\nexport * from './w'\nexport * as q from './q'\n",
            {"a": "./x", "c": "./x", "D": "./x", "e": "./z"},
            ("./w",),
        ),
        ("tsx", "src/a.tsx"): ("import { a } from '../x'\n", {"a": "../x"}, ()),
        ("javascript", "src/a.js"): ("import { a } from './x.js'\nexport * from './y'\n", {"a": "./x.js"}, ("./y",)),
        ("java", "A.java"): (
            "package p;\nimport a.b.C;\nimport a.b.*;\nclass A {}\n",
            {"C": "a.b.C"},
            (),
        ),
    }
    kept, dropped = ParseOptions(import_files=True), ParseOptions()
    assert kept.key != dropped.key  # a cache entry parsed without them is not taken for one with them
    for (language, path), (source, imports, stars) in cases.items():
        compiled = registry.compiled(language)
        tags = parse_file(compiled, source.encode(), kept).tags
        assert tags is not None
        facts = read_facts(path, tags)
        assert dict(facts.imports) == imports, language
        assert facts.stars == stars, language
        # Without the rule only what name_match_imports reads: Python's absolute modules.
        tags = parse_file(compiled, source.encode(), dropped).tags
        assert tags is not None
        python_only = {n: m for n, m in imports.items() if language == "python" and not m.startswith(".")}
        assert dict(read_facts(path, tags).imports) == python_only, language
        assert read_facts(path, tags).stars == (), language


def _edges(root: Path, tmp_path: Path, on: bool) -> set[tuple[str, str, str]]:
    overrides = {"cache_dir": str(tmp_path / f"c{on}"), "name_match_import_files": on}
    with RepoMap(root, overrides=overrides) as repo:
        repo.map(mode="static", tokens=512)
        graph = repo.graph()
        assert graph is not None
        return {(u, v, k) for u, v, k in graph.to_networkx().edges(keys=True)}


def test_a_use_of_an_imported_name_links_to_the_imported_file_alone(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two files define ``Console`` and ``Button``; the importer names one. Off (the control),
    name matching links both; on, the named one only, through a package's re-export and a
    barrel ``index.ts`` too; a name imported from a package keeps its name-matched edges."""
    root = git_repo(
        {
            "pkg/__init__.py": "from .console import Console\n",
            "pkg/console.py": "class Console:\n    def print(self):\n        pass\n",
            "pkg/legacy.py": "class Console:\n    pass\n",
            "pkg/app.py": "from .console import Console\n\ndef run():\n    return Console()\n",
            "tool.py": "from pkg import Console\n\ndef main():\n    Console().print()\n",
            "web/button.ts": "export class Button {}\n",
            "web/old/button.ts": "export class Button {}\n",
            "web/index.ts": "export * from './button'\n",
            "web/page.ts": "import { Button } from '.'\n\nexport function page() {\n  return new Button()\n}\n",
            "web/ext.ts": "import { Button } from 'ui-lib'\n\nexport function ext() {\n  return new Button()\n}\n",
        }
    )
    off, on = _edges(root, tmp_path, False), _edges(root, tmp_path, True)
    for importer, name, meant, other in (
        ("pkg/app.py", "Console", "pkg/console.py", "pkg/legacy.py"),
        ("tool.py", "Console", "pkg/console.py", "pkg/legacy.py"),
        ("web/page.ts", "Button", "web/button.ts", "web/old/button.ts"),
    ):
        assert {(importer, meant, name), (importer, other, name)} <= off, importer
        assert (importer, meant, name) in on, importer
        assert (importer, other, name) not in on, importer
    assert {("web/ext.ts", "web/button.ts", "Button"), ("web/ext.ts", "web/old/button.ts", "Button")} <= on


def test_edits_that_move_an_imported_definition_patch_to_a_fresh_processs_graph(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A long-lived map patches its graph after each edit; the links of a file that did not change
    follow the files they were read from (the definition moved, the re-export changed). Each
    patched graph equals the graph a new process builds, and the links did move."""
    from hybridmap.pipeline.graph.update import graph_differences

    root = git_repo(
        {
            "pkg/__init__.py": "from .console import Console\n",
            "pkg/console.py": "class Console:\n    pass\n",
            "pkg/legacy.py": "class Console:\n    pass\n",
            "pkg/fresh.py": "def helper():\n    pass\n",
            "tool.py": "from pkg import Console\n\ndef main():\n    return Console()\n",
        }
    )
    edits = [
        {"pkg/console.py": "def other():\n    pass\n"},  # the imported file no longer defines it
        {"pkg/__init__.py": "from .fresh import *\n", "pkg/fresh.py": "class Console:\n    pass\n"},
        {"pkg/fresh.py": "def helper():\n    pass\n"},
    ]
    # Without a definer where the import points, name matching again: legacy.py, the other definer.
    wanted = [{"pkg/legacy.py"}, {"pkg/fresh.py"}, {"pkg/legacy.py"}]
    on = {"cache_dir": str(tmp_path / "c"), "name_match_import_files": True}
    with RepoMap(root, overrides=on, start_servers=False) as mapper, never_rebuilt():
        mapper.map(mode="static", tokens=256)
        for step, (edit, targets) in enumerate(zip(edits, wanted, strict=True)):
            for path, text in edit.items():
                (root / path).write_text(text)
            assert mapper.map(mode="static", tokens=256).stats["graph_patched"] == 1.0, step
            graph = mapper.graph()
            assert graph is not None
            linked = {v for u, v, k in graph.to_networkx().edges(keys=True) if u == "tool.py" and k == "Console"}
            assert linked == targets, step
            with RepoMap(root, overrides={**on, "use_cache": False}, start_servers=False) as fresh:
                fresh.map(mode="static", tokens=256)
                fresh_graph = fresh.graph()
                assert fresh_graph is not None
                assert graph_differences(graph, fresh_graph) == [], step
