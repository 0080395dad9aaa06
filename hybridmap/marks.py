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

from .graph import RepoGraph
from .model import Symbol
from .visibility import is_public, is_static


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


class Visibility:
    """Public or not, per definition, by each file's language convention (memoized per map)."""

    def __init__(self, conventions: Mapping[str, str | None], languages: Mapping[str, str]) -> None:
        self._conventions = conventions
        self._languages = languages

    @property
    def conventions(self) -> Mapping[str, str | None]:
        """Language -> its convention: the same object for every map of one pipeline."""
        return self._conventions

    def private(self, path: str, symbols: Sequence[Symbol], index: int) -> bool:
        """Whether another file has less use for the definition: not public by its language's
        convention, except that in C and C++ (``header``) only a ``static`` definition is private
        (a function defined in a ``.c`` file is what some header declares)."""
        language = self._languages.get(path)
        convention = self._conventions.get(language) if language is not None else None
        if convention == "header":
            return is_static(symbols[index])
        return is_public(convention, symbols, index, path) is False

    def public(self, path: str, symbols: Sequence[Symbol], index: int) -> bool | None:
        language = self._languages.get(path)
        convention = self._conventions.get(language) if language is not None else None
        return is_public(convention, symbols, index, path)
