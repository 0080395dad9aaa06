"""A map of a change: files that use a changed definition rise (the change's blast radius)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ....languages.paths import boost_scale
from ..context import FileFactor, RankContext, Signal


@dataclass(frozen=True)
class ChangeUsers(Signal):
    """Only in a map of a change: each file with a use of a changed definition (an edge into its
    file through its name; resolved where a server resolved it, name-matched otherwise) gets
    ``diff_user_boost`` (scaled by :func:`~hybridmap.languages.paths.boost_scale`) added to its
    multiplier (off by default), and the reason names what it uses and how the use was found
    (``lsp``, ``scip``: resolved; ``name-match``: by name only), whatever the weight."""

    name: ClassVar[str] = "change_users"

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        boost = ctx.settings.diff_user_boost  # 0: the reason alone (plus 0 changes no multiplier)
        for fi, used in ctx.change_users.items():
            plus = boost * boost_scale(ctx.graph.files[fi], ctx.settings)
            said = ", ".join(f"'{name}' ({provenance})" for name, provenance in used[:2])
            yield FileFactor(fi, plus=plus, why=f"uses changed {said}")
