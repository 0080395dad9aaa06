"""A symbol's neighbourhood: its definitions, their callers and their callees, to a depth. Pure.

For ``map --symbol NAME [--depth N]``. The definitions named NAME (in one file with
``PATH:NAME``); a *caller* is the innermost definition enclosing a use of a neighbour's name
(not its import) in a file with an edge to the neighbour's file through that name, or in the
neighbour's own file; a *callee* is a definition of a name used inside a neighbour: in the
neighbour's own file when that file defines the name (its scope comes first), else in the files
its file has an edge to through the name. Edges are the graph's: resolved by a server where one
resolved them, name-matched otherwise, so a hybrid map's neighbourhood is as precise as its
servers. Each direction is followed to ``depth`` steps; at most ``symbol_neighbours_max``
neighbours are collected (nearest first), and the result says when it stopped short.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ...model import FileTags
from .repo_graph import RepoGraph

Relation = Literal["definition", "caller", "callee"]
#: The reference kind of a name an import brings in: an import is not a call.
IMPORT_KIND = "module"
Key = tuple[str, int]
"""(path, symbol index); index -1: a file's top level (a use outside any definition)."""


@dataclass(frozen=True, slots=True)
class SymbolQuery:
    """What ``--symbol`` asks: a name, optionally in one file, and how far to follow calls."""

    name: str
    path: str = ""
    depth: int = 1

    @staticmethod
    def parse(text: str, depth: int) -> SymbolQuery:
        """``NAME`` or ``PATH:NAME`` (the last ``:`` splits: a path may hold one, a name never)."""
        path, sep, name = text.rpartition(":")
        return SymbolQuery(name if sep else text, path if sep else "", depth)


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    query: SymbolQuery
    definitions: tuple[Key, ...] = ()
    """Every definition named as asked, in path order (more than one: the name is ambiguous)."""
    related: Mapping[Key, tuple[Relation, int]] = field(default_factory=dict)
    """Each neighbour (definitions included) -> its relation and its distance in calls."""
    complete: bool = True
    """False when ``symbol_neighbours_max`` stopped the walk."""


def neighbourhood(graph: RepoGraph, tags: Mapping[str, FileTags], query: SymbolQuery, limit: int) -> Neighbourhood:
    """The neighbourhood ``query`` asks for (module doc)."""
    definitions = tuple(
        (path, i)
        for path in sorted(tags)
        if not query.path or path == query.path
        for i, symbol in enumerate(tags[path].symbols)
        if symbol.name == query.name
    )
    related: dict[Key, tuple[Relation, int]] = dict.fromkeys(definitions, ("definition", 0))
    walk = _Walk(graph, tags)
    complete = True
    for relation, step in (("caller", walk.callers), ("callee", walk.callees)):
        frontier: list[Key] = list(definitions)
        for distance in range(1, query.depth + 1):
            found: list[Key] = []
            for key in frontier:
                for near in step(key):
                    if near not in related:
                        if len(related) >= limit + len(definitions):
                            complete = False
                            break
                        related[near] = (relation, distance)  # type: ignore[assignment]
                        found.append(near)
            frontier = [key for key in found if key[1] >= 0]  # a file's top level calls on no further
            if not frontier:
                break
    return Neighbourhood(query, definitions, related, complete)


class _Walk:
    """One step of the walk, either way, over the graph's edges and the files' references."""

    def __init__(self, graph: RepoGraph, tags: Mapping[str, FileTags]) -> None:
        self._graph = graph
        self._tags = tags

    def _name(self, key: Key) -> str:
        return self._tags[key[0]].symbols[key[1]].name if key[1] >= 0 else ""

    def _linked(self, src: str | None, dst: str | None, name: str) -> set[str]:
        """Files with an edge through ``name``: into ``dst`` (their sources) or out of ``src``."""
        graph = self._graph
        ident = graph.ident_index.get(name)
        rows = graph.edges_by_ident.get(ident) if ident is not None else None
        if rows is None:
            return set()
        index = graph.index
        if dst is not None:
            return {graph.files[int(s)] for s in graph.edge_src[rows[graph.edge_dst[rows] == index.get(dst, -1)]]}
        return {graph.files[int(d)] for d in graph.edge_dst[rows[graph.edge_src[rows] == index.get(src or "", -1)]]}

    def callers(self, key: Key) -> Iterable[Key]:
        path, _ = key
        name = self._name(key)
        if not name:
            return []
        out: dict[Key, None] = {}
        for user in sorted({path, *self._linked(None, path, name)}):
            for ref in self._tags[user].references:
                if ref.name == name and ref.kind != IMPORT_KIND:
                    caller = (user, enclosing(self._tags[user], ref.line))
                    if caller != key:
                        out.setdefault(caller, None)
        return out

    def callees(self, key: Key) -> Iterable[Key]:
        path, index = key
        if index < 0:
            return []
        file_tags = self._tags[path]
        span = file_tags.symbols[index].span
        names = dict.fromkeys(
            r.name
            for r in file_tags.references
            if span.start_line <= r.line <= span.end_line and r.name and r.kind != IMPORT_KIND
        )
        out: dict[Key, None] = {}
        own = {symbol.name for symbol in file_tags.symbols}
        for name in names:
            # A name the file defines itself is that definition (the file's scope comes first).
            for target in sorted({path} if name in own else self._linked(path, None, name)):
                for i, symbol in enumerate(self._tags[target].symbols):
                    if symbol.name == name and (target, i) != key:
                        out.setdefault((target, i), None)
        return out


def enclosing(tags: FileTags, line: int) -> int:
    """The innermost definition of ``tags`` whose span holds ``line`` (0-based); -1: none."""
    best = -1
    for i, symbol in enumerate(tags.symbols):
        span = symbol.span
        if span.start_line <= line <= span.end_line and (
            best < 0 or span.start_line >= tags.symbols[best].span.start_line
        ):
            best = i
    return best
