"""Private definitions matter less to other files: Go's ``privateThing`` under ``PublicThing``.

A definition the language's convention keeps private (:mod:`hybridmap.visibility`: a leading
underscore in Python, a lowercase first letter in Go, no ``export`` in TypeScript, no ``pub`` in
Rust, ``private``/no ``public`` in Java and C#, ``defp`` in Elixir, ``static`` in C and C++...)
is something another file cannot call, so a map for editing another file has less
use for it. Aider weighs ``_private`` names 0.1 on the graph's edges (``private_ident_weight``);
this applies every language's convention to the definitions' scores.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...graph import RepoGraph
from ..context import RankContext, Signal

#: Per graph, which symbols are private (computed once: conventions do not change with requests).
_PRIVATE: weakref.WeakKeyDictionary[RepoGraph, tuple[object, np.ndarray]] = weakref.WeakKeyDictionary()


def private_mask(ctx: RankContext) -> np.ndarray:
    """One bool per symbol of ``ctx.graph``: private by its file's language convention."""
    graph, visibility = ctx.graph, ctx.visibility
    # A graph's files keep their languages; the conventions are the pipeline's, one object.
    key = visibility.conventions if visibility is not None else None
    held = _PRIVATE.get(graph)
    if held is not None and held[0] is key:
        return held[1]
    mask = np.zeros(len(graph.symbol_file), dtype=bool)
    if visibility is not None:
        files, tags = graph.files, ctx.tags
        for k, (fi, local) in enumerate(zip(graph.symbol_file.tolist(), graph.symbol_local.tolist(), strict=True)):
            path = files[fi]
            file_tags = tags.get(path)
            if file_tags is not None and visibility.private(path, file_tags.symbols, local):
                mask[k] = True
    _PRIVATE[graph] = (key, mask)
    return mask


@dataclass(frozen=True)
class PrivateDefinitions(Signal):
    """The score of a definition private by its language's convention is multiplied by
    ``private_definition_weight``, unless it is in a chat file's directory (a package's own
    files use its private names). It runs before the mentions' boosts, so a private definition
    the user named is still pinned first."""

    name: ClassVar[str] = "private_definitions"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        weight = ctx.settings.private_definition_weight
        if weight == 1.0 or ctx.visibility is None or not len(scores):
            return scores
        mask = private_mask(ctx)
        if ctx.chat:
            graph = ctx.graph
            near = {graph.files[fi].rpartition("/")[0] for fi in ctx.chat}
            own = np.fromiter((f.rpartition("/")[0] in near for f in graph.files), dtype=bool, count=ctx.n)
            mask = mask & ~own[graph.symbol_file]
        scores[mask] *= weight
        return scores
