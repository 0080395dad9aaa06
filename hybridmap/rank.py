"""Personalized PageRank over the repository graph, spread to definitions.

Pure computation. Per request: edge weights get the request's multipliers
(mentioned identifiers, edges leaving chat files), files get personalization
(chat, mentioned, defining a mentioned identifier, path matching a mention),
PageRank runs on the weighted adjacency, each file's rank flows along its
out-edges to the (file, identifier) definitions it uses, and path multipliers
(tests, vendored, generated down; entry points up) shape the result.

:func:`pagerank` is the power iteration of ``networkx.pagerank`` (same dangling
and personalization semantics; ``tests/test_rank.py`` checks equality) on arrays,
so a warm re-rank costs milliseconds instead of rebuilding a networkx graph per
request. Small graphs iterate with numpy alone; large ones on a scipy CSR matrix,
imported only then (see :data:`CSR_MIN_EDGES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from .graph import RepoGraph
from .model import FileTags
from .paths import boost_scale
from .settings import Settings

#: Edge count from which the power iteration runs on a scipy CSR matrix. Measured (40 iterations,
#: 2 cores): numpy's gather + bincount equals CSR up to ~5,000 edges (click's graph has fewer) and
#: takes twice as long at 40,000 (the standard library's: +3 ms a rank); importing scipy costs
#: ~120 ms, which a one-shot map of a small repository would pay for nothing.
CSR_MIN_EDGES = 10_000


def _transition(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, Any]:
    """(out-weight per node, a function x -> x @ D^-1 A) for the edge list."""
    out = np.bincount(src, weights=weight, minlength=n).astype(np.float64)
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out != 0)
    if len(src) >= CSR_MIN_EDGES:
        import scipy.sparse as sp

        adjacency = sp.csr_array((weight, (src, dst)), shape=(n, n), dtype=np.float64)
        transition_t = (sp.diags_array(inv) @ adjacency).T.tocsr()  # transposed once
        return out, lambda x: transition_t @ x
    normalized = weight * inv[src]
    return out, lambda x: np.bincount(dst, weights=x[src] * normalized, minlength=n)


def pagerank(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray,
    personalization: np.ndarray | None,
    *,
    alpha: float,
    max_iter: int,
    tol: float,
) -> np.ndarray:
    """networkx.pagerank semantics on arrays; parallel edges add their weights."""
    if n == 0:
        return np.zeros(0)
    out, step = _transition(n, src, dst, weight)
    if personalization is None or personalization.sum() <= 0:
        p = np.full(n, 1.0 / n)
    else:
        p = personalization / personalization.sum()
    dangling = out == 0
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        last = x
        x = alpha * (step(x) + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            break
    return x


@dataclass(frozen=True, slots=True)
class RankItem:
    score: float
    path: str
    symbol: int
    """Index into the file's symbols, or -1 for a file shown by name only."""


@dataclass(frozen=True, slots=True)
class Ranking:
    items: tuple[RankItem, ...]
    """The best items, best first (at most the ``limit`` asked for)."""
    file_scores: Mapping[str, float]
    reasons: Mapping[str, tuple[str, ...]]
    total_items: int
    """How many items the full ranking has (more than ``items`` when limited)."""


def rank(
    graph: RepoGraph,
    tags: Mapping[str, FileTags],
    *,
    chat_files: Sequence[str],
    mentioned_files: Sequence[str],
    mentioned_idents: Sequence[str],
    settings: Settings,
    limit: int | None = None,
) -> Ranking:
    """Rank every file and definition for one request; return the best ``limit`` items."""
    n = len(graph.files)
    index = graph.index
    chat = {index[f] for f in chat_files if f in index}
    mentioned_f = {index[f] for f in mentioned_files if f in index}
    idents = set(mentioned_idents)
    idents_lower = {i.lower() for i in idents}
    reasons: dict[int, list[str]] = {}

    def because(fi: int, why: str) -> None:
        reasons.setdefault(fi, []).append(why)

    weights = graph.edge_weight.copy()
    for ident in idents:
        rows = graph.edges_by_ident.get(graph.ident_index.get(ident, -1))
        if rows is not None:
            weights[rows] *= settings.mentioned_ident_weight
    for fi in chat:
        rows = graph.edges_by_src.get(fi)
        if rows is not None:
            weights[rows] *= settings.chat_file_reference_weight

    personal = np.zeros(n)
    for fi in chat:
        personal[fi] += settings.chat_file_personalization
        because(fi, "chat file")
    for fi in mentioned_f:
        personal[fi] += settings.mentioned_file_personalization
        because(fi, "mentioned file")
    for ident in idents:
        for fi in graph.definers.get(ident, ()):
            personal[fi] += settings.mentioned_ident_definer_personalization
            because(fi, f"defines mentioned '{ident}'")
    # Files with an edge *into* a chat file: its callers, importers and tests.
    chat_users = (
        _chat_users(graph, chat)
        if chat and (settings.chat_dependent_personalization or settings.chat_dependent_boost)
        else []
    )
    if settings.chat_dependent_personalization:
        for fi in chat_users:
            personal[fi] += settings.chat_dependent_personalization
            because(fi, "references a chat file")
    if idents_lower:
        for fi, path in enumerate(graph.files):
            posix = PurePosixPath(path)
            hit = ({part.lower() for part in posix.parts} | {posix.stem.lower()}) & idents_lower
            if hit:
                personal[fi] += settings.path_match_personalization
                because(fi, f"path matches '{sorted(hit)[0]}'")

    # The teleport that reaches every file goes to each in proportion to its path weight: many
    # small test fixtures otherwise collect PageRank by their number alone (this repository's
    # own first map was mostly language fixtures).
    everyone = (
        graph.path_multiplier if settings.path_weighted_teleport and graph.path_multiplier.sum() > 0 else np.ones(n)
    )
    if personal.any() and settings.uniform_personalization_share > 0:
        # A little teleport to every file: files the request's files cannot reach still get
        # their structural rank, so a large budget spreads instead of digging into few files.
        share = settings.uniform_personalization_share
        personal = (1 - share) * personal / personal.sum() + share * everyone / everyone.sum()
    elif not personal.any() and settings.path_weighted_teleport:
        personal = everyone.copy()
    pair_of_edge, pair_src, pair_dst = graph.pairs
    pair_weight = np.bincount(pair_of_edge, weights=weights, minlength=len(pair_src)) if len(weights) else weights
    x = pagerank(
        n,
        pair_src,
        pair_dst,
        pair_weight,
        personal if personal.any() else None,
        alpha=settings.pagerank_damping,
        max_iter=settings.pagerank_max_iterations,
        tol=settings.pagerank_tolerance,
    )

    multipliers = graph.path_multiplier.copy()
    for fi in mentioned_f:
        multipliers[fi] *= settings.mentioned_file_boost
    if chat and settings.chat_neighbor_boost:
        for fi in chat:
            rows = graph.edges_by_src.get(fi)
            if rows is None:
                continue
            for di in set(graph.edge_dst[rows].tolist()) - chat:
                multipliers[di] += settings.chat_neighbor_boost * boost_scale(graph.files[di], settings)
                because(di, "referenced by a chat file")
    if settings.chat_dependent_boost:
        # The other direction: files that use a chat file (an edit to it may have to reach them).
        for si in chat_users:
            multipliers[si] += settings.chat_dependent_boost * boost_scale(graph.files[si], settings)
            because(si, "references a chat file")
    file_score = x * multipliers

    # Rank flows from each file along its out-edges to the definitions it uses.
    n_idents = max(1, len(graph.idents))
    definition_keys = np.zeros(0, dtype=np.int64)
    definition_rank: np.ndarray = np.zeros(0)
    if len(weights):
        out = np.bincount(graph.edge_src, weights=weights, minlength=n)
        src_out = out[graph.edge_src]
        flow = x[graph.edge_src] * weights / np.where(src_out > 0, src_out, 1.0)
        flow *= multipliers[graph.edge_dst]
        edge_def, definition_keys = graph.definition_keys
        definition_rank = np.bincount(edge_def, weights=flow, minlength=len(definition_keys))

    # Score every symbol: its definition's rank plus a share of its file's rank.
    counts = np.bincount(graph.symbol_file, minlength=n).astype(np.float64)
    base = settings.unreferenced_definition_share * file_score / np.where(counts > 0, counts, 1.0)
    scores = base[graph.symbol_file].copy() if len(graph.symbol_file) else np.zeros(0)
    has_ident = graph.symbol_ident >= 0
    if has_ident.any() and len(definition_keys):
        keys = graph.symbol_file[has_ident].astype(np.int64) * n_idents + graph.symbol_ident[has_ident]
        pos = np.searchsorted(definition_keys, keys)
        pos_clipped = np.minimum(pos, len(definition_keys) - 1)
        found = definition_keys[pos_clipped] == keys
        scores[np.flatnonzero(has_ident)[found]] += definition_rank[pos_clipped[found]]
    if idents:
        boost = np.fromiter((name in idents for name in graph.symbol_names), dtype=bool, count=len(graph.symbol_names))
        scores[boost] *= settings.mentioned_definition_boost
        if settings.pin_mentioned_definitions and boost.any():
            # What the user named is shown first, whatever the graph thinks of it.
            scores[boost] += scores.max()
    if settings.file_symbol_decay < 1.0 and len(scores):
        scores = _decay_within_files(scores, graph.symbol_file, settings.file_symbol_decay)
    keep = np.ones(len(scores), dtype=bool)
    for fi in chat:
        keep[graph.symbol_file == fi] = False

    # Files without definitions are shown by name, ranked by a share of their rank.
    bare = [fi for fi in range(n) if counts[fi] == 0 and fi not in chat]
    bare_scores = settings.unreferenced_definition_share * file_score[bare] if bare else np.zeros(0)
    all_scores = np.concatenate([np.where(keep, scores, -np.inf), bare_scores])
    total = int(keep.sum()) + len(bare)
    take = total if limit is None else min(limit, total)
    order = np.argsort(-all_scores, kind="stable")[:take]
    n_sym = len(scores)
    items = []
    for k in order.tolist():
        if k < n_sym:
            items.append(RankItem(float(all_scores[k]), graph.files[graph.symbol_file[k]], int(graph.symbol_local[k])))
        else:
            fi = bare[k - n_sym]
            items.append(RankItem(float(all_scores[k]), graph.files[fi], -1))
    why = {
        path: tuple(dict.fromkeys([*reasons.get(fi, ()), *graph.path_reasons[fi]]))
        for fi, path in enumerate(graph.files)
        if fi in reasons or graph.path_reasons[fi]
    }
    return Ranking(
        items=tuple(items),
        file_scores=dict(zip(graph.files, file_score.tolist(), strict=True)),
        reasons=why,
        total_items=total,
    )


def _chat_users(graph: RepoGraph, chat: set[int]) -> list[int]:
    """Files (not chat files) with at least one edge into a chat file, in index order."""
    chat_ids = list(chat)
    into_chat = np.isin(graph.edge_dst, chat_ids) & ~np.isin(graph.edge_src, chat_ids)
    return sorted(set(graph.edge_src[into_chat].tolist()))


def _decay_within_files(scores: np.ndarray, symbol_file: np.ndarray, decay: float) -> np.ndarray:
    """Multiply the k-th best symbol of each file (k = 0, 1, ...) by ``decay ** k``.

    Diminishing returns per file: the tenth definition of the best file is worth less to a
    model than the best definition of the next file, so a budget covers more files.
    """
    order = np.lexsort((-scores, symbol_file))  # by file, best first within a file
    files_sorted = symbol_file[order]
    starts = np.flatnonzero(np.r_[True, files_sorted[1:] != files_sorted[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    k = np.arange(len(order)) - run_start
    out = scores.copy()
    out[order] = scores[order] * np.power(decay, k)
    return out
