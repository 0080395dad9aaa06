"""Files that use a mentioned identifier: the callers of what the user named.

Mentioning ``compute_total`` lifts the file that defines it (:mod:`.mentioned_idents`), but
PageRank flows from a file to what it uses, never back: the file that *calls* it gained
nothing, and lost rank to the definer. Mistral Vibe weighs a file containing a reference of the
user's word 25 times; here it is a personalization of each such file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..context import FileFactor, Mass, RankContext, Signal


@dataclass(frozen=True)
class ReferenceNames(Signal):
    """Each file with an edge using a mentioned identifier (not a file defining it) gets
    ``reference_name_personalization`` and ``reference_name_boost`` (added to its multiplier),
    once per identifier; an identifier used by more than ``reference_name_max_files`` files
    lifts none (a name everything uses says nothing about the task)."""

    name: ClassVar[str] = "reference_names"

    def _users(self, ctx: RankContext) -> Iterator[tuple[int, str]]:
        graph, settings = ctx.graph, ctx.settings
        for ident in ctx.idents:
            rows = graph.edges_by_ident.get(graph.ident_index.get(ident, -1))
            if rows is None:
                continue
            definers = set(graph.definers.get(ident, ()))
            users = set(graph.edge_src[rows].tolist()) - definers - ctx.chat_set
            if len(users) <= settings.reference_name_max_files:
                for fi in sorted(users):
                    yield fi, f"uses mentioned '{ident}'"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        amount = ctx.settings.reference_name_personalization
        if amount and ctx.idents:
            for fi, why in self._users(ctx):
                yield Mass(fi, amount, why)

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        boost = ctx.settings.reference_name_boost
        if boost and ctx.idents:
            for fi, why in self._users(ctx):
                yield FileFactor(fi, plus=boost, why=why)
