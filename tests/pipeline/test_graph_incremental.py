"""The incremental graph (``hybridmap.pipeline.graph.update``) equals a rebuild after every edit.

Equality is :func:`hybridmap.pipeline.graph.update.graph_differences`: the same files and identifiers in
order, the same edge rows in the same (canonical) order with weights equal bit for bit and
provenance compared by name, the same definers, symbol columns, file pairs and definition keys;
and the ranking of both graphs is equal (``==`` on the whole :class:`~hybridmap.pipeline.rank.Ranking`:
every item, score, file score and reason), since the rows are summed in the same order.

Two property tests: random edit sequences on a repository of real files mapped by the real
``RepoMap`` (tree-sitter, workspace, ``MapBuilder``), and random sequences on tags directly,
which also move language-server-style resolved pairs (targets inside and outside the repository).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
import weakref
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.model import FileTags, Span, Symbol
from hybridmap.pipeline.graph.repo_graph import RepoGraph, build_graph, definer_counts
from hybridmap.pipeline.graph.update import GraphUpdater, graph_differences
from hybridmap.pipeline.rank import rank
from hybridmap.pipeline.rank.lexical import LexicalIndex
from hybridmap.settings import Settings

from ..helpers import never_rebuilt

#: Few names, so that files define and use the same ones (definer sets move with every edit).
NAMES = ("load_index", "save", "parse_args", "Config", "run", "helper", "_private", "get")
DIRS = ("", "pkg/", "pkg/sub/", "tests/")
#: Settings under which weights and cut-offs move with small definer counts.
TIGHT = dataclasses.replace(Settings(), common_ident_definers=1, max_definers_per_ident=3, self_reference_weight=0.5)

Repo = dict[str, tuple[list[str], list[str]]]
"""path -> (names it defines, names it calls), in order."""


def source(defs: list[str], uses: list[str]) -> str:
    lines = [f"def {name}(value):\n    return value\n" for name in defs]
    lines.extend(f"{name}(1)\n" for name in uses)
    return "\n".join(lines) or "\n"


def apply(repo: Repo, op: tuple[Any, ...]) -> None:
    """One edit: add/remove a definition or a use, add/remove/rename a file (skipped when it
    does not apply, e.g. removing from an empty file)."""
    kind, pick, name, place = op
    paths = sorted(repo)
    path = paths[pick % len(paths)] if paths else None
    if kind == "add_file" or path is None:
        repo[f"{DIRS[pick % len(DIRS)]}m{len(repo)}_{pick}.py"] = ([name], [NAMES[(pick + 3) % len(NAMES)]])
        return
    defs, uses = repo[path]
    if kind == "add_def":
        defs.insert(place % (len(defs) + 1), name)
    elif kind == "remove_def" and defs:
        defs.pop(place % len(defs))
    elif kind == "add_use":
        uses.insert(place % (len(uses) + 1), name)
    elif kind == "remove_use" and uses:
        uses.pop(place % len(uses))
    elif kind == "remove_file" and len(repo) > 1:
        del repo[path]
    elif kind == "rename_file":
        repo[f"{DIRS[place % len(DIRS)]}r{pick}_{Path(path).name}"] = repo.pop(path)


OPS = st.tuples(
    st.sampled_from(["add_def", "remove_def", "add_use", "remove_use", "add_file", "remove_file", "rename_file"]),
    st.integers(0, 50),
    st.sampled_from(NAMES),
    st.integers(0, 50),
)
START = st.dictionaries(
    st.sampled_from([f"{d}f{i}.py" for d in DIRS for i in range(3)]),
    st.tuples(st.lists(st.sampled_from(NAMES), max_size=3), st.lists(st.sampled_from(NAMES), max_size=4)),
    min_size=4,
    max_size=8,
)


def ten_files() -> Repo:
    """Ten files in one package, each defining one name and using the next and ``get``."""
    return {f"pkg/f{i}.py": ([NAMES[i % 8]], [NAMES[(i + 1) % 8], "get"]) for i in range(10)}


def write(root: Path, repo: Repo) -> None:
    for old in root.rglob("*.py"):
        if old.relative_to(root).as_posix() not in repo:
            old.unlink()
    for path, (defs, uses) in repo.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source(defs, uses)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)


def assert_same_as_rebuild(
    graph: RepoGraph,
    tags: Mapping[str, FileTags],
    config: Settings,
    resolved: Any = None,
    lexical: LexicalIndex | None = None,
) -> None:
    """The graph equals a rebuild, and so do its rankings; with ``lexical`` (kept across edits:
    its text-similarity models carried over from the last graph's) against a fresh index."""
    want = build_graph(tags, config, resolved)
    assert graph_differences(graph, want) == []
    chat = sorted(tags)[:1]
    for chat_files, idents in (([], []), (chat, ["get"])):
        ask: dict[str, Any] = {"chat_files": chat_files, "mentioned_files": [], "mentioned_idents": idents}
        ours = rank(graph, tags, settings=config, lexical=lexical, **ask)
        assert ours == rank(want, tags, settings=config, lexical=LexicalIndex() if lexical else None, **ask)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=START, ops=st.lists(OPS, min_size=1, max_size=10))
def test_real_edits_map_to_the_rebuilt_graph(start: Repo, ops: list[tuple[Any, ...]]) -> None:
    repo = {path: (list(defs), list(uses)) for path, (defs, uses) in start.items()}
    with tempfile.TemporaryDirectory() as scratch, never_rebuilt():
        root = Path(scratch)
        write(root, repo)
        with RepoMap(root, overrides={"use_cache": False}, start_servers=False) as mapper:
            rebuilds = mapper.map(mode="static", tokens=256).stats["graph_rebuilt"]
            config = mapper.settings
            for op in ops:
                apply(repo, op)
                write(root, repo)
                rebuilds += mapper.map(mode="static", tokens=256, chat_files=sorted(repo)[:1]).stats["graph_rebuilt"]
                graph = mapper.graph()
                assert graph is not None
                tags = mapper.tags()
                assert set(tags) == set(repo)
                assert_same_as_rebuild(graph, tags, config)
            assert rebuilds == 1  # every later graph was patched


def test_real_edits_are_patched_not_rebuilt(tmp_path: Path) -> None:
    """The property above is not vacuous: a one-file edit in a repository of ten files patches
    the graph, and the patched graph is the one the map ranked."""
    repo = ten_files()
    write(tmp_path, repo)
    with RepoMap(tmp_path, overrides={"use_cache": False}, start_servers=False) as mapper:
        first = mapper.map(mode="static", tokens=256).stats
        assert (first["graph_rebuilt"], first["graph_patched"]) == (1.0, 0.0)
        before = mapper.graph()
        assert before is not None and before.definers["get"] == (before.index["pkg/f7.py"],)
        repo["pkg/f3.py"][0].append("get")  # a second definer of a name every file uses
        write(tmp_path, repo)
        second = mapper.map(mode="static", tokens=256).stats
        assert (second["graph_rebuilt"], second["graph_patched"]) == (0.0, 1.0)
        graph = mapper.graph()
        assert graph is not None
        get = graph.ident_index["get"]
        assert {graph.files[int(d)] for d in graph.edge_dst[graph.edge_ident == get]} == {"pkg/f3.py", "pkg/f7.py"}
        assert_same_as_rebuild(graph, mapper.tags(), mapper.settings)
        # The replaced graph is let go of after the map (in a worker thread), not kept.
        replaced = weakref.ref(before)
        del before
        deadline = time.monotonic() + 10
        while replaced() is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert replaced() is None


def test_an_edit_that_moves_no_row_shares_the_old_rows() -> None:
    """An edit that keeps a file's names, targets and their places (a use more of a name it
    already uses; a new definition nobody uses) patches no row: the new graph shares the old
    columns that did not change, writes the new counts and weights into copies, and still
    equals a rebuild (which the property tests above check on every kind of edit)."""
    tags = {f"f{i}.py": tags_of([NAMES[i % 8]], [NAMES[(i + 1) % 8], "get", "run"]) for i in range(8)}
    updater = GraphUpdater(Settings())
    before = updater.update(tags)
    more_uses = {**tags, "f2.py": tags_of([NAMES[2]], [NAMES[3], "get", "run", "get"])}
    after = updater.update(more_uses)
    assert updater.last_mode == "updated"
    assert after.edge_src is before.edge_src and after.edge_ident is before.edge_ident
    assert after.edge_count is not before.edge_count and after.edge_weight is not before.edge_weight
    assert not graph_differences(after, build_graph(more_uses, Settings()))
    unused_def = {**more_uses, "f5.py": tags_of([NAMES[5], "nobody_calls_this"], [NAMES[6], "get", "run"])}
    last = updater.update(unused_def)
    assert last.edge_weight is after.edge_weight and last.edge_count is after.edge_count
    assert not graph_differences(last, build_graph(unused_def, Settings()))


def tags_of(defs: list[str], uses: list[str]) -> FileTags:
    symbols = tuple(Symbol(name, "function", Span(i, 0, i + 1, 0), i, 0, "") for i, name in enumerate(defs))
    return FileTags(symbols, tuple(uses))


PAIR_OPS = st.tuples(st.integers(0, 50), st.integers(0, 50), st.lists(st.integers(0, 60), max_size=3))


@settings(max_examples=60, deadline=None)
@given(
    start=START,
    steps=st.lists(st.tuples(OPS, st.lists(PAIR_OPS, max_size=2)), min_size=1, max_size=12),
    tight=st.booleans(),
)
# Found by a full-suite run: a splice whose definition keys lost an identifier remapped the
# removed rows' values too (-1, no index at all).
@example(
    start={
        "f1.py": ([], []),
        "f0.py": ([], ["load_index"]),
        "pkg/f0.py": (["load_index"], ["save"]),
        "f2.py": ([], []),
    },
    steps=[(("add_def", 0, "load_index", 0), [(0, 0, []), (3, 0, [0])])],
    tight=False,
)
def test_tag_edits_and_resolved_pairs_update_to_the_rebuilt_graph(
    start: Repo, steps: list[tuple[tuple[Any, ...], list[tuple[int, int, list[int]]]]], tight: bool
) -> None:
    config = TIGHT if tight else Settings()
    repo = {path: (list(defs), list(uses)) for path, (defs, uses) in start.items()}
    updater = GraphUpdater(config)
    tags = {p: tags_of(*v) for p, v in repo.items()}
    updater.update(tags)
    with never_rebuilt():
        _tag_steps(updater, repo, tags, steps, config)


def _tag_steps(
    updater: GraphUpdater,
    repo: Repo,
    tags: dict[str, FileTags],
    steps: list[tuple[tuple[Any, ...], list[tuple[int, int, list[int]]]]],
    config: Settings,
) -> None:
    resolved: dict[tuple[str, str], dict[str, str]] = {}
    lexical = LexicalIndex()
    for op, pair_ops in steps:
        apply(repo, op)
        # Unchanged files keep their tags object, as the sources do.
        tags = {p: tags[p] if tags.get(p) is not None and _same(tags[p], v) else tags_of(*v) for p, v in repo.items()}
        paths = sorted(repo)
        for pick, use, targets in pair_ops:  # a server resolving (or forgetting) a use
            path = paths[pick % len(paths)]
            uses = repo[path][1]
            if not uses:
                continue
            key = (path, uses[use % len(uses)])
            if not targets and key in resolved:
                del resolved[key]
            else:
                named = [paths[t % len(paths)] if t < 50 else f"outside{t}.py" for t in targets]
                resolved[key] = {t: ("lsp", "scip")[i % 2] for i, t in enumerate(named)}
        graph = updater.update(tags, dict(resolved) or None)
        assert updater.last_mode in ("updated", "unchanged")
        # The API's definer counts, kept from the previous call, equal a fresh count.
        assert definer_counts(tags) == Counter(name for t in tags.values() for name in {s.name for s in t.symbols})
        assert_same_as_rebuild(graph, tags, config, dict(resolved) or None, lexical)


def _same(tags: FileTags, value: tuple[list[str], list[str]]) -> bool:
    return [s.name for s in tags.symbols] == value[0] and list(tags.ref_names) == value[1]


def test_a_difference_is_seen() -> None:
    """The equality can fail: one weight, one row's provenance, one definer set."""
    tags = {"a.py": tags_of(["run"], ["get"]), "b.py": tags_of(["get"], ["run", "get"]), "c.py": tags_of(["get"], [])}
    graph = build_graph(tags, Settings())
    assert graph_differences(graph, build_graph(tags, Settings())) == []
    weight = graph.edge_weight.copy()
    weight[0] *= 1 + 1e-15  # a few units in the last place
    rows = len(weight)
    assert graph_differences(dataclasses.replace(graph, edge_weight=weight), graph) == [
        f"edge_weight differ ({rows} vs {rows} values)"
    ]
    lsp = np.ones_like(graph.edge_provenance)
    assert graph_differences(dataclasses.replace(graph, edge_provenance=lsp), graph) == [
        f"edge_provenance differ ({rows} vs {rows} values)",
        f"dependent_counts differ ({2 * len(graph.files)} vs {2 * len(graph.files)} values)",  # resolved now
    ]
    assert graph_differences(dataclasses.replace(graph, definers={"get": (1,)}), graph) == ["definers differ"]


def test_dependent_counts_count_distinct_dependent_files() -> None:
    """``RepoGraph.dependent_counts`` (from the pairs an update patches) counts, per file, the
    other files with an edge into it and those with a resolved one, as a pass over every edge
    does (what ``marks.dependents`` did with ``np.unique``), resolved edges included."""
    tags = {
        "a.py": tags_of(["run"], ["get", "helper"]),
        "b.py": tags_of(["get"], ["run", "get", "helper"]),
        "c.py": tags_of(["get", "helper"], ["run"]),
        "d.py": tags_of([], ["helper", "run"]),
    }
    resolved = {("a.py", "get"): {"b.py": "lsp"}, ("d.py", "helper"): {"c.py": "scip", "outside.py": "lsp"}}
    for graph in (build_graph(tags, Settings()), build_graph(tags, Settings(), resolved)):
        total, resolved_count = graph.dependent_counts()
        users: dict[str, set[str]] = {}
        resolved_users: dict[str, set[str]] = {}
        for row in range(len(graph.edge_src)):
            src, dst = graph.files[int(graph.edge_src[row])], graph.files[int(graph.edge_dst[row])]
            if src != dst:
                users.setdefault(dst, set()).add(src)
                if graph.provenance(row) != "name-match":
                    resolved_users.setdefault(dst, set()).add(src)
        got = {graph.files[i]: (int(total[i]), int(resolved_count[i])) for i in np.flatnonzero(total)}
        assert got == {path: (len(u), len(resolved_users.get(path, ()))) for path, u in users.items()}
    assert got["b.py"] == (1, 1)  # the resolved graph: only a.py uses b.py (its get, resolved there)


def test_an_updater_that_keeps_nothing_to_patch_rebuilds_the_same_graph() -> None:
    """A one-shot process's updater (``patches=False``) holds no reference counts or row keys
    after a build, and builds every changed graph whole: the same graph a patching updater makes."""
    tags = {f"f{i}.py": tags_of([NAMES[i % 8]], [NAMES[(i + 1) % 8], "get", "run"]) for i in range(8)}
    patching, whole = GraphUpdater(Settings()), GraphUpdater(Settings(), patches=False)
    patching.update(tags)
    whole.update(tags)
    assert not whole._refs and not len(whole._keys)
    edited = {**tags, "f3.py": tags_of([NAMES[3], "get"], ["run"])}
    patched, rebuilt = patching.update(edited), whole.update(edited)
    assert (patching.last_mode, whole.last_mode) == ("updated", "rebuilt")
    assert graph_differences(patched, rebuilt) == []
    assert whole.update(edited) is rebuilt and whole.last_mode == "unchanged"


def test_a_lexical_index_that_keeps_no_vectors_scores_the_same() -> None:
    """Without each file's vector held (a one-shot process), the models and their scores are
    the same, a fresh graph's and an edited graph's alike."""
    tags = {f"pkg/f{i}.py": tags_of([NAMES[i % 8], f"own_{i}"], [NAMES[(i + 1) % 8], "get"]) for i in range(10)}
    edited = {**tags, "pkg/f4.py": tags_of(["load_index", "rewritten"], ["save", "parse_args"])}
    kept, unkept = LexicalIndex(), LexicalIndex(keep_vectors=False)
    for version in (tags, edited):
        graph = build_graph(version, Settings())
        for whole_text in (False, True):
            a = kept.model_for(graph, version, whole_text)
            b = unkept.model_for(graph, version, whole_text)
            query = kept.word_ids(["load", "index", "save", "own", "rewritten"])
            assert np.array_equal(a.scores(query, len(graph.files)), b.scores(query, len(graph.files)))
    assert kept._vectors and not unkept._vectors


def test_a_one_shot_map_equals_a_long_lived_one_and_rebuilds_after_an_edit(tmp_path: Path) -> None:
    """A one-shot ``RepoMap`` (the CLI's: nothing held to patch a later map) gives the map a
    long-lived one gives, and a second map after an edit, built whole, is the patched one's."""
    repo = ten_files()
    write(tmp_path, repo)
    ask: dict[str, Any] = {"mode": "static", "tokens": 256, "chat_files": ["pkg/f2.py"]}
    with (
        RepoMap(tmp_path, overrides={"use_cache": False}, start_servers=False) as long_lived,
        RepoMap(tmp_path, overrides={"use_cache": False}, start_servers=False, one_shot=True) as one_shot,
    ):
        assert one_shot.map(**ask).text == long_lived.map(**ask).text
        repo["pkg/f3.py"][0].append("get")
        write(tmp_path, repo)
        patched, whole = long_lived.map(**ask), one_shot.map(**ask)
        assert (patched.stats["graph_patched"], whole.stats["graph_rebuilt"]) == (1.0, 1.0)
        assert whole.text == patched.text and whole.files == patched.files
        graph = one_shot.graph()
        assert graph is not None
        assert_same_as_rebuild(graph, one_shot.tags(), one_shot.settings)


def test_a_one_shot_map_that_may_start_servers_keeps_what_a_follow_up_patches(tmp_path: Path) -> None:
    """With servers allowed, a one-shot process's map is built again when they answer for the
    shown files (a follow-up): that build patches, so the first keeps what patching needs. (Static
    maps here, so no server starts: the second map stands for the follow-up's build.)"""
    repo = ten_files()
    write(tmp_path, repo)
    ask: dict[str, Any] = {"mode": "static", "tokens": 256}
    with RepoMap(tmp_path, overrides={"use_cache": False}, start_servers=True, one_shot=True) as mapper:
        assert mapper.map(**ask).stats["graph_rebuilt"] == 1.0
        repo["pkg/f3.py"][0].append("get")
        write(tmp_path, repo)
        assert mapper.map(**ask).stats["graph_patched"] == 1.0
