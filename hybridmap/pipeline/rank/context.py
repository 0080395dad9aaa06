"""What a ranking signal reads (:class:`RankContext`) and what it may contribute.

A signal (:class:`Signal`) is a small frozen object with a ``name``. The ranker
(:mod:`.ranker`) runs one phase at a time, calls that phase's hook of every signal in the
order of the signal list, and applies what the hooks return:

1. edge weights: :meth:`Signal.edge_factors` -> :class:`EdgeFactor` (edge rows x a factor);
2. personalization: :meth:`Signal.personalization` -> :class:`Mass` (teleport mass to a file);
3. file priors: :meth:`Signal.prior` -> :class:`Prior` (a request-independent multiplier per
   file, computed once per graph and settings);
4. PageRank (the ranker);
5. file multipliers: :meth:`Signal.file_factors` -> :class:`FileFactor` (x times, + plus),
   starting from the priors; then the ranker spreads each file's rank, times the multipliers,
   to the definitions it uses;
6. definition boosts: :meth:`Signal.boost_definitions` -> the definitions' scores, changed.

Each contribution may carry a human-readable ``why`` that ends up in the file's reasons
(``MapResult.files[].why``). A hook a signal does not override contributes nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Generic, TypeVar

import numpy as np

from ...languages.paths import path_kinds
from ...languages.visibility import Visibility
from ...model import FileTags
from ...settings import Settings
from ..graph.neighbourhood import Neighbourhood
from ..graph.repo_graph import RepoGraph
from ..inputs.cochange import CoChange
from .lexical import LexicalIndex

T = TypeVar("T")


class PerGraph(Generic[T]):
    """What a signal derives from a graph alone (its directory tree, its names by part...):
    built on first use, kept while the graph lives (a weak key: dropped with it)."""

    def __init__(self, build: Callable[[RepoGraph], T]) -> None:
        self._build = build
        self._held: weakref.WeakKeyDictionary[RepoGraph, T] = weakref.WeakKeyDictionary()

    def __call__(self, graph: RepoGraph) -> T:
        value = self._held.get(graph)
        if value is None:
            value = self._held[graph] = self._build(graph)
        return value


class PerFileList(Generic[T]):
    """What a signal derives from the graph's file paths alone: kept while the paths stay the
    same, so an edit (a new graph, the same files) does not pay for it again. One list at a
    time: the last graph's (two threads may both build it; either answer is the same)."""

    def __init__(self, build: Callable[[tuple[str, ...]], T]) -> None:
        self._build = build
        self._held: tuple[tuple[str, ...], T] | None = None

    def __call__(self, files: tuple[str, ...]) -> T:
        held = self._held
        if held is not None and (held[0] is files or held[0] == files):
            return held[1]
        value = self._build(files)
        self._held = (files, value)
        return value


#: Each graph file's path kinds (:func:`~hybridmap.languages.paths.path_kinds`): read by the
#: prior and by the test pairs, made once per listing (0.2 s at 100,000 files, twice before).
kinds_of_files: PerFileList[tuple[int, ...]] = PerFileList(lambda files: tuple(path_kinds(files)))


@dataclass(frozen=True)
class RankContext:
    """One request over one graph: what every signal reads. Built by the ranker, never edited."""

    graph: RepoGraph
    tags: Mapping[str, FileTags]
    settings: Settings
    chat: tuple[int, ...]
    """Chat files (the files being edited) as graph indices, in request order, once each."""
    mentioned_files: tuple[int, ...]
    """Files the user named, as graph indices, in request order, once each."""
    idents: tuple[str, ...]
    """Identifiers the user named, in request order, once each."""
    named_files: tuple[int, ...] = ()
    """Those of :attr:`mentioned_files` named by their path or file name (not by a message's
    word equal to their stem): pinned first with ``pin_mentioned_files``."""
    edited: tuple[int, ...] = ()
    """Files the agent edited in this session (graph indices, once each)."""
    read: tuple[int, ...] = ()
    """Files the agent read in this session."""
    active: tuple[int, ...] = ()
    """The file open in the agent's editor (zero or one)."""
    co_change: CoChange | None = None
    """Files changed together in the git history (None: not asked for, or no history)."""
    visibility: Visibility | None = None
    """Each definition's visibility by its language's convention (None: not known)."""
    message_words: tuple[str, ...] = ()
    """The words of the user's message, once each (identifier parts, lowercased)."""
    neighbourhood: Neighbourhood | None = None
    """A map of a symbol's neighbourhood (``map --symbol``): its definitions, callers, callees."""
    changed: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """A map of a change: each changed file (graph index; also in :attr:`chat`, so every chat
    signal reads it) -> its changed definitions (indices into the file's symbols)."""
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    """The repository's lexical index (its owner's: the map builder), for the text similarity."""
    _lift_reference: list[float] = field(default_factory=list, compare=False, repr=False)
    """:meth:`lift_best_definitions`' reference, once taken (a list: the record is frozen)."""
    bare_lifts: dict[int, float] = field(default_factory=dict, compare=False, repr=False)
    """The lifts of files without definitions (file index -> the sum): the ranker adds them to
    the score such a file is shown by name with (a mutable dict: the record is frozen)."""
    late_reasons: dict[int, list[str]] = field(default_factory=dict, compare=False, repr=False)
    """Reasons given by a definition boost (file index -> reasons, in the order given): a boost
    that picks its files from the scores (``pairs_follow``) knows them only then. The ranker lists
    them after the file phase's."""

    @property
    def n(self) -> int:
        """How many files the graph has."""
        return len(self.graph.files)

    @cached_property
    def chat_set(self) -> frozenset[int]:
        return frozenset(self.chat)

    def rows_of(self, files: Iterable[int]) -> dict[tuple[int, int], int]:
        """(file index, symbol index) -> its row in the graph's symbol arrays, for ``files``' symbols
        only (one pass; a map of every symbol would cost a large repository on each request)."""
        graph = self.graph
        rows = np.flatnonzero(np.isin(graph.symbol_file, list(set(files))))
        keys = zip(graph.symbol_file[rows].tolist(), graph.symbol_local[rows].tolist(), strict=True)
        return dict(zip(keys, rows.tolist(), strict=True))

    @cached_property
    def symbol_rows(self) -> dict[tuple[str, int], int]:
        """(path, symbol index) -> its row, for a neighbourhood's symbols (empty without one)."""
        if self.neighbourhood is None:
            return {}
        graph = self.graph
        wanted = {graph.index[path] for path, _ in self.neighbourhood.related if path in graph.index}
        return {(graph.files[fi], local): row for (fi, local), row in self.rows_of(wanted).items()}

    @cached_property
    def changed_symbol_rows(self) -> np.ndarray:
        """The changed definitions as rows of the graph's symbol arrays."""
        rows = self.rows_of(self.changed)
        found = [rows[(fi, i)] for fi, local in self.changed.items() for i in local if (fi, i) in rows]
        return np.asarray(found, dtype=np.intp)

    @cached_property
    def change_users(self) -> dict[int, tuple[tuple[str, str], ...]]:
        """Files (not changed ones) with an edge into a changed definition (its file and name),
        in index order -> (changed name, the edge's provenance) for each they use: the change's
        blast radius, resolved by a server or name-matched."""
        if not self.changed:
            return {}
        graph = self.graph
        ident_index = graph.ident_index
        pairs = {
            (fi, ident_index[name])
            for fi, local in self.changed.items()
            for name in {self.tags[graph.files[fi]].symbols[i].name for i in local}
            if name in ident_index
        }
        users: dict[int, dict[tuple[str, str], None]] = {}
        for fi, ident in sorted(pairs):
            rows = graph.edges_by_ident.get(ident)
            if rows is None:
                continue
            for row in rows[graph.edge_dst[rows] == fi].tolist():
                src = int(graph.edge_src[row])
                if src not in self.changed:
                    users.setdefault(src, {})[(graph.idents[ident], graph.provenance(row))] = None
        return {fi: tuple(used) for fi, used in sorted(users.items())}

    def lift_best_definitions(self, scores: np.ndarray, shares: Iterable[tuple[int, float]], weight: float) -> None:
        """Add ``weight`` times each file's share times the reference score to that file's best
        definition, in place (to :attr:`bare_lifts` for a file without one): a lift that does
        not depend on the rank PageRank gave the file (a file the chat files do not reach has
        almost none). The reference is the best score of any definition outside the chat files
        when the request's first lift is made, so two signals' lifts add up the same in either
        order."""
        if weight <= 0 or not len(scores):
            return
        graph = self.graph
        if not self._lift_reference:
            outside = ~np.isin(graph.symbol_file, list(self.chat_set)) if self.chat else np.ones(len(scores), bool)
            self._lift_reference.append(float(scores[outside].max()) if outside.any() else 0.0)
        reference = self._lift_reference[0]
        if reference <= 0:
            return
        self.add_to_best_definitions(scores, ((fi, weight * share * reference) for fi, share in shares))

    def add_to_best_definitions(self, scores: np.ndarray, amounts: Iterable[tuple[int, float]]) -> None:
        """Add each (file, amount) to that file's best definition, in place; to
        :attr:`bare_lifts` for a file without one (a message catalog, a data file: shown by
        name, lifted all the same)."""
        starts = self.graph.symbol_offsets
        for fi, amount in amounts:
            lo, hi = int(starts[fi]), int(starts[fi + 1])
            if hi > lo:
                scores[lo + int(np.argmax(scores[lo:hi]))] += amount
            else:
                self.bare_lifts[fi] = self.bare_lifts.get(fi, 0.0) + amount

    @cached_property
    def chat_users(self) -> tuple[int, ...]:
        """Files (not chat files) with at least one edge into a chat file, in index order: the
        chat files' callers, importers and tests. Shared by the signals that read it."""
        if not self.chat:
            return ()
        graph = self.graph
        chat_ids = list(self.chat)
        into_chat = np.isin(graph.edge_dst, chat_ids) & ~np.isin(graph.edge_src, chat_ids)
        return tuple(sorted(set(graph.edge_src[into_chat].tolist())))


@dataclass(frozen=True, slots=True)
class EdgeFactor:
    """Multiply the weight of edges ``rows`` (indices into the graph's edge arrays) by ``factor``."""

    rows: np.ndarray
    factor: float


@dataclass(frozen=True, slots=True)
class Mass:
    """Add ``amount`` to the personalization (teleport) mass of file ``file``."""

    file: int
    amount: float
    why: str = ""


@dataclass(frozen=True, slots=True)
class Prior:
    """A multiplier of every file from the file alone (its path, say): the base the request's
    file factors start from, and, with ``path_weighted_teleport``, the teleport's distribution.
    It depends on the graph and the settings only, so the ranker computes it once per graph."""

    multiplier: np.ndarray
    """One float per file (graph order)."""
    reasons: tuple[tuple[str, ...], ...]
    """Per file (graph order), why its multiplier is not 1 (listed after the request's reasons)."""


@dataclass(frozen=True, slots=True)
class FileFactor:
    """After PageRank: file ``file``'s multiplier becomes ``multiplier * times + plus``."""

    file: int
    times: float = 1.0
    plus: float = 0.0
    why: str = ""


@dataclass(frozen=True)
class Signal:
    """One ranking signal. Subclasses set :attr:`name` and override the hooks they contribute to.

    Signals are frozen (hashable, so their priors can be cached) and read everything from the
    :class:`RankContext`; any weight they apply is a named, documented, range-checked setting
    in :class:`~hybridmap.settings.Settings`, read from ``ctx.settings``.
    """

    name: ClassVar[str] = ""

    def edge_factors(self, ctx: RankContext) -> Iterable[EdgeFactor]:
        """Edge-weight multipliers, before PageRank."""
        return ()

    def personalization(self, ctx: RankContext) -> Iterable[Mass]:
        """Personalization mass per file, before PageRank."""
        return ()

    def prior(self, ctx: RankContext) -> Prior | None:
        """A request-independent multiplier per file (``ctx.graph`` and ``ctx.settings`` only)."""
        return None

    def file_factors(self, ctx: RankContext) -> Iterable[FileFactor]:
        """File multipliers after PageRank (they scale the files' rank and what flows from it)."""
        return ()

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        """The definitions' scores (one per symbol of ``ctx.graph``), boosted; ``scores`` itself
        is the ranker's and may be returned changed."""
        return scores


def best_first(scores: np.ndarray, take: int) -> np.ndarray:
    """The indices of the ``take`` best scores, best first, ties in index order: what
    ``np.argsort(-scores, kind="stable")[:take]`` gives, without sorting every definition of a
    large repository to keep a map's few thousand (a partition finds the cut, then only the
    candidates at or above it are sorted)."""
    if take <= 0:
        return np.zeros(0, dtype=np.intp)
    if take >= len(scores):
        return np.argsort(-scores, kind="stable")
    cut = np.partition(scores, len(scores) - take)[len(scores) - take]
    candidates = np.flatnonzero(scores >= cut)  # in index order: the stable sort keeps ties so
    return candidates[np.argsort(-scores[candidates], kind="stable")][:take]
