"""A symbol's neighbourhood (``map --symbol``): its definitions, then its callers and callees."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import Mass, RankContext, Signal

_WHY = {"definition": "defines '{}'", "caller": "calls '{}' ({} away)", "callee": "called from '{}' ({} away)"}


@dataclass(frozen=True)
class SymbolNeighbourhood(Signal):
    """Only in a map of a symbol's neighbourhood (``ctx.neighbourhood``): each file holding a
    neighbour gets ``chat_file_personalization`` (the rest of the map ranks around them), and the
    neighbours are put above everything, nearest first: the definitions, then what is one call
    away either way, then two... Last in the signal list, so nothing after it reorders them."""

    name: ClassVar[str] = "symbol_neighbourhood"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        hood = ctx.neighbourhood
        if hood is None:
            return
        index = ctx.graph.index
        said: set[int] = set()
        for (path, _), (relation, distance) in sorted(hood.related.items(), key=lambda kv: kv[1][1]):
            fi = index.get(path)
            if fi is not None and fi not in said:
                said.add(fi)
                why = _WHY[relation].format(hood.query.name, distance)
                yield Mass(fi, ctx.settings.chat_file_personalization, why)

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        hood = ctx.neighbourhood
        if hood is None or not len(scores):
            return scores
        top = float(scores.max(initial=0.0)) + 1.0
        rows = ctx.symbol_rows
        farthest = max((distance for _, distance in hood.related.values()), default=0)
        for key, (_, distance) in hood.related.items():
            row = rows.get(key)
            if row is not None:
                scores[row] += top * (farthest + 1 - distance)
        return scores
