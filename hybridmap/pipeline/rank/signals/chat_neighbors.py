"""Files a chat file references: what the edited code calls is likely needed to edit it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ....languages.paths import boost_scale
from ..context import FileFactor, RankContext, Signal


@dataclass(frozen=True)
class ChatNeighbors(Signal):
    """Each file a chat file has an edge to gets ``chat_neighbor_boost`` (scaled by
    :func:`~hybridmap.languages.paths.boost_scale`) added to its multiplier, once per chat file."""

    name: ClassVar[str] = "chat_neighbors"

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        boost = ctx.settings.chat_neighbor_boost
        if not ctx.chat or not boost:
            return
        graph = ctx.graph
        for fi in ctx.chat:
            rows = graph.edges_by_src.get(fi)
            if rows is None:
                continue
            for di in set(graph.edge_dst[rows].tolist()) - ctx.chat_set:
                plus = boost * boost_scale(graph.files[di], ctx.settings)
                yield FileFactor(di, plus=plus, why="referenced by a chat file")
