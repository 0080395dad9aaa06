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
    out: list[int] = []
    for fi, used in ctx.change_users.items():
        wanted = frozenset(name for name, _ in used)
        tags = ctx.tags[graph.files[fi]]
        lines = {ref.line for ref in tags.references if ref.name in wanted}
        if not lines:
            continue
        rows = np.flatnonzero(graph.symbol_file == fi)
        local_to_row = dict(zip(graph.symbol_local[rows].tolist(), rows.tolist(), strict=True))
        for line in lines:
            best = enclosing(tags, line)
            if best >= 0 and best in local_to_row:
                out.append(local_to_row[best])
    return np.unique(np.asarray(out, dtype=np.intp))
