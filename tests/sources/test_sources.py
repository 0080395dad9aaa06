"""The source seam and the workspace: change sets by content, any number of sources in a
configured precedence, provenance by source name (real files, real git repositories)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.features.compare import graph_edges
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import FileTags, Provenance, Span, Symbol
from hybridmap.pipeline.merge import merge_views
from hybridmap.settings import Settings
from hybridmap.sources import registry as source_registry
from hybridmap.sources.base import PassiveSource, SourceView, SymbolSource
from hybridmap.sources.lsp.source import LspSource
from hybridmap.sources.registry import SourceContext
from hybridmap.sources.static_index import TreeSitterSource
from hybridmap.workspace.state import Snapshot, Workspace

from ..conftest import GitRepoFactory

FILES = {
    "app.py": "from store.disk import load\n\n\ndef main():\n    return load('x')\n",
    "store/__init__.py": "",
    "store/disk.py": "def load(path):\n    return open(path).read()\n",
    "store/memory.py": "def load(key):\n    return {}[key]\n",
}


def _workspace(root: Path, registry: LanguageRegistry) -> Workspace:
    return Workspace(root, Settings(stat_racy_seconds=0.0), registry)


def test_change_set_is_by_content(git_repo: GitRepoFactory, registry: LanguageRegistry) -> None:
    root = git_repo(FILES)
    workspace = _workspace(root, registry)
    first, changes = workspace.refresh()
    assert sorted(changes.added) == sorted(FILES) and not changes.changed and not changes.removed
    assert set(changes.contents) == set(FILES)
    assert first.shas.keys() == set(FILES) and first.languages["app.py"] == "python"

    again, changes = workspace.refresh()
    assert changes.empty and not changes.contents and again.generation == first.generation
    assert again.stats["files_read"] == 0 and again.stats["files_reused"] == len(FILES)

    disk = root / "store" / "disk.py"
    os.utime(disk, ns=(time.time_ns(), time.time_ns() + 10**9))  # touched, same content
    (root / "store" / "memory.py").write_text("def load(key, default=None):\n    return default\n")
    (root / "store" / "extra.py").write_text("def extra():\n    return 1\n")
    (root / "app.py").unlink()
    later, changes = workspace.refresh()
    assert changes.changed == ("store/memory.py",), changes  # disk.py was re-read, not changed
    assert changes.added == ("store/extra.py",) and changes.removed == ("app.py",)
    assert set(changes.contents) == {"store/memory.py", "store/extra.py"}
    assert changes.touched == {"store/memory.py", "store/extra.py", "app.py"}
    assert later.generation == first.generation + 1 and "app.py" not in later.files


def test_racy_files_are_read_again(git_repo: GitRepoFactory, registry: LanguageRegistry) -> None:
    """A file that changed just before it was looked at is re-read next time, whatever its
    stat signature says: a second write in the same timestamp tick would not show."""
    root = git_repo(FILES)
    workspace = Workspace(root, Settings(stat_racy_seconds=60.0), registry)
    workspace.refresh()
    snapshot, changes = workspace.refresh()
    assert snapshot.stats["files_read"] == len(FILES) and changes.empty


def test_unreadable_files_are_said_not_lost(git_repo: GitRepoFactory, registry: LanguageRegistry) -> None:
    root = git_repo(FILES)
    (root / "store" / "outside.py").symlink_to("/etc/hostname")
    snapshot, _ = _workspace(root, registry).refresh()
    kinds = {d.path: d.kind for d in snapshot.file_diagnostics()}
    assert kinds.get("store/outside.py") == "outside_root"
    assert "store/outside.py" not in snapshot.shas


def test_base_source_parses_only_what_changed(
    git_repo: GitRepoFactory, registry: LanguageRegistry, tmp_path: Path
) -> None:
    from hybridmap.store.cache import Cache

    root = git_repo(FILES)
    settings = Settings(stat_racy_seconds=0.0)
    cache = Cache(None, 2**20)
    base = TreeSitterSource(registry, cache, settings)
    workspace = Workspace(root, settings, registry)
    view = base.index(*workspace.refresh())
    assert view.name == "tree-sitter" and set(view.tags) == set(FILES)
    assert view.stats["files_parsed"] == len(FILES)
    same = base.index(*workspace.refresh())
    assert same.tags is view.tags and same.version == view.version and same.stats["files_parsed"] == 0
    (root / "store" / "memory.py").write_text("def fetch(key):\n    return key\n")
    edited = base.index(*workspace.refresh())
    assert edited.version == view.version + 1 and edited.stats["files_parsed"] == 1
    assert [s.name for s in edited.tags["store/memory.py"].symbols] == ["fetch"]
    assert edited.tags["app.py"] is view.tags["app.py"]
    cache.close()


def test_a_view_patched_after_changes_is_the_view_built_afresh(
    git_repo: GitRepoFactory, registry: LanguageRegistry
) -> None:
    """The base view after edits, additions, deletions, a rename and an unreadable file is set
    path by path from the last one: the same tags and keys as a new source indexing the same
    snapshot, and a new version only when some file's tags moved."""
    from hybridmap.store.cache import Cache

    root = git_repo(FILES)
    settings = Settings(stat_racy_seconds=0.0)
    cache = Cache(None, 2**20)
    base = TreeSitterSource(registry, cache, settings)
    workspace = Workspace(root, settings, registry)
    steps = [
        lambda: (root / "store/memory.py").write_text("def fetch(key):\n    return key\n"),
        lambda: (root / "store/extra.py").write_text("def extra():\n    pass\n"),
        lambda: (root / "store/disk.py").unlink(),
        lambda: (root / "store/extra.py").rename(root / "store/renamed.py"),
        lambda: (root / "app.py").write_bytes(b"\xff\xfe\x00garbage\x00" * 10),
        lambda: None,
        lambda: (root / "store/disk.py").write_text("def load(path):\n    return path\n"),
    ]
    last = base.index(*workspace.refresh())
    for step in steps:
        step()
        snapshot, changes = workspace.refresh()
        view = base.index(snapshot, changes)
        fresh = TreeSitterSource(registry, cache, settings).index(snapshot, changes)
        assert dict(view.tags) == dict(fresh.tags) and dict(view.keys) == dict(fresh.keys)
        assert set(view.keys) == set(view.tags)
        moved = set(view.tags) != set(last.tags) or any(view.tags[p] is not last.tags[p] for p in view.tags)
        assert (view.version == last.version + 1) is moved and (view.tags is last.tags) is not moved
        last = view
    cache.close()


def test_an_index_after_a_by_path_refresh_is_the_index_built_afresh(
    git_repo: GitRepoFactory, registry: LanguageRegistry
) -> None:
    """A watch's batches, read path by path: each index looks only at the paths the snapshot's
    patches name (and what it left unsettled) and keeps every other entry; its tags, keys and
    diagnostics are a new source's over the same snapshot, at every step."""
    from hybridmap.store.cache import Cache

    root = git_repo(FILES)
    settings = Settings(stat_racy_seconds=0.0)
    cache = Cache(None, 2**20)
    base = TreeSitterSource(registry, cache, settings)
    workspace = Workspace(root, settings, registry)
    steps: list[tuple[set[str], Callable[[], object]]] = [
        ({"store/memory.py"}, lambda: (root / "store/memory.py").write_text("def fetch(key):\n    return key\n")),
        ({"store/extra.py"}, lambda: (root / "store/extra.py").write_text("def extra():\n    pass\n")),
        ({"store/disk.py"}, lambda: (root / "store/disk.py").unlink()),
        ({"store/extra.py", "store/renamed.py"}, lambda: (root / "store/extra.py").rename(root / "store/renamed.py")),
        ({"app.py"}, lambda: (root / "app.py").write_bytes(b"\xff\xfe\x00garbage\x00" * 10)),
        ({"app.py"}, lambda: (root / "app.py").write_text("def app():\n    fetch(1)\n")),
        ({"store/disk.py"}, lambda: (root / "store/disk.py").write_text("def load(path):\n    return path\n")),
    ]
    base.index(*workspace.refresh())
    by_path = 0
    for named, step in steps:
        step()
        done = workspace.refresh_paths(named)
        by_path += done is not None
        snapshot, changes = done if done is not None else workspace.refresh()
        view = base.index(snapshot, changes)
        fresh = TreeSitterSource(registry, cache, settings).index(snapshot, changes)
        assert dict(view.tags) == dict(fresh.tags) and dict(view.keys) == dict(fresh.keys)
        assert sorted(map(str, view.diagnostics)) == sorted(map(str, fresh.diagnostics))
    assert by_path == len(steps)
    cache.close()


# --- merging several views --------------------------------------------------------------------


def _symbol(name: str, line: int, provenance: str = Provenance.TREE_SITTER, detail: str = "") -> Symbol:
    return Symbol(name, "function", Span(line, 0, line + 1, 0), line, 4, f"def {name}():", -1, provenance, detail)


def test_views_merge_in_precedence() -> None:
    base = SourceView("tree-sitter", {"a.py": FileTags((_symbol("load", 0), _symbol("save", 3)))})
    best = SourceView(
        "index",
        {"a.py": FileTags((_symbol("load", 0, "index", "load() -> str"),), complete=False)},
        {("a.py", "load"): frozenset({"b.py"}), ("a.py", "save"): frozenset()},
    )
    other = SourceView(
        "lsp",
        {"a.py": FileTags((_symbol("load", 0, "lsp", "def load()"), _symbol("save", 3, "lsp", "def save()")))},
        {("a.py", "load"): frozenset({"c.py"}), ("a.py", "dump"): frozenset({"d.py"})},
    )
    merged = merge_views(base, (best, other))
    load, save = merged.tags["a.py"].symbols
    # Merged least trusted first: both confirm load, the most trusted source's detail wins.
    assert load.provenance == "tree-sitter+lsp+index" and load.detail == "load() -> str"
    assert save.provenance == "tree-sitter+lsp" and save.detail == "def save()"
    assert merged.resolved == {
        ("a.py", "load"): {"b.py": "index"},  # the first view that resolved a pair decides it
        ("a.py", "save"): {},
        ("a.py", "dump"): {"d.py": "lsp"},
    }
    assert merged.sources == ("tree-sitter", "index", "lsp")


# --- a fourth source: one module (here: this test) plus its registration ----------------------


class EdgeFileSource(PassiveSource):
    """Reads resolved uses from ``edges.json`` at the root (what an external indexer could
    write): ``[[src, identifier, [targets...]], ...]``. Only :meth:`view` is written."""

    name = "edge-file"

    def __init__(self, root: Path) -> None:
        self._root = root

    def view(self, snapshot: Snapshot, base: SourceView) -> SourceView:
        path = self._root / "edges.json"
        rows = json.loads(path.read_text()) if path.is_file() else []
        resolved = {(src, ident): frozenset(targets) for src, ident, targets in rows if src in snapshot.shas}
        return SourceView(self.name, resolved=resolved, version=hash(path.read_text()) if rows else 0)


@pytest.fixture
def edge_file_registered() -> Iterator[None]:
    source_registry.REFINING_SOURCES["edge-file"] = lambda context: EdgeFileSource(context.root)
    try:
        yield
    finally:
        del source_registry.REFINING_SOURCES["edge-file"]


def test_a_fourth_source_is_one_module_and_a_registration(
    git_repo: GitRepoFactory, tmp_path: Path, edge_file_registered: None
) -> None:
    root = git_repo({**FILES, "edges.json": json.dumps([["app.py", "load", ["store/disk.py"]]])})
    assert isinstance(EdgeFileSource(root), SymbolSource)
    overrides = {"cache_dir": str(tmp_path / "cache"), "source_precedence": ["edge-file"]}
    with RepoMap(root, overrides=overrides, start_servers=False) as repo:
        static = repo.map(mode="static", tokens=512)
        static_edges = graph_edges(repo.graph())  # type: ignore[arg-type]
        hybrid = repo.map(mode="hybrid", tokens=512)
        hybrid_edges = graph_edges(repo.graph())  # type: ignore[arg-type]
        comparison = repo.compare(tokens=512)
    guess = ("app.py", "store/memory.py", "load")
    assert static_edges[guess] == "name-match"  # type: ignore[index]
    assert guess not in {tuple(e) for e in hybrid_edges}
    resolved = {tuple(e): p for e, p in hybrid_edges.items()}
    assert resolved[("app.py", "store/disk.py", "load")] == "edge-file"
    assert hybrid.edges["edge-file"] == 1 and static.edges == {"name-match": static.edges["name-match"], "lsp": 0}
    assert hybrid.servers == {}  # no language server in this precedence: none is started or reported
    assert [e.dst for e in comparison.resolved] == ["store/disk.py"]
    assert comparison.to_json()["edges"]["resolved"][0]["provenance"] == "edge-file"  # type: ignore[index]


def test_unknown_source_names_are_a_diagnostic(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    overrides = {"cache_dir": str(tmp_path / "cache"), "source_precedence": ["nonesuch", "lsp"]}
    with RepoMap(root, overrides=overrides, start_servers=False) as repo:
        result = repo.map(tokens=512)
    problems = [d for d in result.diagnostics if d.kind == "unknown_source"]
    assert len(problems) == 1 and "nonesuch" in problems[0].message and result.text


def test_registry_builds_sources_in_precedence(git_repo: GitRepoFactory, registry: LanguageRegistry) -> None:
    from hybridmap.store.cache import Cache

    root = git_repo(FILES)
    cache = Cache(None, 2**20)
    context = SourceContext(root, Settings(source_precedence=("lsp", "scip")), registry, cache)
    sources, problems = source_registry.build_sources(context)
    # scip has no index configured: left out, silently (it is not asked for a map it cannot help).
    assert [s.name for s in sources] == ["lsp"] and isinstance(sources[0], LspSource) and not problems
    cache.close()
