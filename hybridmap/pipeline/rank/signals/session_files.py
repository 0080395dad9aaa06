"""Files the agent touched in this session: PageRank restarts from them (SoulForge's weights)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..context import Mass, RankContext, Signal


@dataclass(frozen=True)
class SessionEvents(Signal):
    """Each edited file gets ``edited_file_personalization``, each read file
    ``read_file_personalization``, the active file ``active_file_personalization``. Unlike chat
    files they stay items of the map: the agent saw them once, not necessarily in this turn."""

    name: ClassVar[str] = "session_files"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        settings = ctx.settings
        for files, amount, why in (
            (ctx.edited, settings.edited_file_personalization, "edited in this session"),
            (ctx.read, settings.read_file_personalization, "read in this session"),
            (ctx.active, settings.active_file_personalization, "active file"),
        ):
            if amount > 0:
                for fi in files:
                    yield Mass(fi, amount, why)
