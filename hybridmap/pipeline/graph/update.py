"""An edit updates the graph instead of rebuilding it. Pure (no disk, no globals).

:class:`GraphUpdater` keeps the last graph and what it was built from, and given the next tags
and resolved pairs returns the graph :func:`~hybridmap.pipeline.graph.repo_graph.build_graph` would build from them,
equal array for array (``tests/pipeline/test_graph_incremental.py`` checks it after random edit
sequences, with the rankings). What an edit can change, and what is re-derived for it:

* a file whose tags changed (edited, added, removed: its :class:`~hybridmap.model.FileTags`
  object is not the previous one): all its outgoing edges and its symbols;
* a name whose set of defining files changed (a definition added or removed anywhere): every
  edge of that name, from every file that uses it (found by scanning the kept reference counts
  of every file, or from a referrer index ``name -> files`` built once scanning would cost more),
  since both its targets and its weight (``common_ident_definers``, ``max_definers_per_ident``)
  follow the definers;
* a resolved (file, name) pair whose targets changed (a language server answered): that pair.

Everything else is carried: the other edge rows (file indices shifted when files came or went),
the definers, the symbol columns of unchanged files, and the graph's derived views the ranker
reads (file pairs, definition keys) are patched rather than re-sorted. Rows stay in the
canonical order (:mod:`hybridmap.pipeline.graph.repo_graph`), so the ranker's float sums run in the same order as on
a rebuilt graph. Many changed files at once (a checkout, the first map) rebuild from scratch.

Which files changed is decided by identity: the sources keep an unchanged file's ``FileTags``
object (the base source by content hash, the merge by its inputs), so comparing the two mappings
is one pass and also catches what a change set would not (a merge that refined a file).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import compress, repeat
from operator import contains
from typing import Any

import numpy as np

from ...infra.patched import changed_keys
from ...model import FileTags, Pair
from ...settings import Settings
from .repo_graph import EdgeColumns, EdgeRows, RefCounts, RepoGraph, SymbolColumns, build_graph_counted, make_graph

Resolved = Mapping[Pair, Mapping[str, str]]
_NO_PAIRS: Resolved = {}
#: Rows are ordered by (src, position of the name in the file, dst), packed in one int64 key:
#: POS_BITS for the position, and the file indices must fit what is left.
POS_BITS = 20
MAX_FILES = 1 << 21
#: A change of more than this share of the files rebuilds (a rebuild is then about as cheap).
REBUILD_SHARE = 0.25
#: Membership tests (names an edit touched x files) above which the referrer index is built
#: (once, ~50 ms on the standard library) instead of scanning each file's references (~50 ns each).
SCAN_LIMIT = 200_000


class _Rebuild(Exception):
    """The update cannot be done in place (too many changes, keys out of range): rebuild."""


@dataclass(frozen=True, slots=True)
class _Files:
    """The file side of an update: the new file table and how old indices map onto it."""

    files: tuple[str, ...]
    index: Mapping[str, int]
    remap: np.ndarray | None
    """old file index -> new (-1: removed); None when the file set did not change."""
    changed: tuple[str, ...]
    """Paths whose tags differ, sorted (added and removed ones included)."""
    added: frozenset[str]
    removed: frozenset[str]


@dataclass(frozen=True, slots=True)
class _NewRows:
    """Re-derived rows in key order, and where they go among the kept rows."""

    columns: EdgeColumns
    keys: np.ndarray
    """The new rows' :func:`_row_keys` (in the new file numbering)."""
    kept_keys: np.ndarray
    """The kept rows' :func:`_row_keys` in the new file numbering."""
    insert_at: np.ndarray
    """Index among the kept rows before which each new row goes (``np.insert``'s)."""


def changed_pairs(old: Resolved, new: Resolved) -> set[Pair]:
    """Resolved (file, name) pairs whose targets differ."""
    if old is new:
        return set()
    out = {pair for pair, targets in new.items() if (was := old.get(pair)) is not targets and was != targets}
    out.update(pair for pair in old if pair not in new)
    return out


class GraphUpdater:
    """The last graph and its inputs; :meth:`update` returns the next graph, patched when it can."""

    def __init__(self, settings: Settings, patches: bool = True) -> None:
        """``patches``: keep what an update patches from (each file's reference counts, the rows'
        keys); False in a one-shot process, whose first map is its last: every later graph is
        then rebuilt (at 100,000 files the counts were ~50 MB of a cold map's peak)."""
        self._settings = settings
        self._patches = patches
        self._graph: RepoGraph | None = None
        self._tags: Mapping[str, FileTags] = {}
        self._resolved: Resolved = _NO_PAIRS
        self._refs: dict[str, RefCounts] = {}
        self._keys = np.zeros(0, np.int64)
        """Per edge row, ascending: its canonical order as one number (:func:`_row_keys`: the
        source file, the rank of the row's name among that file's names, the target file)."""
        self._referrers: dict[str, set[str]] | None = None
        """name -> files using it; built the first time scanning every file's references for the
        names an edit touched would cost more (:data:`SCAN_LIMIT`), then kept up to date."""
        self._counts: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        """Rows per identifier, per definition and per file pair of the last graph (None: count)."""
        self.last_mode = ""
        """How the last graph came: ``rebuilt``, ``updated`` or ``unchanged`` (for stats, tests)."""
        self.rebuilds = 0
        """Graphs built from scratch so far."""

    @property
    def graph(self) -> RepoGraph | None:
        return self._graph

    def update(self, tags: Mapping[str, FileTags], resolved: Resolved | None = None) -> RepoGraph:
        """The graph of ``tags`` and ``resolved`` (equal to ``build_graph(tags, settings, resolved)``)."""
        pairs = resolved or _NO_PAIRS
        if self._graph is None:
            return self._rebuild(tags, pairs)
        changed = changed_keys(self._tags, tags)
        pair_changes = changed_pairs(self._resolved, pairs)
        if not changed and not pair_changes:
            self._tags, self._resolved, self.last_mode = tags, pairs, "unchanged"
            return self._graph
        # A file stands for its ~40 names; a changed pair is one name of one file.
        if not self._patches or len(changed) + len(pair_changes) / 32 > REBUILD_SHARE * max(len(tags), 1):
            return self._rebuild(tags, pairs)
        try:
            graph = self._apply(self._graph, tags, pairs, changed, pair_changes)
        except _Rebuild:
            return self._rebuild(tags, pairs)
        self._graph, self._tags, self._resolved, self.last_mode = graph, tags, pairs, "updated"
        return graph

    def _rebuild(self, tags: Mapping[str, FileTags], pairs: Resolved) -> RepoGraph:
        graph, refs, pos = build_graph_counted(tags, self._settings, pairs or None)
        self._graph, self._tags, self._resolved = graph, tags, pairs
        if self._patches:
            self._refs, self._keys = refs, _row_keys(graph.edge_src, pos, graph.edge_dst, len(graph.files))
        self._referrers, self._counts = None, None
        self.last_mode = "rebuilt"
        self.rebuilds += 1
        return graph

    def _referrers_of(self, names: set[str]) -> dict[str, list[str]]:
        """name -> the files using it, for ``names``."""
        if self._referrers is None and len(names) * len(self._refs) > SCAN_LIMIT:
            referrers: dict[str, set[str]] = {}
            for path, counts in self._refs.items():
                for name in counts:
                    referrers.setdefault(name, set()).add(path)
            self._referrers = referrers
        if self._referrers is not None:
            return {name: sorted(self._referrers.get(name, ())) for name in names}
        # One C-level pass per name (at 100,000 files 33 ms against 44 for the loop in Python).
        refs = self._refs
        return {name: list(compress(refs, map(contains, refs.values(), repeat(name)))) for name in names}

    def _apply(
        self,
        old: RepoGraph,
        tags: Mapping[str, FileTags],
        pairs: Resolved,
        changed: list[str],
        pair_changes: set[Pair],
    ) -> RepoGraph:
        files = self._files(old, tags, changed)
        if len(files.files) >= MAX_FILES:
            raise _Rebuild
        dirty, defined = self._swap_names(files.changed, tags)
        definers = _definers(old, files, dirty, defined)
        units = self._units(old, files, dirty, pair_changes, pairs)
        remove = self._removed_rows(old, files, dirty, units)
        gone = np.flatnonzero(remove)
        rows = EdgeRows(self._settings, definers, files.index, old.provenances)
        self._derive_units(rows, files.index, units, pairs, _OldPlaces.of(old, gone, self._keys))
        raw, raw_pos = rows.columns(), rows.positions()
        ident_counts, def_counts, pair_counts = self._counts or _count_rows(old)
        idents, ident_remap, new_ident, ident_counts = _idents(old, gone, rows.ident_ids, raw, ident_counts)
        in_place: EdgeColumns | None = None
        if files.remap is None:  # the usual edit: the rows of a few files re-derived
            rederived = _Rederived.of(old, self._keys, remove, gone, raw, raw_pos, new_ident, ident_remap)
            in_place = _in_place(rederived)
            if in_place is not None:  # the same rows, some with new counts or weights: nothing moves
                edges, keys = in_place, self._keys
                definition_keys, pair_view = old.definition_keys, old.pairs
            else:  # one run of rows replaced, the rest copied as they are
                spliced = _splice(rederived)
                edges, keys = spliced.edges, spliced.keys
                definition_keys, pair_view, def_counts, pair_counts = _spliced_views(
                    old, spliced, gone, new_ident, len(idents), ident_remap, def_counts, pair_counts
                )
            self._counts = (ident_counts, def_counts, pair_counts)
        else:
            kept = np.flatnonzero(~remove)
            new = _new_rows(old, files, kept, new_ident, raw, raw_pos, self._keys)
            edges, keys = _assemble(old, files, kept, ident_remap, new)
            definition_keys = _definition_keys(old, files, kept, ident_remap, len(idents), edges, new)
            pair_view = _pairs(old, files, kept, remove, edges, new)
            self._counts = None
        symbols = _symbols(old, files, tags, idents, ident_remap, definers)
        graph = make_graph(files.files, idents, edges, definers, symbols, rows.provenances())
        # Derived views, patched above instead of recomputed by the graph's cached properties.
        graph.__dict__["index"] = files.index
        graph.__dict__["definition_keys"] = definition_keys
        graph.__dict__["pairs"] = pair_view
        if ident_remap is None:
            graph.__dict__["ident_index"] = old.ident_index
        if in_place is not None:
            graph.__dict__["src_offsets"] = old.src_offsets
        graph.carry_dependent_counts(old)
        self._keys = keys
        return graph

    def _files(self, old: RepoGraph, tags: Mapping[str, FileTags], changed: list[str]) -> _Files:
        added = frozenset(p for p in changed if p in tags and p not in old.index)
        removed = frozenset(p for p in changed if p not in tags)
        if not added and not removed:
            return _Files(old.files, old.index, None, tuple(sorted(changed)), added, removed)
        files = tuple(sorted(tags))
        index = {path: i for i, path in enumerate(files)}
        remap = np.fromiter((index.get(p, -1) for p in old.files), dtype=np.int64, count=len(old.files))
        return _Files(files, index, remap, tuple(sorted(changed)), added, removed)

    def _swap_names(
        self, changed: tuple[str, ...], tags: Mapping[str, FileTags]
    ) -> tuple[set[str], dict[str, list[str]]]:
        """Replace the changed files' reference counts (and their referrer entries); the names
        whose set of defining files changed, and name -> the changed files defining it now."""
        dirty: set[str] = set()
        defined: dict[str, list[str]] = {}
        for path in changed:
            new, was = tags.get(path), self._tags.get(path)
            old_refs = self._refs.pop(path, {})
            new_refs: RefCounts = Counter(new.ref_names) if new is not None else {}
            if new is not None:
                self._refs[path] = new_refs
            if self._referrers is not None:
                for name in old_refs.keys() - new_refs.keys():
                    _discard(self._referrers, name, path)
                for name in new_refs.keys() - old_refs.keys():
                    self._referrers.setdefault(name, set()).add(path)
            old_defs = {sym.name for sym in was.symbols} if was is not None else set()
            new_defs = {sym.name for sym in new.symbols} if new is not None else set()
            dirty.update(old_defs ^ new_defs)
            for name in new_defs:
                defined.setdefault(name, []).append(path)
        return dirty, defined

    def _units(
        self, old: RepoGraph, files: _Files, dirty: set[str], pair_changes: set[Pair], pairs: Resolved
    ) -> dict[str, set[str] | None]:
        """path -> the names whose rows are re-derived (None: all of the file's)."""
        units: dict[str, set[str] | None] = {p: None for p in files.changed if p not in files.removed}
        for name, paths in self._referrers_of(dirty).items():
            for path in paths:
                _add_unit(units, path, name)
        for path, name in pair_changes:
            if path in self._refs and name in self._refs[path]:
                _add_unit(units, path, name)
        if pairs and (files.added or files.removed):
            # A resolved target is kept only while it is a file of the graph.
            moved = files.added | files.removed
            for (path, name), targets in pairs.items():
                if not moved.isdisjoint(targets) and path in self._refs and name in self._refs[path]:
                    _add_unit(units, path, name)
        return units

    def _removed_rows(
        self, old: RepoGraph, files: _Files, dirty: set[str], units: Mapping[str, set[str] | None]
    ) -> np.ndarray:
        """Old rows that go: every row of a re-derived unit (and of removed files)."""
        remove = np.zeros(len(old.edge_src), dtype=bool)
        offsets = old.src_offsets
        for path in files.changed:
            fi = old.index.get(path)
            if fi is not None:
                remove[offsets[fi] : offsets[fi + 1]] = True
        ident_index = old.ident_index
        dirty_ids = [ident_index[name] for name in dirty if name in ident_index]
        if dirty_ids:
            mask = np.zeros(len(old.idents), dtype=bool)
            mask[dirty_ids] = True
            remove |= mask[old.edge_ident]
        for path, names in units.items():
            fi = old.index.get(path)
            if names is None or fi is None:
                continue
            ids = [ident_index[n] for n in names - dirty if n in ident_index]
            if ids:
                block = slice(offsets[fi], offsets[fi + 1])
                remove[block] |= np.isin(old.edge_ident[block], ids)
        return remove

    def _derive_units(
        self,
        rows: EdgeRows,
        index: Mapping[str, int],
        units: Mapping[str, set[str] | None],
        pairs: Resolved,
        places: _OldPlaces,
    ) -> None:
        """The rows of every unit: a whole file's names one by one, a name of many files at once."""
        named: dict[str, list[str]] = {}
        for path in sorted(units):
            names = units[path]
            if names is None:
                counts = self._refs[path]
                for pos, (name, count) in enumerate(counts.items()):
                    rows.add(index[path], name, count, pairs.get((path, name)) if pairs else None, pos)
                continue
            for name in names:
                named.setdefault(name, []).append(path)
        for name, paths in named.items():
            matched: list[str] = []
            for path in paths:
                counts = self._refs[path]
                if name not in counts:
                    continue
                resolved = pairs.get((path, name)) if pairs else None
                if resolved is None:
                    matched.append(path)
                else:
                    rows.add(index[path], name, counts[name], resolved, list(counts).index(name))
            uses = [self._refs[path] for path in matched]
            at = places.find(name, matched)
            for i in np.flatnonzero(at < 0).tolist():  # no row before: its place among the file's names
                at[i] = list(uses[i]).index(name)
            rows.add_uses(
                name,
                np.fromiter(map(index.__getitem__, matched), np.int32, len(matched)),
                np.fromiter((counts[name] for counts in uses), np.int64, len(uses)),
                at,
            )


@dataclass(frozen=True, slots=True)
class _OldPlaces:
    """The place of each (file, name) of the removed rows among its file's names (order of
    first use). A file whose rows of a name are re-derived, and whose tags did not change, keeps
    its rows' place: reading it here saves listing each file's names (~7 us a file)."""

    graph: RepoGraph
    keys: np.ndarray
    """Per removed row, sorted: old file index * identifiers + old identifier id."""
    places: np.ndarray

    @classmethod
    def of(cls, old: RepoGraph, gone: np.ndarray, old_keys: np.ndarray) -> _OldPlaces:
        keys = old.edge_src[gone].astype(np.int64) * max(1, len(old.idents)) + old.edge_ident[gone]
        order = np.argsort(keys, kind="stable")
        return cls(old, keys[order], _row_places(old_keys[gone][order], len(old.files)))

    def find(self, name: str, paths: list[str]) -> np.ndarray:
        """Each path's place of ``name`` (-1: it had no removed row of it)."""
        ident = self.graph.ident_index.get(name)
        if ident is None or not len(self.keys):
            return np.full(len(paths), -1, np.int32)
        old_index = self.graph.index
        files = np.fromiter(map(old_index.__getitem__, paths), np.int64, len(paths))
        want = files * max(1, len(self.graph.idents)) + ident
        at = np.minimum(np.searchsorted(self.keys, want), len(self.keys) - 1)
        found: np.ndarray = np.where(self.keys[at] == want, self.places[at], -1).astype(np.int32)
        return found


def _definers(
    old: RepoGraph, files: _Files, dirty: set[str], defined: Mapping[str, list[str]]
) -> Mapping[str, tuple[int, ...]]:
    """The new definers: the old ones (indices mapped when files came or went; a name that is
    not dirty was defined by no added or removed file), the dirty names' recomputed."""
    changes: dict[str, tuple[int, ...] | None] = {}
    changed = set(files.changed)
    for name in dirty:
        paths = [old.files[i] for i in old.definers.get(name, ()) if old.files[i] not in changed]
        paths.extend(defined.get(name, ()))
        changes[name] = tuple(sorted(files.index[p] for p in paths)) if paths else None
    if files.remap is None:
        return LayeredDefiners.over(old.definers, changes)
    remap = files.remap.tolist()
    base = {name: tuple([remap[i] for i in held]) for name, held in old.definers.items()}
    return LayeredDefiners.over(base, changes)


class LayeredDefiners(Mapping[str, tuple[int, ...]]):
    """identifier -> defining files, as the previous graph's mapping plus the names an update
    changed: copying the whole mapping (every name defined anywhere) cost an edit ~2 ms on the
    standard library. One layer deep; flattened once the changes grow."""

    def __init__(self, base: Mapping[str, tuple[int, ...]], changes: Mapping[str, tuple[int, ...] | None]) -> None:
        self._base = base
        self._changes = changes
        """name -> its definers now (None: no longer defined)."""

    @classmethod
    def over(
        cls, previous: Mapping[str, tuple[int, ...]], changes: Mapping[str, tuple[int, ...] | None]
    ) -> Mapping[str, tuple[int, ...]]:
        base, merged = previous, dict(changes)
        if isinstance(previous, LayeredDefiners):
            base, merged = previous._base, {**previous._changes, **changes}
        if len(merged) * 16 > len(base):
            flat = {name: held for name, held in base.items() if name not in merged}
            flat.update((name, held) for name, held in merged.items() if held is not None)
            return flat
        return cls(base, merged)

    def __getitem__(self, name: str) -> tuple[int, ...]:
        if name in self._changes:
            held = self._changes[name]
            if held is None:
                raise KeyError(name)
            return held
        return self._base[name]

    def get(self, name: str, default: Any = None) -> Any:
        held = self._changes.get(name, _MISSING) if self._changes else _MISSING
        if held is _MISSING:
            return self._base.get(name, default)
        return default if held is None else held

    def __iter__(self) -> Iterator[str]:
        yield from (name for name in self._base if name not in self._changes)
        yield from (name for name, held in self._changes.items() if held is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_MISSING: Any = object()


def _discard(index: dict[str, set[str]], name: str, path: str) -> None:
    held = index.get(name)
    if held is not None:
        held.discard(path)
        if not held:
            del index[name]


def _add_unit(units: dict[str, set[str] | None], path: str, name: str) -> None:
    if path in units:
        names = units[path]
        if names is not None:
            names.add(name)
    else:
        units[path] = {name}


def _count_rows(graph: RepoGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows per identifier, per definition (``definition_keys``) and per file pair of ``graph``."""
    edge_def, keys = graph.definition_keys
    of_edge, pair_src, _ = graph.pairs
    return (
        np.bincount(graph.edge_ident, minlength=len(graph.idents)),
        np.bincount(edge_def, minlength=len(keys)),
        np.bincount(of_edge, minlength=len(pair_src)),
    )


def _idents(
    old: RepoGraph, gone: np.ndarray, ident_ids: Mapping[str, int], raw: EdgeColumns, counts: np.ndarray
) -> tuple[tuple[str, ...], np.ndarray | None, np.ndarray, np.ndarray]:
    """The new identifier table (names with at least one row, sorted), old id -> new id (-1:
    gone; None when the table did not change), the new rows' ident ids, the rows per identifier."""
    counts = counts - np.bincount(old.edge_ident[gone], minlength=len(old.idents))
    alive = counts > 0
    fresh = [name for name in ident_ids if name not in old.ident_index]
    alive[[old.ident_index[n] for n in ident_ids if n in old.ident_index]] = True
    if not fresh and alive.all():
        idents, remap, index = old.idents, None, old.ident_index
    else:
        live = [name for name, keep in zip(old.idents, alive.tolist(), strict=True) if keep]
        idents = tuple(sorted(live + fresh)) if fresh else tuple(live)
        index = {name: i for i, name in enumerate(idents)}
        remap = np.fromiter((index.get(n, -1) for n in old.idents), dtype=np.int64, count=len(old.idents))
        moved = np.zeros(len(idents), dtype=counts.dtype)
        moved[remap[remap >= 0]] = counts[remap >= 0]
        counts = moved
    local = np.fromiter((index[name] for name in ident_ids), dtype=np.int32, count=len(ident_ids))
    new_ident = local[raw.ident] if len(raw.ident) else raw.ident
    counts += np.bincount(new_ident, minlength=len(idents))
    return idents, remap, new_ident, counts


def _row_keys(src: np.ndarray, pos: np.ndarray, dst: np.ndarray, n_files: int) -> np.ndarray:
    """The canonical order of rows as one int64: (src, position of the name in src, dst)."""
    key: np.ndarray = ((src.astype(np.int64) << POS_BITS) | pos) * max(n_files, 1) + dst
    return key


def _row_places(keys: np.ndarray, n_files: int) -> np.ndarray:
    """The name ranks in ``keys`` (:func:`_row_keys`' ``pos``)."""
    places: np.ndarray = (keys // max(n_files, 1)) & ((1 << POS_BITS) - 1)
    return places


def _new_rows(
    old: RepoGraph,
    files: _Files,
    kept: np.ndarray,
    ident: np.ndarray,
    raw: EdgeColumns,
    raw_pos: np.ndarray,
    old_keys: np.ndarray,
) -> _NewRows:
    n = len(files.files)
    key, order = _sorted_keys(raw, raw_pos, n)
    kept_src = old.edge_src[kept] if files.remap is None else files.remap[old.edge_src[kept]]
    kept_dst = old.edge_dst[kept] if files.remap is None else files.remap[old.edge_dst[kept]]
    kept_key = _row_keys(kept_src, _row_places(old_keys[kept], len(old.files)), kept_dst, n)
    columns = EdgeColumns(raw.src, raw.dst, ident, raw.count, raw.weight, raw.provenance).take(order)
    return _NewRows(columns, key[order], kept_key, np.searchsorted(kept_key, key[order]))


def _assemble(
    old: RepoGraph,
    files: _Files,
    kept: np.ndarray,
    ident_remap: np.ndarray | None,
    new: _NewRows,
) -> tuple[EdgeColumns, np.ndarray]:
    """The kept rows (indices mapped) with the new rows inserted in canonical order."""
    src, dst, ident = old.edge_src[kept], old.edge_dst[kept], old.edge_ident[kept]
    if files.remap is not None:
        src, dst = files.remap[src].astype(np.int32), files.remap[dst].astype(np.int32)
    if ident_remap is not None:
        ident = ident_remap[ident].astype(np.int32)
    at = new.insert_at
    add = new.columns
    columns = EdgeColumns(
        np.insert(src, at, add.src),
        np.insert(dst, at, add.dst),
        np.insert(ident, at, add.ident),
        np.insert(old.edge_count[kept], at, add.count),
        np.insert(old.edge_weight[kept], at, add.weight),
        np.insert(old.edge_provenance[kept], at, add.provenance),
    )
    return columns, np.insert(new.kept_keys, at, new.keys)


def _definition_keys(
    old: RepoGraph,
    files: _Files,
    kept: np.ndarray,
    ident_remap: np.ndarray | None,
    n_idents: int,
    edges: EdgeColumns,
    new: _NewRows,
) -> tuple[np.ndarray, np.ndarray]:
    """:attr:`RepoGraph.definition_keys` of the new rows from the old one: the old definitions
    re-keyed (indices mapped), the new rows' merged in, the unused dropped; no sort of the edges."""
    old_def, old_keys = old.definition_keys
    old_n = max(1, len(old.idents))
    n = max(1, n_idents)
    dst, ident = old_keys // old_n, old_keys % old_n
    if files.remap is not None:
        dst = files.remap[dst]
    if ident_remap is not None:
        ident = ident_remap[ident]
    valid = (dst >= 0) & (ident >= 0)
    rekeyed = np.where(valid, dst * n + ident, -1)
    add_keys = new.columns.dst.astype(np.int64) * n + new.columns.ident
    keys = np.unique(np.concatenate([rekeyed[valid], add_keys]))
    mapped = np.where(valid, np.searchsorted(keys, rekeyed), -1)
    kept_def = mapped[old_def[kept]]
    if len(kept_def) and kept_def.min() < 0:
        raise _Rebuild  # a kept row pointing at a definition that went: not expected
    edge_def = np.insert(kept_def, new.insert_at, np.searchsorted(keys, add_keys))
    used = np.bincount(edge_def, minlength=len(keys)) > 0
    if not used.all():
        shift = np.cumsum(used) - 1
        edge_def, keys = shift[edge_def], keys[used]
    return edge_def.astype(np.intp), keys


@dataclass(frozen=True, slots=True)
class _Spliced:
    """The rows after an edit: the old rows kept, with the new rows inserted in canonical order.
    Only the run ``r0:r1`` of old rows holding every removed row and every insertion point is
    rebuilt, by one gather (``take``); the rows before and after it are copied as they are."""

    raw: EdgeColumns
    """The new rows, in the order derived (``order`` sorts them)."""
    order: np.ndarray
    r0: int
    r1: int
    run_kept: np.ndarray
    """The kept rows of the run, as indices within ``r0:r1``."""
    take: np.ndarray
    """Per row of the rebuilt run: an old row's index within ``r0:r1``, or ``r1 - r0`` plus a
    sorted new row's."""
    edges: EdgeColumns
    keys: np.ndarray
    """The rows' :func:`_row_keys`."""

    def column(self, old: np.ndarray, added: np.ndarray, remap: np.ndarray | None = None) -> np.ndarray:
        """``old`` (one value per old row) spliced the same way, ``added`` per new row (raw order).

        Each value is written once, the run's by one gather: a gather of the run's kept rows,
        ``np.insert`` and a concatenation wrote each three times (an edit of a name used in 700 of
        the standard library's files rebuilds nearly all of its 250,000 rows)."""
        r0, r1, size = self.r0, self.r1, len(self.take)
        head, run_old, tail = old[:r0], old[r0:r1], old[r1:]
        if remap is not None:  # kept rows only: a removed row's value may be no index at all (-1)
            head, tail = remap[head], remap[tail]
            run_old = run_old.copy()
            run_old[self.run_kept] = remap[run_old[self.run_kept]]
        run = np.concatenate([run_old, added[self.order].astype(old.dtype, copy=False)])
        out = np.empty(len(old) - (r1 - r0) + size, dtype=old.dtype)
        out[:r0] = head
        np.take(run, self.take, out=out[r0 : r0 + size])
        out[r0 + size :] = tail
        return out


def _sorted_keys(raw: EdgeColumns, raw_pos: np.ndarray, n_files: int) -> tuple[np.ndarray, np.ndarray]:
    """The new rows' :func:`_row_keys` and the order that sorts them (stable)."""
    new_pos = raw_pos.astype(np.int64)
    if len(new_pos) and new_pos.max() >= 1 << POS_BITS:
        raise _Rebuild
    key = _row_keys(raw.src, new_pos, raw.dst, n_files)
    return key, np.argsort(key, kind="stable")


@dataclass(frozen=True, slots=True)
class _Rederived:
    """What an update in which no file came or went works from: the old graph and its rows'
    keys, the rows it removed, and the rows derived in their place (``order`` sorts them by
    ``key``)."""

    old: RepoGraph
    old_keys: np.ndarray
    remove: np.ndarray
    """Per old row: removed."""
    gone: np.ndarray
    """The removed rows, ascending."""
    raw: EdgeColumns
    ident: np.ndarray
    """The derived rows' identifiers in the new table."""
    ident_remap: np.ndarray | None
    key: np.ndarray
    order: np.ndarray

    @classmethod
    def of(
        cls,
        old: RepoGraph,
        old_keys: np.ndarray,
        remove: np.ndarray,
        gone: np.ndarray,
        raw: EdgeColumns,
        raw_pos: np.ndarray,
        ident: np.ndarray,
        ident_remap: np.ndarray | None,
    ) -> _Rederived:
        key, order = _sorted_keys(raw, raw_pos, len(old.files))
        return cls(old, old_keys, remove, gone, raw, ident, ident_remap, key, order)


def _in_place(rows: _Rederived) -> EdgeColumns | None:
    """The rows when an edit re-derived exactly the rows it removed (the same files, names and
    targets in the same places; a body edited with the names it uses, a function appended that
    uses no new name): the old columns, shared where no value moved, copied with the new counts,
    weights or provenances otherwise. No splice and no regrouping: at 250,000 rows (the standard
    library) those copied every column a few times. None when any row came, went or moved."""
    old, gone, order = rows.old, rows.gone, rows.order
    if rows.ident_remap is not None or len(gone) != len(rows.raw.src):
        return None
    if not np.array_equal(rows.key[order], rows.old_keys[gone]):
        return None
    if not np.array_equal(rows.ident[order], old.edge_ident[gone]):
        return None

    def values(column: np.ndarray, added: np.ndarray) -> np.ndarray:
        added = added[order].astype(column.dtype, copy=False)
        if np.array_equal(column[gone], added):
            return column  # shared: a graph's arrays are never written after it is made
        out = column.copy()
        out[gone] = added
        return out

    raw = rows.raw
    return EdgeColumns(
        old.edge_src,
        old.edge_dst,
        old.edge_ident,
        values(old.edge_count, raw.count),
        values(old.edge_weight, raw.weight),
        values(old.edge_provenance, raw.provenance),
    )


def _splice(rows: _Rederived) -> _Spliced:
    """The rows when no file came or went: the kept rows with the new rows inserted in canonical
    order. The old rows' keys are kept, so a new row's place needs no key of the kept rows: the
    old rows before it, less the removed ones among them."""
    old, gone, raw, order = rows.old, rows.gone, rows.raw, rows.order
    before = np.searchsorted(rows.old_keys, rows.key[order])
    ends = [int(x) for x in (*gone[:1], *before[:1])]
    r0 = min(ends, default=0)
    r1 = max(int(gone[-1]) + 1 if len(gone) else r0, int(before[-1]) if len(before) else r0)
    # A new row's place in the run: the old rows of the run before it, less the removed ones.
    at = (before - r0) - np.searchsorted(gone, before)
    run_kept = np.flatnonzero(~rows.remove[r0:r1])
    take = np.insert(run_kept, at, (r1 - r0) + np.arange(len(order), dtype=np.intp))
    plan = _Spliced(raw, order, r0, r1, run_kept, take, raw, rows.old_keys)
    edges = EdgeColumns(
        plan.column(old.edge_src, raw.src),
        plan.column(old.edge_dst, raw.dst),
        plan.column(old.edge_ident, rows.ident, rows.ident_remap),
        plan.column(old.edge_count, raw.count),
        plan.column(old.edge_weight, raw.weight),
        plan.column(old.edge_provenance, raw.provenance),
    )
    return _Spliced(raw, order, r0, r1, run_kept, take, edges, plan.column(rows.old_keys, rows.key))


def _spliced_views(
    old: RepoGraph,
    spliced: _Spliced,
    gone: np.ndarray,
    new_ident: np.ndarray,
    n_idents: int,
    ident_remap: np.ndarray | None,
    def_counts: np.ndarray,
    pair_counts: np.ndarray,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """The definition keys and file pairs of the spliced rows (and their row counts)."""
    idents_n = max(1, n_idents)
    def_keys = _rekeyed_definitions(old, ident_remap, idents_n)
    new_def = spliced.raw.dst.astype(np.int64) * idents_n + new_ident
    sorted_keys = ident_remap is None or not (ident_remap < 0).any()  # a gone identifier's keys are -1
    definition_keys, def_counts = _regroup(
        old.definition_keys[0], def_keys, def_counts, gone, new_def, spliced, sorted_keys
    )
    n = max(1, len(old.files))
    of_edge, pair_src, pair_dst = old.pairs
    pair_keys = pair_src.astype(np.int64) * n + pair_dst
    new_pair = spliced.raw.src.astype(np.int64) * n + spliced.raw.dst
    (of_edge, keys), pair_counts = _regroup(of_edge, pair_keys, pair_counts, gone, new_pair, spliced)
    if keys is not pair_keys:
        pair_src, pair_dst = (keys // n).astype(np.int32), (keys % n).astype(np.int32)
    return definition_keys, (of_edge, pair_src, pair_dst), def_counts, pair_counts


def _rekeyed_definitions(old: RepoGraph, ident_remap: np.ndarray | None, n_idents: int) -> np.ndarray:
    """The old definition keys in the new identifier numbering (-1: its identifier went)."""
    old_keys = old.definition_keys[1]
    old_n = max(1, len(old.idents))
    if ident_remap is None and n_idents == old_n:
        return old_keys
    key_ident = old_keys % old_n if ident_remap is None else np.append(ident_remap, -1)[old_keys % old_n]
    rekeyed: np.ndarray = np.where(key_ident >= 0, (old_keys // old_n) * n_idents + key_ident, -1)
    return rekeyed


def _regroup(
    old_of_row: np.ndarray,
    old_keys: np.ndarray,
    counts: np.ndarray,
    gone: np.ndarray,
    new_keys: np.ndarray,
    plan: _Spliced,
    keys_sorted: bool = True,
) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """A grouping of rows by key (file pairs, definitions: each row's group index, the sorted
    unique keys) after the splice, and the rows per group; no sort of the rows. While no group
    comes or goes (the usual edit) the kept rows keep their group indices; otherwise the groups
    are renumbered by counting (a gather), never by searching every key."""
    counts = counts - np.bincount(old_of_row[gone], minlength=len(old_keys))
    if not keys_sorted:  # a gone identifier's keys are -1 (and have no rows left): drop them
        valid = old_keys >= 0
        old_of_row = (np.cumsum(valid) - 1)[old_of_row]  # only gone rows pointed at those
        old_keys, counts = old_keys[valid], counts[valid]
    size = len(old_keys)
    at = np.searchsorted(old_keys, new_keys)
    found = (at < size) & (np.append(old_keys, -1)[np.minimum(at, size)] == new_keys)
    counts += np.bincount(at[found], minlength=size)
    missing = np.unique(new_keys[~found])
    live = counts > 0
    if not len(missing) and live.all():
        return (plan.column(old_of_row, at).astype(np.intp, copy=False), old_keys), counts
    # An old key's new index: the live keys before it, plus the missing keys below it.
    below = np.zeros(size + 1, dtype=np.intp)
    np.add.at(below, np.searchsorted(old_keys, missing), 1)
    mapped = np.cumsum(live) - 1 + np.cumsum(below)[:size]
    kept = old_keys[live]
    keys = np.insert(kept, np.searchsorted(kept, missing), missing)
    new_of_row = np.searchsorted(keys, new_keys)
    of_row = plan.column(old_of_row, new_of_row, mapped).astype(np.intp, copy=False)
    moved = np.zeros(len(keys), dtype=counts.dtype)
    moved[mapped[live]] = counts[live]
    return (of_row, keys), moved + np.bincount(new_of_row[~found], minlength=len(keys))


def _pairs(
    old: RepoGraph, files: _Files, kept: np.ndarray, remove: np.ndarray, edges: EdgeColumns, new: _NewRows
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:attr:`RepoGraph.pairs` from the old one: the pairs of files whose rows changed are
    recomputed, the others' carried (renumbered)."""
    old_of_edge, old_src, old_dst = old.pairs
    n = max(1, len(files.files))
    touched = np.zeros(len(files.files), dtype=bool)
    touched[new.columns.src] = True
    gone_src = old.edge_src[remove]
    if files.remap is not None:
        old_src, old_dst, gone_src = files.remap[old_src], files.remap[old_dst], files.remap[gone_src]
    touched[gone_src[gone_src >= 0]] = True
    keep_pair = old_src >= 0
    keep_pair[keep_pair] = ~touched[old_src[keep_pair]]
    carried = old_src[keep_pair].astype(np.int64) * n + old_dst[keep_pair]
    in_touched = touched[edges.src]
    fresh, fresh_of_row = np.unique(
        edges.src[in_touched].astype(np.int64) * n + edges.dst[in_touched], return_inverse=True
    )
    slot = np.searchsorted(carried, fresh)
    keys = np.insert(carried, slot, fresh)
    carried_at = np.full(len(old_src), -1, dtype=np.intp)
    carried_at[keep_pair] = np.arange(len(carried)) + np.searchsorted(fresh, carried)
    of_edge = np.insert(carried_at[old_of_edge[kept]], new.insert_at, 0)
    of_edge[in_touched] = (slot + np.arange(len(fresh)))[fresh_of_row.reshape(-1)]
    return of_edge, (keys // n).astype(np.int32), (keys % n).astype(np.int32)


def _symbols(
    old: RepoGraph,
    files: _Files,
    tags: Mapping[str, FileTags],
    idents: tuple[str, ...],
    ident_remap: np.ndarray | None,
    definers: Mapping[str, tuple[int, ...]],
) -> SymbolColumns:
    """The symbol columns: unchanged files' runs carried (indices mapped), changed files' re-read."""
    index = old.ident_index if ident_remap is None else {name: i for i, name in enumerate(idents)}
    ident_map = None if ident_remap is None else np.append(ident_remap, -1)  # -1 (no identifier) stays
    table = old.names  # numbers only added to: the old graph's stay valid
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def carry(a: int, b: int) -> None:
        if a < b:
            fi, ids = old.symbol_file[a:b], old.symbol_ident[a:b]
            if files.remap is not None:
                fi = files.remap[fi].astype(np.int32)
            parts.append(
                (fi, old.symbol_local[a:b], ids if ident_map is None else ident_map[ids], old.symbol_name[a:b])
            )

    cursor = 0
    for path in files.changed:
        at = bisect.bisect_left(old.files, path)
        start = int(np.searchsorted(old.symbol_file, at))
        carry(cursor, start)
        cursor = int(np.searchsorted(old.symbol_file, at, side="right")) if path in old.index else start
        if path in tags:
            own = tuple(sym.name for sym in tags[path].symbols)
            ids = np.fromiter((index.get(n, -1) for n in own), dtype=np.int64, count=len(own))
            fi = np.full(len(own), files.index[path], dtype=np.int32)
            numbers = np.fromiter(map(table.number, own), dtype=np.int32, count=len(own))
            parts.append((fi, np.arange(len(own), dtype=np.int32), ids, numbers))
    carry(cursor, len(old.symbol_file))
    if not parts:
        no_symbols = np.zeros(0, np.int32)
        return SymbolColumns(no_symbols, no_symbols, np.zeros(0, np.int64), no_symbols, table)
    symbols = SymbolColumns(
        np.concatenate([part[0] for part in parts]),
        np.concatenate([part[1] for part in parts]),
        np.concatenate([part[2] for part in parts]),
        np.concatenate([part[3] for part in parts]),
        table,
    )
    if ident_remap is not None:  # names that just became identifiers, in files that did not change
        _mark_new_idents(old, files, idents, ident_remap, definers, symbols)
    return symbols


def _mark_new_idents(
    old: RepoGraph,
    files: _Files,
    idents: tuple[str, ...],
    ident_remap: np.ndarray,
    definers: Mapping[str, tuple[int, ...]],
    symbols: SymbolColumns,
) -> None:
    was = {name for name, new_id in zip(old.idents, ident_remap.tolist(), strict=True) if new_id >= 0}
    changed = set(files.changed)
    for new_id, name in enumerate(idents):
        if name in was:
            continue
        for fi in definers.get(name, ()):
            if files.files[fi] in changed:
                continue
            start, end = (int(x) for x in np.searchsorted(symbols.file, [fi, fi + 1]))
            number = symbols.names.number(name)  # a symbol of a file kept: numbered already
            symbols.ident[start + np.flatnonzero(symbols.name[start:end] == number)] = new_id


def graph_differences(a: RepoGraph, b: RepoGraph) -> list[str]:
    """What differs between two graphs (empty: equal). Equal means: the same files and
    identifiers in the same order, the same edge rows in the same order (src, dst, ident, count,
    weight bit for bit, provenance *by name*: the provenance table lists names in the order
    first met, which an update may meet in another order), the same definers, the same symbol
    columns, and the same derived views the ranker reads (file pairs, definition keys, dependent
    counts)."""
    out: list[str] = []
    if a.files != b.files:
        return [f"files differ ({len(a.files)} vs {len(b.files)})"]
    if a.idents != b.idents:
        out.append(f"idents differ ({len(a.idents)} vs {len(b.idents)})")
    columns = {
        "edge_src": (a.edge_src, b.edge_src),
        "edge_dst": (a.edge_dst, b.edge_dst),
        "edge_ident": (a.edge_ident, b.edge_ident),
        "edge_count": (a.edge_count, b.edge_count),
        "edge_weight": (a.edge_weight, b.edge_weight),
        "edge_provenance": (_provenance_names(a), _provenance_names(b)),
        "symbol_file": (a.symbol_file, b.symbol_file),
        "symbol_local": (a.symbol_local, b.symbol_local),
        "symbol_ident": (a.symbol_ident, b.symbol_ident),
        "pairs": (np.concatenate(a.pairs), np.concatenate(b.pairs)),
        "definition_keys": (np.concatenate(a.definition_keys), np.concatenate(b.definition_keys)),
        "dependent_counts": (np.concatenate(a.dependent_counts()), np.concatenate(b.dependent_counts())),
    }
    for name, (x, y) in columns.items():
        if len(x) != len(y) or not np.array_equal(x, y):
            out.append(f"{name} differ ({len(x)} vs {len(y)} values)")
    if a.symbol_names != b.symbol_names:
        out.append("symbol_names differ")
    if dict(a.definers) != dict(b.definers):
        out.append("definers differ")
    return out


def _provenance_names(graph: RepoGraph) -> np.ndarray:
    names: np.ndarray = np.asarray(graph.provenances, dtype=object)[graph.edge_provenance]
    return names
