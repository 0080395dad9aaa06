"""Files the user named: PageRank restarts from them, and their rank is multiplied."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..context import FileFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class MentionedFiles(Signal):
    """Each mentioned file gets ``mentioned_file_personalization`` and ``mentioned_file_boost``
    on its multiplier."""

    name: ClassVar[str] = "mentioned_files"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        for fi in ctx.mentioned_files:
            yield Mass(fi, ctx.settings.mentioned_file_personalization, "mentioned file")

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        for fi in ctx.mentioned_files:
            yield FileFactor(fi, times=ctx.settings.mentioned_file_boost)
