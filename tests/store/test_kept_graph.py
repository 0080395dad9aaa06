"""The static graph a one-shot process keeps for the next (store/kept_graph.py, pipeline/warm_start.py):
taken back, it is the built graph array for array and the map is the same text; anything that moved
since (a file, a setting) or a kept file that is not exactly ours, and the graph is built as
without it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.pipeline.graph.kept import from_kept, to_kept
from hybridmap.pipeline.graph.repo_graph import RepoGraph
from hybridmap.store.kept_graph import KeptGraph, encode_graph, kept_graph_path, load_graph

#: Python with imports from inside and outside the repository (the policies resolve pairs), Go with
#: private names (the ranking's private flags), names defined in several files.
FILES = {
    "billing/invoice.py": (
        "from typing import Any\nfrom core.money import round_cents\n\n"
        "class Invoice:\n    def total(self, lines: Any) -> int:\n        return round_cents(sum(lines))\n\n"
        "def _draft(lines):\n    return Invoice().total(lines)\n"
    ),
    "core/money.py": "def round_cents(value):\n    return round(value, 2)\n\ndef Any(value):\n    return value\n",
    "reports/tax_report.py": (
        "from billing.invoice import Invoice\n\ndef tax_summary(lines):\n    return Invoice().total(lines)\n"
    ),
    "svc/server.go": (
        "package svc\n\ntype Server struct{}\n\nfunc (s *Server) Serve() error { return s.listen() }\n\n"
        "func (s *Server) listen() error { return nil }\n\nfunc NewServer() *Server { return &Server{} }\n"
    ),
    "svc/main.go": "package svc\n\nfunc Run() error { return NewServer().Serve() }\n",
}
CHAT = ["reports/tax_report.py"]


def _one_shot(root: Path, cache: Path, *, mode: str = "static", one_shot: bool = True, **overrides: object):  # type: ignore[no-untyped-def]
    """A process's one map: its result and the graph it ranked on."""
    with RepoMap(
        root, overrides={"cache_dir": str(cache), **overrides}, start_servers=False, one_shot=one_shot
    ) as repo:
        result = repo.map(mode=mode, chat_files=CHAT, tokens=2000)  # type: ignore[arg-type]
        graph = repo._async._engine.builder.graph
    return result, graph


def _same_graph(a: RepoGraph, b: RepoGraph) -> None:
    assert a.files == b.files and a.idents == b.idents and a.names.names == b.names.names
    assert [str(p) for p in a.provenances] == [str(p) for p in b.provenances]
    for name in ("edge_src", "edge_dst", "edge_ident", "edge_count", "edge_weight", "edge_provenance"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
    for name in ("symbol_file", "symbol_local", "symbol_ident", "symbol_name"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert dict(a.definers) == dict(b.definers)
    assert a.edge_counts_by_provenance() == b.edge_counts_by_provenance()


def _comparable(result) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What a map says, less how it was made (timings, cache and graph counters)."""
    stats = {k: v for k, v in result.stats.items() if k in ("graph_files", "graph_edges", "resolved_pairs")}
    return {"text": result.text, "files": result.files, "edges": result.edges, "stats": stats}


def test_a_graph_taken_back_is_the_built_one_and_so_is_the_map(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first, built = _one_shot(root, cache)
    assert first.stats["graph_rebuilt"] == 1 and first.stats["resolved_pairs"] > 0
    kept = kept_graph_path(cache, str(root.resolve()))
    assert kept.exists() and kept.stat().st_mode & 0o077 == 0
    again, adopted = _one_shot(root, cache)
    assert again.stats["graph_adopted"] == 1 and again.stats["graph_rebuilt"] == 0
    _same_graph(adopted, built)
    assert _comparable(again) == _comparable(first)
    # A one-shot hybrid map whose servers were not started is built from tree-sitter alone too.
    hybrid, _ = _one_shot(root, cache, mode="hybrid")
    assert hybrid.stats["graph_adopted"] == 1 and _comparable(hybrid) == _comparable(first)
    # A long-lived map builds its own, and neither reads nor writes the kept one.
    written = kept.stat().st_mtime_ns
    control, rebuilt = _one_shot(root, tmp_path / "fresh", one_shot=False)
    assert control.stats["graph_rebuilt"] == 1 and not kept_graph_path(tmp_path / "fresh", str(root.resolve())).exists()
    _same_graph(adopted, rebuilt)
    assert _comparable(control) == _comparable(first) and kept.stat().st_mtime_ns == written


def test_the_private_flags_are_kept_with_the_graph(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from hybridmap.pipeline.rank.signals.private_definitions import known_private_mask

    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _one_shot(root, cache)
    kept = load_graph(kept_graph_path(cache, str(root.resolve())), str(root.resolve()), _digest_of(cache, root), 1000)
    assert kept is not None
    _, private = from_kept(kept)
    assert private is not None and private.any() and not private.all()  # ``listen`` and ``_draft``
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "fresh")}, start_servers=False) as repo:
        repo.map(mode="static", chat_files=CHAT, tokens=2000)
        builder = repo._async._engine.builder
        made = known_private_mask(builder.graph, builder._conventions)
    assert made is not None and np.array_equal(made, private)


def _digest_of(cache: Path, root: Path) -> str:
    """The digest the kept file names (read from its JSON header)."""
    data = kept_graph_path(cache, str(root.resolve())).read_bytes()
    size = int.from_bytes(data[5:13], "little")
    return str(json.loads(data[13 : 13 + size])["digest"])


@pytest.mark.parametrize("change", ["an edited file", "an added file", "a removed file", "a setting"])
def test_nothing_kept_is_adopted_once_something_it_was_built_from_moved(git_repo, tmp_path: Path, change: str) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _one_shot(root, cache)
    overrides: dict[str, object] = {}
    if change == "an edited file":
        (root / "core/money.py").write_text("def round_cents(value, places):\n    return round(value, places)\n")
    elif change == "an added file":
        (root / "core/tax.py").write_text("def tax_summary(rate):\n    return rate\n")
    elif change == "a removed file":
        (root / "svc/main.go").unlink()
    else:
        overrides = {"max_definers_per_ident": 2}
    result, graph = _one_shot(root, cache, **overrides)
    assert result.stats["graph_adopted"] == 0 and result.stats["graph_rebuilt"] == 1
    control, built = _one_shot(root, tmp_path / "fresh", one_shot=False, **overrides)
    _same_graph(graph, built)
    assert _comparable(result) == _comparable(control)
    again, _ = _one_shot(root, cache, **overrides)  # and the graph built then is kept in turn
    assert again.stats["graph_adopted"] == 1 and _comparable(again) == _comparable(control)


@pytest.mark.parametrize(
    "damage", ["garbage", "empty", "another root's", "an index out of range", "cut short", "another format"]
)
def test_a_planted_graph_changes_no_map(git_repo, tmp_path: Path, damage: str) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first, _ = _one_shot(root, cache)
    kept = kept_graph_path(cache, str(root.resolve()))
    data = kept.read_bytes()
    if damage == "garbage":
        kept.write_bytes(b"HMGR\x01" + b"\xff" * 64)
    elif damage == "empty":
        kept.write_bytes(b"")
    elif damage == "another root's":
        kept.write_bytes(data.replace(str(root.resolve()).encode(), b"/" * len(str(root.resolve()))))
    elif damage == "an index out of range":
        graph = load_graph(kept, str(root.resolve()), _digest_of(cache, root), 1000)
        assert graph is not None
        arrays = {**graph.arrays, "edge_dst": np.full_like(graph.arrays["edge_dst"], len(graph.files))}
        planted = KeptGraph(
            graph.digest, graph.files, graph.idents, graph.names, graph.provenances, arrays, graph.resolved_pairs
        )
        pieces = encode_graph(str(root.resolve()), planted)
        assert pieces is not None
        kept.write_bytes(b"".join(pieces))
    elif damage == "cut short":
        kept.write_bytes(data[:-3])
    else:
        kept.write_bytes(data[:4] + b"\x09" + data[5:])
    result, _ = _one_shot(root, cache)
    assert result.stats["graph_adopted"] == 0 and _comparable(result) == _comparable(first)


def test_a_graph_whose_names_hold_a_nul_is_not_kept() -> None:
    arrays = {
        "edge_src": np.zeros(0, np.int32),
        "edge_dst": np.zeros(0, np.int32),
        "edge_ident": np.zeros(0, np.int32),
        "edge_count": np.zeros(0, np.int32),
        "edge_weight": np.zeros(0),
        "edge_provenance": np.zeros(0, np.int16),
        "symbol_file": np.zeros(1, np.int32),
        "symbol_local": np.zeros(1, np.int32),
        "symbol_ident": np.full(1, -1, np.int64),
        "symbol_name": np.zeros(1, np.int32),
        "private": np.zeros(0, bool),
    }
    graph = KeptGraph("d", ("a.py",), (), ("bad\0name",), ("name-match", "lsp"), arrays, 0)
    assert encode_graph("/r", graph) is None
    fine = KeptGraph("d", ("a.py",), (), ("name",), ("name-match", "lsp"), arrays, 0)
    pieces = encode_graph("/r", fine)
    assert pieces is not None


@settings(max_examples=200, deadline=None)
@given(at=st.integers(0, 10_000), value=st.integers(0, 255), cut=st.integers(0, 64))
def test_damaged_bytes_never_raise(tmp_path_factory: pytest.TempPathFactory, at: int, value: int, cut: int) -> None:
    """Any byte changed or the end cut: the load gives None or a graph whose indices are in range
    (so taking it back builds a graph without raising)."""
    _, data, digest = _small_kept()
    damaged = bytearray(data)
    damaged[at % len(damaged)] = value
    damaged = damaged[: len(damaged) - cut]
    path = tmp_path_factory.mktemp("kept") / "g.bin"
    path.write_bytes(bytes(damaged))
    loaded = load_graph(path, "/r", digest, 1000)
    if loaded is not None:
        graph, _ = from_kept(loaded)
        assert int(graph.edge_dst.max(initial=0)) < max(1, len(graph.files))
        dict(graph.definers)


_SMALL: list[tuple[KeptGraph, bytes, str]] = []


def _small_kept() -> tuple[KeptGraph, bytes, str]:
    """A small real graph (FILES built in-process), kept and encoded once for the property test."""
    if not _SMALL:
        from hybridmap.model import FileTags, Span, Symbol
        from hybridmap.pipeline.graph.repo_graph import build_graph
        from hybridmap.settings import Settings

        def tags(defs: list[str], refs: list[str]) -> FileTags:
            symbols = tuple(Symbol(d, "function", Span(i, 0, i, 9), i, 4, f"def {d}():") for i, d in enumerate(defs))
            return FileTags(symbols, tuple(refs), b"\0" * 8 * len(refs), b"\0" * len(refs))

        graph = build_graph(
            {
                "a.py": tags(["load", "save"], ["parse"]),
                "b.py": tags(["parse"], ["load", "load"]),
                "c.py": tags([], ["save"]),
            },
            Settings(),
        )
        kept = to_kept(graph, "digest", np.array([False, True, False]), 2)
        pieces = encode_graph("/r", kept)
        assert pieces is not None
        _SMALL.append((kept, b"".join(bytes(p) for p in pieces), "digest"))
    return _SMALL[0]


def test_a_small_graph_reads_back_as_written(tmp_path: Path) -> None:
    kept, data, digest = _small_kept()
    path = tmp_path / "g.bin"
    path.write_bytes(data)
    loaded = load_graph(path, "/r", digest, 1000)
    assert loaded is not None and loaded.files == kept.files and loaded.names == kept.names
    assert all(np.array_equal(loaded.arrays[k], np.asarray(v)) for k, v in kept.arrays.items())
    assert load_graph(path, "/r", "another digest", 1000) is None
    assert load_graph(path, "/elsewhere", digest, 1000) is None
    assert load_graph(path, "/r", digest, 0) is None  # larger than max_files allows: not read


def test_a_record_found_damaged_when_its_tags_are_read_is_dropped_and_parsed_again(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A one-shot map decodes tags when read: a cached record whose tags do not decode then (its
    problems did, at the lookup) shows its file without symbols in that map, says so, and is
    dropped: the next map parses the file again. The kept graph held that file's symbols: the map
    is made again on a graph built from the tags (it does not fail, nor show what is not there).
    The kept tags keys are removed, so the record is read at the lookup (with them it is read,
    and found damaged, only when its tags are: ``test_kept_keys.py``)."""
    import shutil
    import sqlite3

    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first, _ = _one_shot(root, cache)
    assert "round_cents" in first.text
    shutil.rmtree(cache / "keys")
    with sqlite3.connect(cache / "cache.db") as db:
        rows = db.execute("SELECT rowid, value FROM Cache WHERE key LIKE '%tags%'").fetchall()
        money = [(rowid, value) for rowid, value in rows if b'[[["round_cents","Any"]' in value]
        assert len(money) == 1
        rowid, value = money[0]
        db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (value[:-4] + b"????", rowid))
    damaged, _ = _one_shot(root, cache)
    assert damaged.stats["graph_rebuilt"] == 1 and "round_cents" not in damaged.text
    assert any(d.kind == "cache_corrupt" for d in damaged.diagnostics)
    again, _ = _one_shot(root, cache)
    assert again.stats["files_parsed"] == 1 and _comparable(again) == _comparable(first)
