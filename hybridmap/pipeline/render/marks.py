"""What the map text marks beside paths and definitions: ``+`` public, ``[R:N]`` dependents.

* ``+`` before a definition's signature: public by its language's convention
  (:mod:`.visibility`), so the model sees the API a file offers at a glance;
* ``[R:N]`` after a file's path: N other files depend on it (their uses resolve to it, or
  name-match it where no source resolved them): how far an edit to it may reach.

Both are computed from what the map already has (signatures, the graph) and rendered inside the
exact budget: the packer counts the text with them. Settings ``render_public_marks``,
``render_dependents_marks`` and ``dependents_mark_min``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ..graph.repo_graph import RepoGraph


@dataclass(frozen=True, slots=True)
class Dependents:
    """Other files depending on one file: all of them, and those whose dependence a source
    resolved (the rest are name matches)."""

    total: int
    resolved: int


def dependents(graph: RepoGraph) -> Mapping[str, Dependents]:
    """Per file with at least one dependent: how many other files have an edge into it (from the
    graph's file pairs, which an incremental update patches: no pass over every edge)."""
    return DependentsByPath(graph)


class DependentsByPath(Mapping[str, Dependents]):
    """:func:`dependents` read from the graph's counts on each lookup: a map shows a few dozen
    files, and a dict of every file's counts made per graph was 60-85 ms of an edit's map at
    100,000 files."""

    def __init__(self, graph: RepoGraph) -> None:
        self._index = graph.index
        self._files = graph.files
        self._total, self._resolved = graph.dependent_counts()

    def __getitem__(self, path: str) -> Dependents:
        fi = self._index.get(path)
        if fi is None or not self._total[fi]:
            raise KeyError(path)
        return Dependents(int(self._total[fi]), int(self._resolved[fi]))

    def __iter__(self) -> Iterator[str]:
        return (self._files[i] for i in np.flatnonzero(self._total).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(self._total))
