"""Files whose path names a mentioned word (``--mention store`` lifts ``store/...``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from ..context import Mass, RankContext, Signal


@dataclass(frozen=True)
class PathMentions(Signal):
    """A file one of whose path parts (or its stem) equals a mentioned identifier, ignoring
    case, gets ``path_match_personalization``."""

    name: ClassVar[str] = "path_mentions"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        words = {ident.lower() for ident in ctx.idents}
        if not words:
            return
        amount = ctx.settings.path_match_personalization
        for fi, path in enumerate(ctx.graph.files):
            posix = PurePosixPath(path)
            hit = ({part.lower() for part in posix.parts} | {posix.stem.lower()}) & words
            if hit:
                yield Mass(fi, amount, f"path matches '{sorted(hit)[0]}'")
