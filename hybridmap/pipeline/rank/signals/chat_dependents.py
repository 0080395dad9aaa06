"""Files that reference a chat file: its callers, importers and tests, often edited with it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ....languages.paths import boost_scale
from ..context import FileFactor, Mass, RankContext, Signal

_WHY = "references a chat file"


@dataclass(frozen=True)
class ChatDependents(Signal):
    """The reverse of :class:`~.chat_neighbors.ChatNeighbors`: PageRank follows references
    forward only, so the users of the edited file get nothing from it. Each file with an edge
    into a chat file gets ``chat_dependent_personalization`` and ``chat_dependent_boost``
    (scaled by :func:`~hybridmap.languages.paths.boost_scale`) added to its multiplier."""

    name: ClassVar[str] = "chat_dependents"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        amount = ctx.settings.chat_dependent_personalization
        if amount:
            for fi in ctx.chat_users:
                yield Mass(fi, amount, _WHY)

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        boost = ctx.settings.chat_dependent_boost
        if boost:
            for si in ctx.chat_users:
                yield FileFactor(si, plus=boost * boost_scale(ctx.graph.files[si], ctx.settings), why=_WHY)
