"""Files whose path names a mentioned word (``--mention store`` lifts ``store/...``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import Mass, PerFileList, RankContext, Signal


@dataclass(frozen=True, slots=True)
class PathWords:
    """A listing's path parts and stems, lowercased, each -> the files (graph indices) holding it:
    made once per listing, so a request that names words looks them up instead of splitting
    every path."""

    parts: dict[str, tuple[int, ...]]
    """A directory name, file name or stem -> the files with it in their path."""
    stems: dict[str, tuple[int, ...]]
    """A file's stem (its name without the last suffix), without leading underscores (a private
    module, ``_docstrings.py``, is named ``docstrings`` in prose) -> the files of that stem."""

    @classmethod
    def of(cls, files: Iterable[str]) -> PathWords:
        parts: dict[str, list[int]] = {}
        stems: dict[str, list[int]] = {}
        for fi, path in enumerate(files):
            pieces = path.lower().split("/")
            name = pieces[-1]
            dot = name.rfind(".")
            stem = name[:dot] if 0 < dot < len(name) - 1 else name  # PurePosixPath.stem's rule
            for piece in {*pieces, stem}:
                parts.setdefault(piece, []).append(fi)
            stems.setdefault(stem.lstrip("_") or stem, []).append(fi)
        return cls({k: tuple(v) for k, v in parts.items()}, {k: tuple(v) for k, v in stems.items()})


path_words: PerFileList[PathWords] = PerFileList(PathWords.of)


@dataclass(frozen=True)
class PathMentions(Signal):
    """A file one of whose path parts (or its stem) equals a mentioned identifier, ignoring
    case, gets ``path_match_personalization``. A file named by its stem (a mentioned word equal
    to it but for case and leading underscores, or a message's word that named it so) gets
    ``path_stem_mention_boost`` on its best definition, divided among the files the word names:
    the mass PageRank gives a file flows out to what it uses, so a directory's files would
    otherwise come before the one the word names (``fix(client)``: ``client/utils.ts`` before
    ``client/client.ts``)."""

    name: ClassVar[str] = "path_mentions"

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        words = {ident.lower() for ident in ctx.idents}
        if not words:
            return
        index = path_words(ctx.graph.files).parts
        hits: dict[int, list[str]] = {}
        for word in sorted(words):
            for fi in index.get(word, ()):
                hits.setdefault(fi, []).append(word)
        amount = ctx.settings.path_match_personalization
        for fi in sorted(hits):
            yield Mass(fi, amount, f"path matches '{hits[fi][0]}'")

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        weight = ctx.settings.path_stem_mention_boost
        if weight <= 0 or not len(scores):
            return scores
        named = set(ctx.named_files)
        shares = {fi: 1.0 for fi in ctx.mentioned_files if fi not in named}
        if ctx.idents:
            stems = path_words(ctx.graph.files).stems
            for word in {ident.lower().lstrip("_") for ident in ctx.idents}:
                files = stems.get(word, ())
                for fi in files:  # a word naming many files (``index``) names none of them much
                    shares[fi] = max(shares.get(fi, 0.0), 1.0 / len(files))
        for fi in ctx.chat:
            shares.pop(fi, None)
        if shares:
            ctx.lift_best_definitions(scores, sorted(shares.items()), weight)
        return scores
