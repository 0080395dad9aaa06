"""The repository graph: files as nodes, references as weighted, labelled edges.

An edge ``a --ident--> b`` says file ``a`` uses identifier ``ident`` that file
``b`` defines. Static edges come from name matching (``Provenance.NAME_MATCH``):
every file defining the name is a candidate, which is exactly the ambiguity a
source that resolves names (a language server, a SCIP index) settles: a resolved
(file, identifier) pair replaces its name matches with edges to exactly the
files it resolved to, each carrying the provenance the merge gave it (the
source's name, or a policy's: :mod:`hybridmap.pipeline.policies`).

The graph is kept as parallel arrays (one row per (src, dst, ident) edge), which
is what ranking needs per request, and is exported as a :mod:`networkx`
``MultiDiGraph`` on demand (:meth:`RepoGraph.to_networkx`) with the same edges,
weights and provenance. Building it is pure: no disk, no globals.

The arrays are in one canonical order whatever order the tags came in: files sorted by path,
identifiers sorted by name (an edge's ident id is the rank of its name), edges by source file,
then by the order in which the file first uses each name, then by target file. Two builds of
the same input are then equal array for array, which is what lets :mod:`hybridmap.pipeline.graph.update`
patch a graph after an edit and still hand the ranker exactly the graph a rebuild would (the
same float sums in the same order, so the same ranking, near-ties included).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np

from ...model import FileTags, Pair, Provenance
from ...settings import Settings
from .name_edges import ident_weight, name_matched_rows

#: The provenances every graph lists first (in ``edge_counts_by_provenance`` even at zero): the
#: static guess and the language servers' answers. Others follow in the order first met.
BASE_PROVENANCES: tuple[str, ...] = (Provenance.NAME_MATCH, Provenance.LSP)
NAME_MATCH_CODE = 0


@dataclass(frozen=True, eq=False)
class RepoGraph:
    files: tuple[str, ...]
    idents: tuple[str, ...]
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_ident: np.ndarray
    edge_count: np.ndarray
    edge_weight: np.ndarray
    """Static weight: ident multiplier x sqrt(reference count)."""
    edge_provenance: np.ndarray
    """Index into :attr:`provenances`."""
    definers: Mapping[str, tuple[int, ...]]
    """identifier -> indices of files defining it."""
    symbol_file: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    """For every symbol of every file (files in order, symbols in file order): its file index."""
    symbol_local: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    """... its index within the file's symbols."""
    symbol_ident: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """... its ident id in :attr:`idents`, or -1 when nobody references the name."""
    symbol_name: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    """... its name's number in :attr:`names` (a number per symbol, not a string: a graph patched
    after an edit carries them as an array slice, where a tuple of 1.5 M names cost an edit's map
    at 100,000 files ~50 ms of reference counting; a request's names are compared as numbers)."""
    names: NameTable = field(default_factory=lambda: NameTable())
    """The symbol names' numbering, shared with the graphs patched from this one."""
    provenances: tuple[str, ...] = BASE_PROVENANCES
    """Provenance names; ``edge_provenance`` indexes this."""

    def provenance(self, row: int) -> str:
        """The provenance of edge ``row``."""
        return self.provenances[int(self.edge_provenance[row])]

    @cached_property
    def symbol_names(self) -> tuple[str, ...]:
        """Every symbol's name, in :attr:`symbol_name`'s order (tests and inspection; a request
        reads :attr:`symbol_name` with :meth:`NameTable.numbers`)."""
        return tuple(map(self.names.names.__getitem__, self.symbol_name.tolist()))

    @cached_property
    def index(self) -> dict[str, int]:
        return {path: i for i, path in enumerate(self.files)}

    @cached_property
    def ident_index(self) -> dict[str, int]:
        return {ident: i for i, ident in enumerate(self.idents)}

    @cached_property
    def src_offsets(self) -> np.ndarray:
        """Edges of file ``i`` are rows ``src_offsets[i]:src_offsets[i + 1]`` (edges are sorted by src)."""
        return np.searchsorted(self.edge_src, np.arange(len(self.files) + 1)).astype(np.int64)

    @cached_property
    def symbol_offsets(self) -> np.ndarray:
        """Symbols of file ``i`` are rows ``symbol_offsets[i]:symbol_offsets[i + 1]`` (files in order)."""
        return np.searchsorted(self.symbol_file, np.arange(len(self.files) + 1)).astype(np.int64)

    @cached_property
    def edges_by_src(self) -> Mapping[int, np.ndarray]:
        """file index -> its out-edge rows (files with none are absent)."""
        return _RowsBySrc(self.src_offsets)

    @cached_property
    def edges_by_ident(self) -> Mapping[int, np.ndarray]:
        """ident id -> the rows using it, found when asked: a request names a few identifiers,
        and grouping every edge by identifier (a sort) cost a warm map of the standard library
        15 ms per new graph."""
        return _RowsByIdent(self.edge_ident)

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pair index of each edge, pair src, pair dst): edges aggregated per file pair, pairs
        in (src, dst) order. :mod:`~hybridmap.pipeline.graph.update` fills it in without the sort."""
        n = max(1, len(self.files))
        key = self.edge_src.astype(np.int64) * n + self.edge_dst
        uniq, inverse = np.unique(key, return_inverse=True)
        return inverse.reshape(-1), (uniq // n).astype(np.int32), (uniq % n).astype(np.int32)

    @cached_property
    def definition_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """(index of each edge's (dst, ident) definition, the sorted unique keys
        ``dst * len(idents) + ident``). :mod:`~hybridmap.pipeline.graph.update` fills it in without the sort."""
        n_idents = max(1, len(self.idents))
        key = self.edge_dst.astype(np.int64) * n_idents + self.edge_ident
        uniq, inverse = np.unique(key, return_inverse=True)
        return inverse.reshape(-1), uniq

    def dependent_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per file: how many other files have an edge into it, and how many of those have at
        least one resolved (not name-matched) edge into it; from :attr:`pairs`, which an
        update patches, so no sort of the edges per new graph (``np.unique`` over them cost
        an edit's map of the standard library 50-140 ms)."""
        return self._dependent_counts

    @cached_property
    def _dependent_counts(self) -> tuple[np.ndarray, np.ndarray]:
        of_edge, pair_src, pair_dst = self.pairs
        n = len(self.files)
        outside = pair_src != pair_dst
        resolved_rows = np.flatnonzero(self.edge_provenance != NAME_MATCH_CODE)
        resolved_pair = np.bincount(of_edge[resolved_rows], minlength=len(pair_src)) > 0
        total = np.bincount(pair_dst[outside], minlength=n)
        return total, np.bincount(pair_dst[outside & resolved_pair], minlength=n)

    def carry_dependent_counts(self, old: RepoGraph) -> None:
        """Take ``old``'s :meth:`dependent_counts` (when it made them) where they cannot differ:
        the same file pairs (an update that moved no pair keeps the arrays), no resolved dependent
        counted in ``old`` and no resolved row here (a static map's). At 100,000 files counting
        anew was ~25 ms of an edit's map."""
        held = old.__dict__.get("_dependent_counts")
        if held is None or self.pairs[1] is not old.pairs[1] or self.pairs[2] is not old.pairs[2]:
            return
        if held[1].any() or (self.edge_provenance != NAME_MATCH_CODE).any():
            return
        self.__dict__["_dependent_counts"] = held

    def edge_counts_by_provenance(self) -> dict[str, int]:
        counts = np.bincount(self.edge_provenance, minlength=len(self.provenances))
        return {str(p): int(c) for p, c in zip(self.provenances, counts, strict=True)}

    def to_networkx(self) -> Any:
        """The graph as a networkx ``MultiDiGraph``: one edge per (src, dst, ident)."""
        import networkx as nx

        graph = nx.MultiDiGraph()
        graph.add_nodes_from(self.files)
        for s, d, i, c, w, p in zip(
            self.edge_src.tolist(),
            self.edge_dst.tolist(),
            self.edge_ident.tolist(),
            self.edge_count.tolist(),
            self.edge_weight.tolist(),
            self.edge_provenance.tolist(),
            strict=True,
        ):
            graph.add_edge(
                self.files[s],
                self.files[d],
                key=self.idents[i],
                ident=self.idents[i],
                count=c,
                weight=w,
                provenance=str(self.provenances[p]),
            )
        return graph


class _RowsBySrc(Mapping[int, np.ndarray]):
    """file index -> rows of its out-edges, sliced from the offsets when asked."""

    def __init__(self, offsets: np.ndarray) -> None:
        self._offsets = offsets

    def __getitem__(self, fi: int) -> np.ndarray:
        if not 0 <= fi < len(self._offsets) - 1 or self._offsets[fi] == self._offsets[fi + 1]:
            raise KeyError(fi)
        return np.arange(self._offsets[fi], self._offsets[fi + 1])

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(np.diff(self._offsets)).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self._offsets)))


class _RowsByIdent(Mapping[int, np.ndarray]):
    """ident id -> rows using it (ascending), each found by one scan when first asked."""

    def __init__(self, edge_ident: np.ndarray) -> None:
        self._edge_ident = edge_ident
        self._found: dict[int, np.ndarray] = {}

    def __getitem__(self, ident: int) -> np.ndarray:
        rows = self._found.get(ident)
        if rows is None:
            rows = self._found[ident] = np.flatnonzero(self._edge_ident == ident)
        if not len(rows):
            raise KeyError(ident)
        return rows

    def __iter__(self) -> Iterator[int]:
        return iter(np.unique(self._edge_ident).tolist())

    def __len__(self) -> int:
        return len(np.unique(self._edge_ident))


def definer_counts(tags: Mapping[str, FileTags]) -> dict[str, int]:
    """identifier -> number of files defining it.

    Asked for again after every edit (the API hands it to the sources), so the last call's
    per-file names are kept and only files whose tags object changed are re-read: the full
    count was ~15 ms of an edit's map on the standard library. The result is the caller's: a
    copy of the kept counts, which never lose a key (a dict that did is copied key by key, one
    that did not as one block: several ms against ~0.1 ms for 43k names); names no file defines
    any more are kept at 0 there and deleted from the copy."""
    global _DEFINED
    with _DEFINED_LOCK:
        names_of, counts, zeros = _DEFINED
        changed = [
            path for path, file_tags in tags.items() if (held := names_of.get(path)) is None or held[0] is not file_tags
        ]
        added = sum(1 for path in changed if path not in names_of)
        gone = [path for path in names_of if path not in tags] if len(tags) - added != len(names_of) else []
        if 4 * (len(changed) + len(gone)) > len(tags) or len(zeros) > 4096:  # count from scratch
            names_of, counts, zeros, changed, gone = {}, {}, set(), list(tags), []
            _DEFINED = (names_of, counts, zeros)
        for path in gone:
            _count_names(counts, zeros, names_of.pop(path)[1], -1)
        for path in changed:
            held = names_of.get(path)
            if held is not None:
                _count_names(counts, zeros, held[1], -1)
            names = frozenset(sym.name for sym in tags[path].symbols)
            _count_names(counts, zeros, names, 1)
            names_of[path] = (tags[path], names)
        result = dict(counts)
        for name in zeros:
            del result[name]
        return result


def _count_names(counts: dict[str, int], zeros: set[str], names: frozenset[str], step: int) -> None:
    for name in names:
        left = counts[name] = counts.get(name, 0) + step
        if left:
            zeros.discard(name)
        else:
            zeros.add(name)


#: The last :func:`definer_counts` call's per-file names and counts (one at a time, any caller).
_DEFINED: tuple[dict[str, tuple[FileTags, frozenset[str]]], dict[str, int], set[str]] = ({}, {}, set())
_DEFINED_LOCK = threading.Lock()


RefCounts = dict[str, int]
"""One file's references: name -> how many times it is used (a ``Counter``)."""


@dataclass(frozen=True, slots=True)
class EdgeColumns:
    """Edge rows in parallel arrays (the :class:`RepoGraph` fields of the same names)."""

    src: np.ndarray
    dst: np.ndarray
    ident: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    provenance: np.ndarray

    def take(self, rows: np.ndarray) -> EdgeColumns:
        return EdgeColumns(*(column[rows] for column in self.columns()))

    def columns(self) -> tuple[np.ndarray, ...]:
        return (self.src, self.dst, self.ident, self.count, self.weight, self.provenance)


class NameTable:
    """Symbol names numbered in the order first met. Only ever added to, so the numbers a graph
    holds stay valid while a graph patched from it numbers new names; one per rebuilt graph,
    shared by the graphs patched from it (the builder makes one graph at a time)."""

    __slots__ = ("_numbers", "names")

    def __init__(self, numbers: dict[str, int] | None = None) -> None:
        self._numbers: dict[str, int] = numbers if numbers is not None else {}
        self.names: list[str] = list(self._numbers)

    def number(self, name: str) -> int:
        """``name``'s number, given it now when new."""
        found = self._numbers.get(name)
        if found is None:
            found = self._numbers[name] = len(self.names)
            self.names.append(name)
        return found

    def numbers(self, names: Iterable[str]) -> np.ndarray:
        """The numbers of those of ``names`` already numbered (a name no graph holds matches no
        symbol), for ``np.isin`` against :attr:`RepoGraph.symbol_name`."""
        got = self._numbers.get
        return np.array(sorted({n for n in map(got, names) if n is not None}), np.int64)


@dataclass(frozen=True, slots=True)
class SymbolColumns:
    """For every symbol of every file (files in order, symbols in file order): its file, its
    index in the file, its ident id (-1 when no edge uses the name), its name's number in
    ``names``."""

    file: np.ndarray
    local: np.ndarray
    ident: np.ndarray
    name: np.ndarray
    names: NameTable


def build_graph(
    tags: Mapping[str, FileTags], settings: Settings, resolved: Mapping[Pair, Mapping[str, str]] | None = None
) -> RepoGraph:
    """The graph over ``tags`` (path -> tags).

    ``resolved`` maps (source path, identifier) to the files its uses were resolved to, each
    with the edge's provenance (:data:`~hybridmap.model.ResolvedEdges`, from the merge). Those
    pairs get edges to exactly those files (none when resolved outside the repository); every
    other use is name-matched to all files defining the name.
    """
    return build_graph_counted(tags, settings, resolved)[0]


def build_graph_counted(
    tags: Mapping[str, FileTags], settings: Settings, resolved: Mapping[Pair, Mapping[str, str]] | None = None
) -> tuple[RepoGraph, dict[str, RefCounts], np.ndarray]:
    """:func:`build_graph`, each file's reference counts and each edge row's position of its name
    among its file's names (what :mod:`hybridmap.pipeline.graph.update` keeps to patch the graph)."""
    files = tuple(sorted(tags))
    index = {path: i for i, path in enumerate(files)}
    names, per_file = _symbol_names(files, tags)
    table, numbers = _numbered(names)
    definers = definers_from_columns(numbers, per_file, table)
    refs: dict[str, RefCounts] = {path: Counter(tags[path].ref_names) for path in files}
    if not resolved:  # every use name-matched: the whole pass at once
        idents, rows, pos = name_matched_rows([refs[path] for path in files], definers, settings)
        columns = EdgeColumns(*rows, np.full(len(rows[0]), NAME_MATCH_CODE, np.int16))
        provenances = BASE_PROVENANCES
    else:
        edges = EdgeRows(settings, definers, index)
        for si, path in enumerate(files):
            for at, (name, count) in enumerate(refs[path].items()):
                edges.add(si, name, count, resolved.get((path, name)), at)
        idents, columns = edges.canonical()
        pos, provenances = np.asarray(edges.pos, dtype=np.int32), edges.provenances()
    symbols = _symbol_columns(names, numbers, per_file, {name: i for i, name in enumerate(idents)}, table)
    return make_graph(files, idents, columns, definers, symbols, provenances), refs, pos


def make_graph(
    files: tuple[str, ...],
    idents: tuple[str, ...],
    edges: EdgeColumns,
    definers: Mapping[str, tuple[int, ...]],
    symbols: SymbolColumns,
    provenances: tuple[str, ...],
) -> RepoGraph:
    return RepoGraph(
        files=files,
        idents=idents,
        edge_src=edges.src,
        edge_dst=edges.dst,
        edge_ident=edges.ident,
        edge_count=edges.count,
        edge_weight=edges.weight,
        edge_provenance=edges.provenance,
        definers=definers,
        symbol_file=symbols.file,
        symbol_local=symbols.local,
        symbol_ident=symbols.ident,
        symbol_name=symbols.name,
        names=symbols.names,
        provenances=provenances,
    )


def _symbol_names(files: tuple[str, ...], tags: Mapping[str, FileTags]) -> tuple[list[str], np.ndarray]:
    """Every symbol's name, files in order, symbols in file order; and each file's count of them.
    One pass over the symbols for the definers and the symbol columns (two passes of a Python loop
    per symbol were ~2.4 s of a 100,000-file graph)."""
    per_file = np.fromiter((len(tags[path].symbols) for path in files), np.int64, len(files))
    return [sym.name for path in files for sym in tags[path].symbols], per_file


def _numbered(names: list[str]) -> tuple[NameTable, np.ndarray]:
    """The names' table (in the order first met) and each name's number."""
    numbers = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return NameTable(numbers), np.fromiter(map(numbers.__getitem__, names), np.int32, len(names))


def definers_from_columns(numbers: np.ndarray, per_file: np.ndarray, table: NameTable) -> dict[str, tuple[int, ...]]:
    """identifier -> sorted indices of the files defining it (``numbers``: each symbol's name's
    number in ``table``, ``per_file``: from :func:`_symbol_names`), the identifiers in the order
    first met."""
    ids = numbers.astype(np.int64)
    owner = np.repeat(np.arange(len(per_file), dtype=np.int64), per_file)
    order = np.lexsort((owner, ids))
    ids, owner = ids[order], owner[order]
    first = np.ones(len(ids), bool)  # one entry per (identifier, file)
    first[1:] = (ids[1:] != ids[:-1]) | (owner[1:] != owner[:-1])
    ids, held = ids[first], owner[first].tolist()
    bounds = np.searchsorted(ids, np.arange(len(table.names) + 1)).tolist()
    # Most names have one definer: each file's one-tuple is made once and shared by its names,
    # and every tuple holds the same int objects (at 100,000 files 838 k (name, file) entries
    # were 60 MB of tuples and ints).
    alone = [(i,) for i in range(len(per_file))]
    out: dict[str, tuple[int, ...]] = {}
    for i, name in enumerate(table.names):
        lo, hi = bounds[i], bounds[i + 1]
        out[name] = alone[held[lo]] if hi - lo == 1 else tuple([alone[f][0] for f in held[lo:hi]])
    return out


def _symbol_columns(
    names: list[str], numbers: np.ndarray, per_file: np.ndarray, ident_ids: Mapping[str, int], table: NameTable
) -> SymbolColumns:
    """The symbol columns (``names``, ``per_file``: from :func:`_symbol_names`; ``numbers``: the
    names' in ``table``)."""
    firsts = np.cumsum(per_file) - per_file
    return SymbolColumns(
        np.repeat(np.arange(len(per_file), dtype=np.int32), per_file),
        (np.arange(len(names), dtype=np.int64) - np.repeat(firsts, per_file)).astype(np.int32),
        np.fromiter(map(ident_ids.get, names, repeat(-1)), np.int64, len(names)),
        numbers,
        table,
    )


class EdgeRows:
    """The edge pass: one row per (src, dst, ident), in parallel lists, in the order added;
    :meth:`canonical` sorts them. Each (file, identifier) is added once."""

    def __init__(
        self,
        settings: Settings,
        definers: Mapping[str, tuple[int, ...]],
        index: Mapping[str, int],
        provenances: tuple[str, ...] = BASE_PROVENANCES,
    ):
        self._settings = settings
        self._definers = definers
        self._index = index
        self.provenance_codes: dict[str, int] = {name: code for code, name in enumerate(provenances)}
        self.ident_ids: dict[str, int] = {}
        """Names with at least one row -> their id in this pass (order of first row)."""
        self._ident_mult: dict[str, float] = {}
        self.src: list[int] = []
        self.dst: list[int] = []
        self.idn: list[int] = []
        self.cnt: list[int] = []
        self.wgt: list[float] = []
        self.prov: list[int] = []
        self.pos: list[int] = []
        """Per row: the rank of its name among the names its file uses (order of first use)."""
        self._batches: list[tuple[EdgeColumns, np.ndarray]] = []
        """Rows added by :meth:`add_uses`, after the rows of the lists above."""

    def _targets(
        self, name: str, resolved_targets: Mapping[str, str] | None
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """(target files, their provenance codes or None for name matches)."""
        if resolved_targets is not None:
            kept = sorted((self._index[t], p) for t, p in resolved_targets.items() if t in self._index)
            targets = tuple(t for t, _ in kept)  # empty: resolved outside the repository
            codes = tuple(self.provenance_codes.setdefault(p, len(self.provenance_codes)) for _, p in kept)
            return targets, codes
        targets = self._definers.get(name, ())
        if len(targets) > self._settings.max_definers_per_ident:
            return (), None  # no signal, and a quadratic fan-out
        return targets, None

    def add(self, si: int, name: str, count: int, resolved_targets: Mapping[str, str] | None, pos: int = 0) -> None:
        """The rows of file ``si``'s ``count`` uses of ``name``, the ``pos``-th name it uses."""
        targets, codes = self._targets(name, resolved_targets)
        if not targets:
            return
        mult = self._ident_mult.get(name)
        if mult is None:
            # The number of files defining the name, whoever resolved this use: the weight of
            # a name is the same on every edge, whichever file was met first.
            definer_count = len(self._definers.get(name, ()))
            mult = self._ident_mult[name] = ident_weight(name, definer_count, self._settings)
        base = mult * math.sqrt(count)
        if base > 0.0 and (si not in targets or self._settings.self_reference_weight > 0.0):
            weights = [base if di != si else base * self._settings.self_reference_weight for di in targets]
            kept = targets
        else:  # the rows of weight 0 are left out
            weights = [base if di != si else base * self._settings.self_reference_weight for di in targets]
            kept = tuple(di for di, w in zip(targets, weights, strict=True) if w > 0.0)
            codes = None if codes is None else tuple(c for c, w in zip(codes, weights, strict=True) if w > 0.0)
            weights = [w for w in weights if w > 0.0]
            if not kept:
                return
        k = len(kept)
        ii = self.ident_ids.setdefault(name, len(self.ident_ids))
        self.src.extend([si] * k)
        self.dst.extend(kept)
        self.idn.extend([ii] * k)
        self.cnt.extend([count] * k)
        self.wgt.extend(weights)
        self.prov.extend([NAME_MATCH_CODE] * k if codes is None else codes)
        self.pos.extend([pos] * k)

    def add_uses(self, name: str, files: np.ndarray, counts: np.ndarray, pos: np.ndarray) -> None:
        """The rows :meth:`add` gives each of ``files`` for its ``counts[i]`` uses of ``name``, the
        ``pos[i]``-th name it uses, matched by name (no resolved targets), in one numpy pass: an
        edit that adds or removes a definer of a name re-derives that name's rows in every file
        using it (``TestCase`` in 700 of the standard library's files: 8.9 -> 2 ms per edit, with
        the places from :class:`~hybridmap.pipeline.graph.update.GraphUpdater`). The
        same rows and the same float products as :meth:`add`, as in
        :func:`~hybridmap.pipeline.graph.name_edges.name_matched_rows`; not in :meth:`canonical`
        order (the graph updater sorts the rows it derives by key)."""
        targets = self._definers.get(name, ())
        if not targets or len(targets) > self._settings.max_definers_per_ident or not len(files):
            return
        mult = self._ident_mult.get(name)
        if mult is None:
            mult = self._ident_mult[name] = ident_weight(name, len(targets), self._settings)
        k, srw = len(targets), self._settings.self_reference_weight
        base = mult * np.sqrt(counts.astype(np.float64))
        src = np.repeat(files.astype(np.int32), k)
        dst = np.tile(np.asarray(targets, dtype=np.int32), len(files))
        is_self = dst == src
        weight = np.where(is_self, np.repeat(base * srw, k), np.repeat(base, k))
        # add() keeps a file's rows whole when its weight is positive and it either has no row to
        # itself or such a row weighs something; otherwise only its rows of positive weight.
        whole = (base > 0.0) & (~is_self.reshape(len(files), k).any(axis=1) | (srw > 0.0))
        keep = np.repeat(whole, k) | (weight > 0.0)
        if not keep.any():
            return
        ii = self.ident_ids.setdefault(name, len(self.ident_ids))
        kept = int(keep.sum())
        columns = EdgeColumns(
            src[keep],
            dst[keep],
            np.full(kept, ii, np.int32),
            np.repeat(counts.astype(np.int32), k)[keep],
            weight[keep],
            np.full(kept, NAME_MATCH_CODE, np.int16),
        )
        self._batches.append((columns, np.repeat(pos.astype(np.int32), k)[keep]))

    def provenances(self) -> tuple[str, ...]:
        return tuple(self.provenance_codes)

    def columns(self) -> EdgeColumns:
        """The rows as added (those of :meth:`add_uses` last), idents as this pass's ids."""
        listed = EdgeColumns(
            np.asarray(self.src, dtype=np.int32),
            np.asarray(self.dst, dtype=np.int32),
            np.asarray(self.idn, dtype=np.int32),
            np.asarray(self.cnt, dtype=np.int32),
            np.asarray(self.wgt, dtype=np.float64),
            np.asarray(self.prov, dtype=np.int16),
        )
        if not self._batches:
            return listed
        parts = [listed.columns(), *(batch.columns() for batch, _ in self._batches)]
        return EdgeColumns(*(np.concatenate(column) for column in zip(*parts, strict=True)))

    def positions(self) -> np.ndarray:
        """Per row of :meth:`columns`: the rank of its name among its file's names."""
        listed = np.asarray(self.pos, dtype=np.int32)
        if not self._batches:
            return listed
        return np.concatenate([listed, *(pos for _, pos in self._batches)])

    def canonical(self) -> tuple[tuple[str, ...], EdgeColumns]:
        """(identifiers sorted by name, the rows with ident ids into them). Rows stay in the
        order added: by file, the names in order of first use, targets by index (the order of
        the float sums the ranker does: changing it moves scores in the last bits and reorders
        near-ties)."""
        names = sorted(self.ident_ids)
        rank = np.empty(len(names), dtype=np.int32)
        for r, name in enumerate(names):
            rank[self.ident_ids[name]] = r
        raw = self.columns()
        ident = rank[raw.ident] if len(raw.ident) else raw.ident
        return tuple(names), EdgeColumns(raw.src, raw.dst, ident, raw.count, raw.weight, raw.provenance)
