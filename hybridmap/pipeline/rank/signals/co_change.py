"""Files the history changed together with the ones being edited: their likely co-edits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..context import FileFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class CoChangePartners(Signal):
    """Each history partner of a chat or edited file (:mod:`hybridmap.pipeline.inputs.cochange`) gets
    ``co_change_personalization`` and ``co_change_boost`` (added to its multiplier), each times
    min(shared commits / ``co_change_scale``, ``co_change_cap``), per partnership."""

    name: ClassVar[str] = "co_change"

    def _partners(self, ctx: RankContext) -> Iterator[tuple[int, float, int]]:
        history = ctx.co_change
        if history is None or not history.partners:
            return
        graph, settings = ctx.graph, ctx.settings
        sources = dict.fromkeys((*ctx.chat, *ctx.edited))
        for fi in sources:
            for partner, shared in history.of(graph.files[fi]).items():
                pi = graph.index.get(partner)
                if pi is not None and pi not in sources:
                    yield pi, min(shared / settings.co_change_scale, settings.co_change_cap), shared

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        weight = ctx.settings.co_change_personalization
        if weight > 0:
            for pi, units, shared in self._partners(ctx):
                yield Mass(pi, weight * units, _why(shared))

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        weight = ctx.settings.co_change_boost
        if weight > 0:
            for pi, units, shared in self._partners(ctx):
                yield FileFactor(pi, plus=weight * units, why=_why(shared))


def _why(shared: int) -> str:
    return f"committed with a chat file in {shared} commit{'' if shared == 1 else 's'}"
