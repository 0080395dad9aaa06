"""A map of a change: the changed definitions first, then the definitions that use them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...graph.neighbourhood import enclosing
from ..context import RankContext, Signal


@dataclass(frozen=True)
class ChangedCode(Signal):
    """Only in a map of a change (``ctx.changed``; the changed files are chat files for every
    other signal). The definitions enclosing a use of a changed definition (its callers, in the
    files :class:`~.change_users.ChangeUsers` lifts) get ``diff_caller_boost`` times the best
    unchanged score added; then the changed definitions are put above everything: the change is
    what the map is of. Last in the signal list, so no later boost (the decay within a file)
    can push a changed definition below an unchanged one."""

    name: ClassVar[str] = "changed_code"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        if not ctx.changed or not len(scores):
            return scores
        changed = ctx.changed_symbol_rows
        boost = ctx.settings.diff_caller_boost
        if boost and ctx.change_users:
            callers = _caller_rows(ctx)
            callers = callers[~np.isin(callers, changed)]
            if len(callers):
                unchanged = np.delete(scores, changed) if len(changed) else scores
                scores[callers] += boost * float(unchanged.max(initial=0.0))
        if len(changed):
            scores[changed] += scores.max()
        return scores


def _caller_rows(ctx: RankContext) -> np.ndarray:
    """Rows of the innermost definitions that enclose a use of a changed name, in the files
    :attr:`~..context.RankContext.change_users` lists."""
    graph = ctx.graph
    rows = ctx.rows_of(ctx.change_users)
    out: list[int] = []
    for fi, used in ctx.change_users.items():
        wanted = frozenset(name for name, _ in used)
        tags = ctx.tags[graph.files[fi]]
        for line in {ref.line for ref in tags.references if ref.name in wanted}:
            row = rows.get((fi, enclosing(tags, line)))
            if row is not None:
                out.append(row)
    return np.unique(np.asarray(out, dtype=np.intp))
