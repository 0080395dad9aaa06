"""Personalized PageRank over the repository graph, spread to definitions.

Pure computation. Per request: edge weights get the request's multipliers
(mentioned identifiers, edges leaving chat files), files get personalization
(chat, mentioned, defining a mentioned identifier, path matching a mention),
PageRank runs on the weighted adjacency, each file's rank flows along its
out-edges to the (file, identifier) definitions it uses, and path multipliers
(tests, vendored, generated down; entry points up) shape the result.

:func:`pagerank` is the power iteration of ``networkx.pagerank`` (same dangling
and personalization semantics; ``tests/test_rank.py`` checks equality) on a
scipy CSR matrix, so a warm re-rank costs milliseconds instead of rebuilding
a networkx graph per request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from .graph import RepoGraph
from .model import FileTags
from .settings import Settings

_TEST_DIR = re.compile(r"(^|/)(tests?|testing|__tests__|spec|specs|test_?data|fixtures)/", re.I)
_TEST_FILE = re.compile(
    r"(^test_.*|.*_test\.[^.]+$|.*_tests?\.py$|.*\.(test|spec)\.[jt]sx?$|.*Tests?\.(java|kt|cs|swift)$|conftest\.py$)"
)
_VENDOR_DIR = re.compile(r"(^|/)(vendor|vendored|third_party|third-party|external|extern|deps|_vendor)/", re.I)
_GENERATED = re.compile(
    r"(_pb2(_grpc)?\.pyi?$|\.pb\.(go|cc|h)$|\.generated\.|\.g\.dart$|_generated\.|(^|/)(gen|generated)/|\.min\.js$)"
)
_ENTRY_POINT = re.compile(r"^(main|__main__|cli|app|index|server|manage|lib|mod)\.[^.]+$")


def path_multiplier(path: str, settings: Settings) -> tuple[float, tuple[str, ...]]:
    """How much a file's path alone moves its rank, and why."""
    name = PurePosixPath(path).name
    mult = 1.0
    why: list[str] = []
    if _TEST_DIR.search(path) or _TEST_FILE.match(name):
        mult *= settings.test_path_weight
        why.append(f"test path x{settings.test_path_weight:g}")
    if _VENDOR_DIR.search(path):
        mult *= settings.vendor_path_weight
        why.append(f"vendored path x{settings.vendor_path_weight:g}")
    if _GENERATED.search(path):
        mult *= settings.generated_path_weight
        why.append(f"generated code x{settings.generated_path_weight:g}")
    if _ENTRY_POINT.match(name):
        mult *= settings.entry_point_weight
        why.append(f"entry point x{settings.entry_point_weight:g}")
    return mult, tuple(why)


def pagerank(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
             personalization: np.ndarray | None, *, alpha: float, max_iter: int,
             tol: float) -> np.ndarray:
    """networkx.pagerank semantics on arrays; parallel edges add their weights."""
    if n == 0:
        return np.zeros(0)
    adjacency = sp.csr_array((weight, (src, dst)), shape=(n, n), dtype=np.float64)
    out = np.asarray(adjacency.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=out != 0)
    transition = sp.diags_array(inv) @ adjacency
    if personalization is None or personalization.sum() <= 0:
        p = np.full(n, 1.0 / n)
    else:
        p = personalization / personalization.sum()
    dangling = out == 0
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        last = x
        x = alpha * (x @ transition + x[dangling].sum() * p) + (1 - alpha) * p
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
    file_scores: Mapping[str, float]
    reasons: Mapping[str, tuple[str, ...]]
    weights_used: np.ndarray
    """Per-edge request weights (same order as the graph's edges)."""


def rank(graph: RepoGraph, tags: Mapping[str, FileTags], *, chat_files: Sequence[str],
         mentioned_files: Sequence[str], mentioned_idents: Sequence[str],
         settings: Settings) -> Ranking:
    n = len(graph.files)
    index = graph.index
    chat = {index[f] for f in chat_files if f in index}
    mentioned_f = {index[f] for f in mentioned_files if f in index}
    idents = set(mentioned_idents)
    idents_lower = {i.lower() for i in idents}
    reasons: dict[str, list[str]] = {f: [] for f in graph.files}

    weights = graph.edge_weight.copy()
    for ident in idents:
        ii = graph.ident_index.get(ident)
        if ii is not None:
            weights[graph.edges_by_ident[ii]] *= settings.mentioned_ident_weight
    for fi in chat:
        rows = graph.edges_by_src.get(fi)
        if rows is not None:
            weights[rows] *= settings.chat_file_reference_weight

    personal = np.zeros(n)
    for fi in chat:
        personal[fi] += settings.chat_file_personalization
        reasons[graph.files[fi]].append("chat file")
    for fi in mentioned_f:
        personal[fi] += settings.mentioned_file_personalization
        reasons[graph.files[fi]].append("mentioned file")
    for ident in idents:
        for fi in graph.definers.get(ident, ()):
            personal[fi] += settings.mentioned_ident_definer_personalization
            reasons[graph.files[fi]].append(f"defines mentioned '{ident}'")
    if idents_lower:
        for fi, path in enumerate(graph.files):
            parts = {p.lower() for p in PurePosixPath(path).parts}
            parts |= {PurePosixPath(path).stem.lower()}
            hit = parts & idents_lower
            if hit:
                personal[fi] += settings.path_match_personalization
                reasons[path].append(f"path matches '{sorted(hit)[0]}'")

    x = pagerank(n, graph.edge_src, graph.edge_dst, weights,
                 personal if personal.any() else None, alpha=settings.pagerank_damping,
                 max_iter=settings.pagerank_max_iterations, tol=settings.pagerank_tolerance)

    multipliers = np.ones(n)
    for fi, path in enumerate(graph.files):
        mult, why = path_multiplier(path, settings)
        multipliers[fi] = mult
        reasons[path].extend(why)
    if chat and settings.chat_neighbor_boost:
        for fi in chat:
            rows = graph.edges_by_src.get(fi)
            if rows is None:
                continue
            for di in set(graph.edge_dst[rows].tolist()) - chat:
                multipliers[di] += settings.chat_neighbor_boost
                reasons[graph.files[di]].append("referenced by a chat file")
    file_score = x * multipliers

    # Rank flows from each file along its out-edges to the definitions it uses.
    out = np.bincount(graph.edge_src, weights=weights, minlength=n) if len(weights) else np.zeros(n)
    definition_rank: dict[tuple[int, str], float] = {}
    if len(weights):
        flow = x[graph.edge_src] * weights / np.where(out[graph.edge_src] > 0, out[graph.edge_src], 1.0)
        flow *= multipliers[graph.edge_dst]
        key = graph.edge_dst.astype(np.int64) * max(1, len(graph.idents)) + graph.edge_ident
        uniq, inverse = np.unique(key, return_inverse=True)
        sums = np.bincount(inverse, weights=flow)
        n_idents = max(1, len(graph.idents))
        for k, value in zip(uniq.tolist(), sums.tolist(), strict=True):
            definition_rank[(k // n_idents, graph.idents[k % n_idents])] = value

    items: list[RankItem] = []
    share = settings.unreferenced_definition_share
    boost = settings.mentioned_definition_boost
    for path, file_tags in tags.items():
        fi = index.get(path)
        if fi is None or fi in chat:
            continue
        symbols = file_tags.symbols
        if not symbols:
            items.append(RankItem(float(file_score[fi]) * share, path, -1))
            continue
        base = float(file_score[fi]) * share / len(symbols)
        for si, sym in enumerate(symbols):
            score = base + definition_rank.get((fi, sym.name), 0.0)
            if sym.name in idents:
                score *= boost
            items.append(RankItem(score, path, si))
    items.sort(key=lambda it: (-it.score, it.path, it.symbol))
    return Ranking(
        items=tuple(items),
        file_scores={path: float(file_score[i]) for i, path in enumerate(graph.files)},
        reasons={k: tuple(dict.fromkeys(v)) for k, v in reasons.items() if v},
        weights_used=weights,
    )
