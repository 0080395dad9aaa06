"""The files being edited: what they use matters, and PageRank restarts from them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..context import EdgeFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class ChatFiles(Signal):
    """Edges leaving a chat file weigh ``chat_file_reference_weight``; each chat file gets
    ``chat_file_personalization``. (Chat files are never items of the map: the ranker's rule.)"""

    name: ClassVar[str] = "chat_files"

    def edge_factors(self, ctx: RankContext) -> Iterator[EdgeFactor]:
        for fi in ctx.chat:
            rows = ctx.graph.edges_by_src.get(fi)
            if rows is not None:
                yield EdgeFactor(rows, ctx.settings.chat_file_reference_weight)

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        for fi in ctx.chat:
            yield Mass(fi, ctx.settings.chat_file_personalization, "chat file")
