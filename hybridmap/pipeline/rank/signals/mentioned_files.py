"""Files the user named: PageRank restarts from them, and their rank is multiplied."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import FileFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class MentionedFiles(Signal):
    """Each mentioned file gets ``mentioned_file_personalization`` and ``mentioned_file_boost``
    on its multiplier (the pin of a file named by path or name: :class:`NamedFilesFirst`)."""

    name: ClassVar[str] = "mentioned_files"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        for fi in ctx.mentioned_files:
            yield Mass(fi, ctx.settings.mentioned_file_personalization, "mentioned file")

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        for fi in ctx.mentioned_files:
            yield FileFactor(fi, times=ctx.settings.mentioned_file_boost)


@dataclass(frozen=True)
class NamedFilesFirst(Signal):
    """With ``pin_mentioned_files``, the best definition of each file named by path or name goes
    above everything ranked so far: the definitions of named identifiers (``text``, ``width``:
    often defined in many files) and the files lifted for reading like the request. It runs
    after those lifts, which add to the best score they find, and before ``pairs_follow``, so
    the named file's test follows it."""

    name: ClassVar[str] = "named_files_first"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        if not (ctx.settings.pin_mentioned_files and ctx.named_files and len(scores)):
            return scores
        top = float(scores.max())
        if top <= 0:
            return scores
        ctx.add_to_best_definitions(scores, ((fi, top) for fi in ctx.named_files if fi not in ctx.chat_set))
        return scores
