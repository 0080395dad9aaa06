"""Identifiers the user named: their uses, their definers and their definitions rise."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import EdgeFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class MentionedIdents(Signal):
    """Edges using a mentioned identifier weigh ``mentioned_ident_weight``; every file defining
    one gets ``mentioned_ident_definer_personalization``; the definitions of that name are
    multiplied by ``mentioned_definition_boost`` and, with ``pin_mentioned_definitions``, put
    above everything else (what the user named is shown first, whatever the graph thinks)."""

    name: ClassVar[str] = "mentioned_idents"

    def edge_factors(self, ctx: RankContext) -> Iterator[EdgeFactor]:
        graph = ctx.graph
        for ident in ctx.idents:
            rows = graph.edges_by_ident.get(graph.ident_index.get(ident, -1))
            if rows is not None:
                yield EdgeFactor(rows, ctx.settings.mentioned_ident_weight)

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        for ident in ctx.idents:
            for fi in ctx.graph.definers.get(ident, ()):
                yield Mass(fi, ctx.settings.mentioned_ident_definer_personalization, f"defines mentioned '{ident}'")

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        if not ctx.idents:
            return scores
        graph = ctx.graph
        boost = np.isin(graph.symbol_name, graph.names.numbers(ctx.idents))
        scores[boost] *= ctx.settings.mentioned_definition_boost
        if ctx.settings.pin_mentioned_definitions and boost.any():
            scores[boost] += scores.max()
        return scores
