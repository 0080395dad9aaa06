"""Name-matched edges: a name's weight (:func:`ident_weight`), and the edge pass of a graph with
no resolved pairs for a whole repository at once, in numpy (:func:`name_matched_rows`).

:class:`~hybridmap.pipeline.graph.repo_graph.EdgeRows` adds one (file, name) at a time: what
patching a graph after an edit and a graph with resolved pairs use. A static graph of a whole
repository (every one-shot map, the first map of a process) makes the same rows here, without a
Python call per (file, name): at 100,000 files that loop was ~3 s of a warm one-shot map's ~37 s
(py-spy: ``EdgeRows.add`` 8 % and the loop around it); the whole graph went 5.6-5.9 -> 3.6-3.9 s
(``docs/benchmarks.md``, "Whole-repository passes of a one-shot map"). The rows are the same, in
the same order, with bit-identical weights (the same float products);
``tests/pipeline/test_name_edges.py`` checks both passes agree on generated repositories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat

import numpy as np

from ...languages.lexical import is_well_named
from ...settings import Settings

#: Edge rows as parallel arrays: source file, target file, ident id, uses, weight.
Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def ident_weight(ident: str, definer_count: int, settings: Settings) -> float:
    """The request-independent multiplier of an identifier (Aider's heuristics, named)."""
    weight = 1.0
    if is_well_named(ident, settings.well_named_min_length):
        weight *= settings.well_named_ident_weight
    if ident.startswith("_"):
        weight *= settings.private_ident_weight
    if definer_count > settings.common_ident_definers:
        weight *= settings.common_ident_weight
    return weight


def name_matched_rows(
    refs: Sequence[Mapping[str, int]], definers: Mapping[str, tuple[int, ...]], settings: Settings
) -> tuple[tuple[str, ...], Rows, np.ndarray]:
    """What ``EdgeRows.add`` gives for each file's names (``refs[fi]``: name -> uses, in order of
    first use) with no resolved pairs, then ``canonical``: (identifiers sorted by name, the rows
    with ident ids into them, each row's position of its name among its file's names)."""
    n_files = len(refs)
    lens = np.fromiter(map(len, refs), np.int64, n_files)
    names = list(chain.from_iterable(refs))
    uses = np.fromiter(chain.from_iterable(r.values() for r in refs), np.int64, len(names))
    firsts = np.cumsum(lens) - lens
    pos = np.arange(len(names), dtype=np.int64) - np.repeat(firsts, lens)
    src = np.repeat(np.arange(n_files, dtype=np.int64), lens)

    # The names a use can match: defined somewhere, by at most max_definers_per_ident files.
    limit = settings.max_definers_per_ident
    number: dict[str, int] = {}
    for name in dict.fromkeys(names):
        targets = definers.get(name)
        if targets and len(targets) <= limit:
            number[name] = len(number)
    named = list(number)
    name_id = np.fromiter(map(number.get, names, repeat(-1)), np.int64, len(names))
    target_lists = [definers[name] for name in named]
    sizes = np.fromiter(map(len, target_lists), np.int64, len(named))
    offsets = np.cumsum(sizes) - sizes
    flat = np.fromiter(chain.from_iterable(target_lists), np.int64, int(sizes.sum()))
    mult = np.array([ident_weight(name, len(definers[name]), settings) for name in named], np.float64)

    pairs = np.flatnonzero(name_id >= 0)  # (file, name) rows that match something
    ids = name_id[pairs]
    k = sizes[ids]
    group = np.repeat(np.arange(len(pairs)), k)
    within = np.arange(int(k.sum()), dtype=np.int64) - np.repeat(np.cumsum(k) - k, k)
    dst = flat[np.repeat(offsets[ids], k) + within]
    row_src = src[pairs][group]
    base = mult[ids] * np.sqrt(uses[pairs].astype(np.float64))
    srw = settings.self_reference_weight
    is_self = dst == row_src
    weight = np.where(is_self, base[group] * srw, base[group])
    # EdgeRows.add keeps a pair's rows whole when its weight is positive and it either has no row
    # to itself or such a row weighs something; otherwise only its rows of positive weight.
    has_self = np.zeros(len(pairs), bool)
    has_self[group[is_self]] = True
    whole = (base > 0.0) & (~has_self | (srw > 0.0))
    keep = whole[group] | (weight > 0.0)

    row_ident = ids[group][keep]
    used = np.unique(row_ident)
    used_names = [named[i] for i in used.tolist()]
    order = sorted(range(len(used_names)), key=used_names.__getitem__)
    rank = np.full(len(named), -1, np.int32)
    rank[used[order]] = np.arange(len(order), dtype=np.int32)
    kept_pairs = pairs[group[keep]]
    rows = (
        row_src[keep].astype(np.int32),
        dst[keep].astype(np.int32),
        rank[row_ident],
        uses[kept_pairs].astype(np.int32),
        weight[keep],
    )
    return tuple(used_names[i] for i in order), rows, pos[kept_pairs].astype(np.int32)
