"""The static graph a one-shot process takes from the last one and leaves for the next.

A one-shot map (the CLI without its daemon) is a new process each time: without this it rebuilt
the graph from every file's tags, decoding all of them first. :class:`GraphKeeper` reads the
graph the last process kept (:mod:`hybridmap.store.kept_graph`) when the first map is static and
its files, tags, settings and code are what that graph was built from
(:func:`~hybridmap.pipeline.graph.kept.graph_digest`), with the private-definition flags the
ranking read; and hands on, at the end, a static graph this process built itself. Only a map
built wholly from the tree-sitter source is kept or adopted: a server's answers are not the
next process's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..settings import Settings
from ..sources.base import SourceView
from ..store.codec import LazyFileTags
from ..store.kept_graph import KeptGraph
from .graph.kept import from_kept, graph_digest, to_kept
from .graph.repo_graph import RepoGraph
from .rank.signals.private_definitions import known_private_mask, remember_private_mask


class GraphKeeper:
    """One process's kept graph: read at most once, at its first map, and the graph to write."""

    def __init__(
        self,
        settings: Settings,
        conventions: Mapping[str, str | None],
        read: Callable[[str], KeptGraph | None] | None,
    ) -> None:
        """``read``: the kept graph built from a digest, if any (None: nothing kept is read, and
        nothing is handed on)."""
        self._settings = settings
        self._conventions = conventions
        self._read = read
        self._enabled = read is not None
        self._built: tuple[RepoGraph, Mapping[str, object], Mapping[str, str], int] | None = None

    def adopt(self, base: SourceView) -> tuple[RepoGraph, int] | None:
        """The kept graph of ``base``'s tags and the pairs its policies resolved; None when none
        fits or this is not the first map asking."""
        read, self._read = self._read, None
        if read is None:
            return None
        digest = graph_digest(base.tags, base.keys, self._settings, self._conventions)
        kept = read(digest) if digest is not None else None
        if kept is None or kept.files != tuple(sorted(base.tags)):
            return None
        graph, private = from_kept(kept)
        if private is not None:
            remember_private_mask(graph, self._conventions, private)
        return graph, kept.resolved_pairs

    def built(self, graph: RepoGraph, base: SourceView, resolved_pairs: int) -> None:
        """``graph`` was built from ``base``'s tags alone (a static map): the one to hand on."""
        if self._enabled:
            self._read = None  # a graph built here is newer than any kept one
            self._built = (graph, base.tags, base.keys, resolved_pairs)

    def to_keep(self, current: RepoGraph | None) -> KeptGraph | None:
        """What to write for the next process: the static graph built here, when it is still the
        ``current`` one (None: none, or it was adopted, not built)."""
        held = self._built
        if held is None or held[0] is not current:
            return None
        graph, tags, keys, resolved_pairs = held
        if any(isinstance(t, LazyFileTags) and t.damaged for t in tags.values()):
            return None  # built on a record found damaged: its key does not say what the graph holds
        digest = graph_digest(tags, keys, self._settings, self._conventions)
        if digest is None:
            return None
        return to_kept(graph, digest, known_private_mask(graph, self._conventions), resolved_pairs)
