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

from dataclasses import dataclass

import numpy as np

from ..graph.repo_graph import RepoGraph


@dataclass(frozen=True, slots=True)
class Dependents:
    """Other files depending on one file: all of them, and those whose dependence a source
    resolved (the rest are name matches)."""

    total: int
    resolved: int


def dependents(graph: RepoGraph) -> dict[str, Dependents]:
    """Per file with at least one dependent: how many other files have an edge into it (from the
    graph's file pairs, which an incremental update patches: no pass over every edge)."""
    total, resolved = graph.dependent_counts()
    return {graph.files[i]: Dependents(int(total[i]), int(resolved[i])) for i in np.flatnonzero(total).tolist()}
