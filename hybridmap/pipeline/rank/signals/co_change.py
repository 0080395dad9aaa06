"""Files the history changed together with the ones being edited: their likely co-edits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import FileFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class CoChangePartners(Signal):
    """Each history partner of a chat or edited file (:mod:`hybridmap.pipeline.inputs.cochange`) gets
    ``co_change_personalization`` and ``co_change_boost`` (added to its multiplier), each times
    min(shared commits / ``co_change_scale``, ``co_change_cap``), per partnership, and its best
    definition a lift (``co_change_definition_boost``) that does not depend on its PageRank."""

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

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        """Each partner's best definition gets ``co_change_definition_boost`` times its units over
        the most any partner has, times the reference score (:meth:`RankContext.lift_best_definitions`).
        Relative to the best partner, not to ``co_change_cap``: over the cap, chi and sphinx
        gained more MRR and hono less (docs/evaluation.md, "History partners lifted")."""
        weight = ctx.settings.co_change_definition_boost
        if weight > 0 and len(scores):
            units: dict[int, float] = {}
            for pi, share, _ in self._partners(ctx):
                units[pi] = units.get(pi, 0.0) + share
            top = max(units.values(), default=0.0)
            if top > 0:
                ctx.lift_best_definitions(scores, ((pi, u / top) for pi, u in units.items()), weight)
        return scores


def _why(shared: int) -> str:
    return f"committed with a chat file in {shared} commit{'' if shared == 1 else 's'}"
