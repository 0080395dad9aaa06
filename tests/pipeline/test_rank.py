"""Ranking: our PageRank is networkx's, and personalization moves what a user expects."""

from __future__ import annotations

import importlib
from unittest.mock import patch

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap.languages.lexical import is_well_named, well_named_any
from hybridmap.languages.paths import path_multiplier
from hybridmap.pipeline.graph.repo_graph import build_graph
from hybridmap.pipeline.rank import pagerank, rank
from hybridmap.pipeline.rank.ranker import best_first
from hybridmap.pipeline.rank.signals import file_decay
from hybridmap.pipeline.rank.signals.file_decay import decay_within_files
from hybridmap.settings import Settings

from ..helpers import rank_corpus


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("csr_min_edges", [0, 10**9], ids=["scipy-csr", "numpy"])
def test_pagerank_matches_networkx(seed: int, csr_min_edges: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both iterations, same answer. The module, not the package: its CSR_MIN_EDGES is a re-export.
    monkeypatch.setattr(importlib.import_module("hybridmap.pipeline.rank.pagerank"), "CSR_MIN_EDGES", csr_min_edges)
    rng = np.random.default_rng(seed)
    n, m = 40, 160
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    weight = rng.random(m) * 5
    personal = np.zeros(n)
    personal[rng.integers(0, n, 3)] = [5.0, 3.0, 1.0]
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(n))  # some nodes stay dangling
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True):
        graph.add_edge(s, d, weight=w)
    expected = nx.pagerank(
        graph, alpha=0.85, personalization={i: personal[i] for i in range(n)}, weight="weight", tol=1e-10, max_iter=500
    )
    ours = pagerank(n, src, dst, weight, personal, alpha=0.85, max_iter=500, tol=1e-10)
    assert np.allclose(ours, [expected[i] for i in range(n)], atol=1e-8)


def test_name_matched_graph_links_every_definer() -> None:
    graph = build_graph(rank_corpus(), Settings())
    nxg = graph.to_networkx()
    # The static blind spot: app.py's load_index links to both definers.
    assert nxg.has_edge("app.py", "store/disk.py", key="load_index")
    assert nxg.has_edge("app.py", "store/memory.py", key="load_index")
    assert all(data["provenance"] == "name-match" for *_, data in nxg.edges(data=True))
    assert graph.edge_counts_by_provenance()["name-match"] == nxg.number_of_edges()


def test_chat_file_pulls_its_dependencies_up() -> None:
    tags = rank_corpus()
    graph = build_graph(tags, Settings())
    plain = rank(graph, tags, chat_files=[], mentioned_files=[], mentioned_idents=[], settings=Settings())
    chat = rank(graph, tags, chat_files=["cli.py"], mentioned_files=[], mentioned_idents=[], settings=Settings())
    assert chat.file_scores["app.py"] > plain.file_scores["app.py"]
    assert all(item.path != "cli.py" for item in chat.items)  # chat files are not repeated
    assert chat.items[0].path == "app.py"
    assert "referenced by a chat file" not in chat.reasons.get("app.py", ())  # off by default
    # The graph-neighbour boost (off since docs/evaluation.md, "Graph neighbour"): + 1 on app.py's
    # multiplier, 1.5 (entry point) + 2 (in the chat file's directory).
    near = Settings(chat_neighbor_boost=1.0)
    boosted = rank(graph, tags, chat_files=["cli.py"], mentioned_files=[], mentioned_idents=[], settings=near)
    assert boosted.file_scores["app.py"] == pytest.approx(chat.file_scores["app.py"] * 4.5 / 3.5)
    assert "referenced by a chat file" in boosted.reasons["app.py"]


def test_chat_file_lifts_the_files_that_use_it() -> None:
    """Editing store/disk.py: app.py and the test call it, and may have to change with it."""
    tags = rank_corpus()
    graph = build_graph(tags, Settings())
    ask = {"chat_files": ["store/disk.py"], "mentioned_files": [], "mentioned_idents": []}
    near = Settings().replace(directory_proximity_boost=0.0)  # store/ and tests/ are near: measured apart
    off = rank(graph, tags, **ask, settings=near.replace(chat_dependent_boost=0.0))
    on = rank(graph, tags, **ask, settings=near)
    assert Settings().chat_dependent_boost == 1.0
    # The boost adds 1 to a user's path multiplier (entry point 1.5, test path 0.4).
    for user, multiplier in (("app.py", 1.5), ("tests/test_disk.py", 0.4)):
        assert on.file_scores[user] == pytest.approx(off.file_scores[user] * (multiplier + 1) / multiplier)
        assert "references a chat file" in on.reasons[user]
    assert on.file_scores["lonely.py"] == pytest.approx(off.file_scores["lonely.py"])
    assert "references a chat file" not in on.reasons.get("store/memory.py", [])


def test_mentioned_identifier_ranks_its_definition_first() -> None:
    tags = rank_corpus()
    graph = build_graph(tags, Settings())
    ranking = rank(
        graph, tags, chat_files=[], mentioned_files=[], mentioned_idents=["unrelated_helper"], settings=Settings()
    )
    top = ranking.items[0]
    assert (top.path, tags[top.path].symbols[top.symbol].name) == ("lonely.py", "unrelated_helper")
    # A mention adds; it never removes: every item is still ranked.
    assert ranking.total_items == sum(len(t.symbols) for t in tags.values())


def test_path_multipliers() -> None:
    settings = Settings()
    assert path_multiplier("tests/test_disk.py", settings)[0] == pytest.approx(settings.test_path_weight)
    assert path_multiplier("src/vendor/lib.py", settings)[0] == pytest.approx(settings.vendor_path_weight)
    assert path_multiplier("api/service_pb2.py", settings)[0] == pytest.approx(settings.generated_path_weight)
    assert path_multiplier("cmd/main.go", settings)[0] == pytest.approx(settings.entry_point_weight)
    assert path_multiplier("src/store.py", settings)[0] == 1.0


def test_test_files_rank_below_the_code_they_test() -> None:
    tags = rank_corpus()
    graph = build_graph(tags, Settings())
    ranking = rank(graph, tags, chat_files=[], mentioned_files=[], mentioned_idents=[], settings=Settings())
    assert ranking.file_scores["tests/test_disk.py"] < ranking.file_scores["store/disk.py"]


def test_well_named() -> None:
    assert is_well_named("load_index", 8)
    assert is_well_named("loadIndex", 8)
    assert not is_well_named("load", 8)
    assert not is_well_named("________", 8)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from("aZ_-9$x_Q-"), max_size=12) | st.text(st.characters(max_codepoint=127), max_size=12))
def test_the_ascii_shortcut_of_well_named_is_the_rule(ident: str) -> None:
    assert is_well_named(ident, 0) == well_named_any(ident)


@settings(max_examples=300, deadline=None)
@given(
    scores=st.lists(
        st.sampled_from([0.0, 0.5, 1.0, 2.0, float("-inf")]) | st.floats(-1e6, 1e6), min_size=0, max_size=80
    ),
    take=st.integers(-1, 90),
)
def test_best_first_is_the_stable_sort_cut_to_take(scores: list[float], take: int) -> None:
    """The partition-then-sort selection equals a full stable argsort cut to ``take``, ties in
    index order (many equal scores are the common case: chat files' -inf, zero-rank files)."""
    array = np.array(scores, dtype=np.float64)
    want = np.argsort(-array, kind="stable")[: max(take, 0)]
    assert best_first(array, take).tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=0, max_size=30),
    data=st.data(),
    grouped=st.booleans(),
    step=st.sampled_from([1, 4, 64, file_decay.PLACES_STEP_CELLS]),
)
def test_decay_within_files_is_the_lexsort_decay(
    sizes: list[int], data: st.DataObject, grouped: bool, step: int
) -> None:
    """The decay's faster order (a graph keeps a file's symbols together) gives exactly what the
    lexsort by file, then score, gave; ties (common: equal shares of a file's rank) in index order;
    whatever the step its rows are taken in (``PLACES_STEP_CELLS``; a step smaller than a row
    takes one row)."""
    files = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
    if not grouped:
        files = np.array(data.draw(st.permutations(files.tolist())), dtype=np.int32)
    values = st.sampled_from([0.0, 0.25, 1.0, float("-inf")]) | st.floats(0, 1e6)  # -inf: chat files
    scores = np.array(data.draw(st.lists(values, min_size=len(files), max_size=len(files))), dtype=np.float64)
    order = np.lexsort((-scores, files))
    files_sorted = files[order]
    starts = np.flatnonzero(np.r_[True, files_sorted[1:] != files_sorted[:-1]]) if len(order) else np.zeros(0, int)
    k = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    want = scores.copy()
    want[order] = scores[order] * np.power(0.8, k)
    with patch.object(file_decay, "PLACES_STEP_CELLS", step):
        assert decay_within_files(scores, files, 0.8).tolist() == want.tolist()
