"""The repository graph: files as nodes, references as weighted, labelled edges.

An edge ``a --ident--> b`` says file ``a`` uses identifier ``ident`` that file
``b`` defines. Static edges come from name matching (``Provenance.NAME_MATCH``):
every file defining the name is a candidate, which is exactly the ambiguity a
source that resolves names (a language server, a SCIP index) settles: a resolved
(file, identifier) pair replaces its name matches with edges to exactly the
files it resolved to, each carrying the provenance the merge gave it (the
source's name, or a policy's: :mod:`hybridmap.policies`).

The graph is kept as parallel arrays (one row per (src, dst, ident) edge), which
is what ranking needs per request, and is exported as a :mod:`networkx`
``MultiDiGraph`` on demand (:meth:`RepoGraph.to_networkx`) with the same edges,
weights and provenance. Building it is pure: no disk, no globals.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .model import FileTags, Pair, Provenance
from .settings import Settings

#: The provenances every graph lists first (in ``edge_counts_by_provenance`` even at zero): the
#: static guess and the language servers' answers. Others follow in the order first met.
BASE_PROVENANCES: tuple[str, ...] = (Provenance.NAME_MATCH, Provenance.LSP)
NAME_MATCH_CODE = 0


def is_well_named(ident: str, min_length: int) -> bool:
    """snake_case, kebab-case or camelCase names of some length carry meaning."""
    if len(ident) < min_length:
        return False
    has_alpha = any(c.isalpha() for c in ident)
    snake_or_kebab = ("_" in ident.strip("_") or "-" in ident) and has_alpha
    camel = any(c.isupper() for c in ident) and any(c.islower() for c in ident)
    return snake_or_kebab or camel


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
    symbol_names: tuple[str, ...] = ()
    provenances: tuple[str, ...] = BASE_PROVENANCES
    """Provenance names; ``edge_provenance`` indexes this."""

    def provenance(self, row: int) -> str:
        """The provenance of edge ``row``."""
        return self.provenances[int(self.edge_provenance[row])]

    @cached_property
    def index(self) -> dict[str, int]:
        return {path: i for i, path in enumerate(self.files)}

    @cached_property
    def ident_index(self) -> dict[str, int]:
        return {ident: i for i, ident in enumerate(self.idents)}

    @cached_property
    def edges_by_ident(self) -> dict[int, np.ndarray]:
        order = np.argsort(self.edge_ident, kind="stable")
        sorted_idents = self.edge_ident[order]
        bounds = np.flatnonzero(np.diff(sorted_idents)) + 1
        groups = np.split(order, bounds)
        return {int(self.edge_ident[g[0]]): g for g in groups if len(g)}

    @cached_property
    def edges_by_src(self) -> dict[int, np.ndarray]:
        order = np.argsort(self.edge_src, kind="stable")
        bounds = np.flatnonzero(np.diff(self.edge_src[order])) + 1
        return {int(self.edge_src[g[0]]): g for g in np.split(order, bounds) if len(g)}

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pair index of each edge, pair src, pair dst): edges aggregated per file pair."""
        n = max(1, len(self.files))
        key = self.edge_src.astype(np.int64) * n + self.edge_dst
        uniq, inverse = np.unique(key, return_inverse=True)
        return inverse, (uniq // n).astype(np.int32), (uniq % n).astype(np.int32)

    @cached_property
    def definition_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """(index of each edge's (dst, ident) definition, the sorted unique keys)."""
        n_idents = max(1, len(self.idents))
        key = self.edge_dst.astype(np.int64) * n_idents + self.edge_ident
        uniq, inverse = np.unique(key, return_inverse=True)
        return inverse, uniq

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


def definer_counts(tags: Mapping[str, FileTags]) -> dict[str, int]:
    """identifier -> number of files defining it."""
    counts: Counter[str] = Counter()
    for file_tags in tags.values():
        counts.update({sym.name for sym in file_tags.symbols})
    return dict(counts)


def build_graph(
    tags: Mapping[str, FileTags], settings: Settings, resolved: Mapping[Pair, Mapping[str, str]] | None = None
) -> RepoGraph:
    """The graph over ``tags`` (path -> tags).

    ``resolved`` maps (source path, identifier) to the files its uses were resolved to, each
    with the edge's provenance (:data:`~hybridmap.model.ResolvedEdges`, from the merge). Those
    pairs get edges to exactly those files (none when resolved outside the repository); every
    other use is name-matched to all files defining the name.
    """
    files = tuple(sorted(tags))
    index = {path: i for i, path in enumerate(files)}
    definers = _definers(tags, index)
    edges = _Edges(settings, definers, index)
    for path, file_tags in tags.items():
        edges.add_file(path, file_tags, resolved or {})
    sym_file, sym_local, sym_ident, sym_names = _symbol_columns(files, tags, edges.ident_ids)
    return RepoGraph(
        files=files,
        idents=tuple(sorted(edges.ident_ids, key=edges.ident_ids.__getitem__)),
        edge_src=np.asarray(edges.src, dtype=np.int32),
        edge_dst=np.asarray(edges.dst, dtype=np.int32),
        edge_ident=np.asarray(edges.idn, dtype=np.int32),
        edge_count=np.asarray(edges.cnt, dtype=np.int32),
        edge_weight=np.asarray(edges.wgt, dtype=np.float64),
        edge_provenance=np.asarray(edges.prov, dtype=np.int16),
        definers=definers,
        symbol_file=np.asarray(sym_file, dtype=np.int32),
        symbol_local=np.asarray(sym_local, dtype=np.int32),
        symbol_ident=np.asarray(sym_ident, dtype=np.int64),
        symbol_names=tuple(sym_names),
        provenances=tuple(edges.provenance_codes),
    )


def _definers(tags: Mapping[str, FileTags], index: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
    """identifier -> sorted indices of the files defining it."""
    sets: dict[str, set[int]] = defaultdict(set)
    for path, file_tags in tags.items():
        fi = index[path]
        for sym in file_tags.symbols:
            sets[sym.name].add(fi)
    return {name: tuple(sorted(s)) for name, s in sets.items()}


class _Edges:
    """The edge pass: one row per (src, dst, ident), in parallel lists."""

    def __init__(self, settings: Settings, definers: Mapping[str, tuple[int, ...]], index: Mapping[str, int]):
        self._settings = settings
        self._definers = definers
        self._index = index
        self.provenance_codes: dict[str, int] = {name: code for code, name in enumerate(BASE_PROVENANCES)}
        self.ident_ids: dict[str, int] = {}
        self._ident_mult: dict[str, float] = {}
        self.src: list[int] = []
        self.dst: list[int] = []
        self.idn: list[int] = []
        self.cnt: list[int] = []
        self.wgt: list[float] = []
        self.prov: list[int] = []

    def _targets(
        self, name: str, resolved_targets: Mapping[str, str] | None
    ) -> tuple[tuple[int, ...], tuple[int, ...] | None, int]:
        """(target files, their provenance codes or None for name matches, definer count)."""
        if resolved_targets is not None:
            kept = sorted((self._index[t], p) for t, p in resolved_targets.items() if t in self._index)
            targets = tuple(t for t, _ in kept)  # empty: resolved outside the repository
            codes = tuple(self.provenance_codes.setdefault(p, len(self.provenance_codes)) for _, p in kept)
            return targets, codes, len(self._definers.get(name, targets))
        targets = self._definers.get(name, ())
        if len(targets) > self._settings.max_definers_per_ident:
            return (), None, 0  # no signal, and a quadratic fan-out
        return targets, None, len(targets)

    def add_file(self, path: str, file_tags: FileTags, resolved: Mapping[Pair, Mapping[str, str]]) -> None:
        si = self._index[path]
        self_weight = self._settings.self_reference_weight
        for name, count in Counter(file_tags.ref_names).items():
            targets, codes, definer_count = self._targets(name, resolved.get((path, name)))
            if not targets:
                continue
            mult = self._ident_mult.get(name)
            if mult is None:
                mult = self._ident_mult[name] = ident_weight(name, definer_count, self._settings)
                self.ident_ids[name] = len(self.ident_ids)
            base = mult * math.sqrt(count)
            ii = self.ident_ids[name]
            for position, di in enumerate(targets):
                weight = base if di != si else base * self_weight
                if weight <= 0.0:
                    continue
                self.src.append(si)
                self.dst.append(di)
                self.idn.append(ii)
                self.cnt.append(count)
                self.wgt.append(weight)
                self.prov.append(NAME_MATCH_CODE if codes is None else codes[position])


def _symbol_columns(
    files: tuple[str, ...], tags: Mapping[str, FileTags], ident_ids: Mapping[str, int]
) -> tuple[list[int], list[int], list[int], list[str]]:
    """For every symbol of every file, in order: its file, its index in the file, its ident id
    (-1 when nobody references the name), its name."""
    sym_file: list[int] = []
    sym_local: list[int] = []
    sym_ident: list[int] = []
    sym_names: list[str] = []
    for fi, path in enumerate(files):
        for li, sym in enumerate(tags[path].symbols):
            sym_file.append(fi)
            sym_local.append(li)
            sym_ident.append(ident_ids.get(sym.name, -1))
            sym_names.append(sym.name)
    return sym_file, sym_local, sym_ident, sym_names
