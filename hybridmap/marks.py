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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .graph import NAME_MATCH_CODE, RepoGraph
from .model import Symbol
from .visibility import is_public


@dataclass(frozen=True, slots=True)
class Dependents:
    """Other files depending on one file: all of them, and those whose dependence a source
    resolved (the rest are name matches)."""

    total: int
    resolved: int


def dependents(graph: RepoGraph) -> dict[str, Dependents]:
    """Per file with at least one dependent: how many other files have an edge into it."""
    n = max(1, len(graph.files))
    outside = graph.edge_src != graph.edge_dst
    src = graph.edge_src[outside].astype(np.int64)
    dst = graph.edge_dst[outside].astype(np.int64)
    pairs = np.unique(dst * n + src)
    total = np.bincount(pairs // n, minlength=n)
    resolved_rows = graph.edge_provenance[outside] != NAME_MATCH_CODE
    resolved_pairs = np.unique(dst[resolved_rows] * n + src[resolved_rows])
    resolved = np.bincount(resolved_pairs // n, minlength=n)
    return {graph.files[i]: Dependents(int(total[i]), int(resolved[i])) for i in np.flatnonzero(total).tolist()}


class Visibility:
    """Public or not, per definition, by each file's language convention (memoized per map)."""

    def __init__(self, conventions: Mapping[str, str | None], languages: Mapping[str, str]) -> None:
        self._conventions = conventions
        self._languages = languages

    def public(self, path: str, symbols: Sequence[Symbol], index: int) -> bool | None:
        language = self._languages.get(path)
        convention = self._conventions.get(language) if language is not None else None
        return is_public(convention, symbols, index, path)
