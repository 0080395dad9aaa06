"""Files that read like what the agent is working on: BM25 of each file against the request.

The graph and the history say which files are *connected* to the chat files; a file that is
about the same thing (the same names, the same words) is often what changes next without a
reference between them: BM25 over file texts ranked the first changed file higher than the map
did on held-out repositories (issue 24). Here each file's words are its identifiers as the
tags hold them (defined names and used names, each occurrence, split into parts by
:func:`hybridmap.languages.lexical.name_words`), the words of its definitions' signatures and doc lines,
and the parts of its path; the query is the words of the chat and edited files, the
identifiers the user named and the words of the user's message. A request with no chat or
edited file reads each file's whole text instead (``FileTags.words``, the path's parts added;
``text_similarity_message_full_text``): a message is prose, and reads like the comments and
strings of the files it is about. With chat or edited files, ``text_similarity_chat_full_text_share``
of each file's similarity comes from BM25 of the chat files' whole text against each file's
whole text, the rest from the names (each over its best file's score): the names alone missed
files that share a chat file's prose, the whole text alone matched boilerplate (jq's co-edit MRR
0.389 -> 0.256). The ``text_similarity_files`` best files (``text_similarity_message_files``
for a request with no chat or edited file; chat files excepted), with chat or edited files only
those scoring at least ``text_similarity_min_share`` of the best one's, get
``text_similarity_personalization`` of teleport, and their best definition
``text_similarity_boost`` times the best definition score, each times the file's score over the
best file's.

The words, the BM25 and what is kept between maps are :mod:`hybridmap.pipeline.rank.lexical`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....languages.lexical import name_words
from ..context import FileFactor, Mass, RankContext, Signal

#: The reason a lifted file gives.
WHY = "reads like the chat files or the request"
_NONE = np.zeros(0, np.int64)


def _boost(ctx: RankContext) -> float:
    """The boost of this request: files' words are a richer query than a message's identifiers
    alone, and a wrong first file costs more than none (``text_similarity_message_boost``)."""
    settings = ctx.settings
    return settings.text_similarity_boost if ctx.chat or ctx.edited else settings.text_similarity_message_boost


def _reach(ctx: RankContext) -> int:
    """How many files the weights reach in this request: a chat file's words lift further down
    their files than a message's (``text_similarity_message_files``)."""
    settings = ctx.settings
    return settings.text_similarity_files if ctx.chat or ctx.edited else settings.text_similarity_message_files


def _min_share(ctx: RankContext) -> float:
    """The least share of the best file's score a reached file needs to be lifted: a chat
    request's ``text_similarity_min_share``; none for a message, whose far files cost it no
    definitions it needs and find targets (its recall 0.790 -> 0.783 with the floor, mean of
    eleven corpora)."""
    return ctx.settings.text_similarity_min_share if ctx.chat or ctx.edited else 0.0


def _fused(names: np.ndarray, full: np.ndarray, full_share: float, chat: Sequence[int]) -> np.ndarray:
    """Each file's names score and whole-text score, each over its best non-chat file's, mixed."""
    for scores in (names, full):
        scores[list(chat)] = 0.0
    tops = [float(s.max()) if len(s) else 0.0 for s in (names, full)]
    mixed = np.zeros_like(names)
    for scores, top, share in ((names, tops[0], 1 - full_share), (full, tops[1], full_share)):
        if top > 0:
            mixed += share * scores / top
    return mixed


@dataclass(frozen=True)
class TextSimilarity(Signal):
    """Files whose words best match the chat and edited files' words and the named identifiers
    (see the module docstring)."""

    name: ClassVar[str] = "text_similarity"

    def _similar(self, ctx: RankContext) -> list[tuple[int, float]]:
        settings = ctx.settings
        if _reach(ctx) <= 0 or not (ctx.chat or ctx.edited or ctx.idents or ctx.message_words):
            return []
        if _boost(ctx) <= 0 and settings.text_similarity_personalization <= 0:
            return []
        key = (
            ctx.chat,
            ctx.edited,
            ctx.idents,
            ctx.message_words,
            _reach(ctx),
            _min_share(ctx),
            settings.text_similarity_message_full_text,
            settings.text_similarity_chat_full_text_share,
        )
        return ctx.lexical.answer(ctx.graph, key, lambda: self._answer(ctx))

    def _answer(self, ctx: RankContext) -> list[tuple[int, float]]:
        settings = ctx.settings
        whole_text = settings.text_similarity_message_full_text and not (ctx.chat or ctx.edited)
        lexical = ctx.lexical
        model = lexical.model_for(ctx.graph, ctx.tags, whole_text)
        sources = dict.fromkeys((*ctx.chat, *ctx.edited))
        full_share = settings.text_similarity_chat_full_text_share
        fused = bool(sources) and not whole_text and full_share > 0
        # Both models first: a named word only a whole text holds has an id once that model exists.
        full = lexical.model_for(ctx.graph, ctx.tags, True) if fused else None
        named = [p for ident in ctx.idents for p in name_words(ident)]
        named += ctx.message_words
        named_ids = lexical.word_ids(named)
        query = np.union1d(named_ids, np.concatenate([_NONE, *(model.words_of(fi) for fi in sources)]))
        scores = model.scores(query, ctx.n)
        if full is not None:
            full_query = np.union1d(named_ids, np.concatenate([_NONE, *(full.words_of(fi) for fi in sources)]))
            scores = _fused(scores, full.scores(full_query, ctx.n), full_share, ctx.chat)
        for fi in ctx.chat:  # the model has them; an edited file it may not, and it reads like itself
            scores[fi] = 0.0
        best = np.argsort(-scores, kind="stable")[: _reach(ctx)]
        top = float(scores[best[0]]) if len(best) else 0.0
        if top <= 0:
            return []
        floor = _min_share(ctx) * top
        return [(int(fi), float(scores[fi]) / top) for fi in best if scores[fi] > 0 and scores[fi] >= floor]

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        weight = ctx.settings.text_similarity_personalization
        if weight > 0:
            for fi, share in self._similar(ctx):
                yield Mass(fi, weight * share, WHY)

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        """No factor: the reason only (the boost itself is on the definitions, below)."""
        if _boost(ctx) > 0:
            for fi, _ in self._similar(ctx):
                yield FileFactor(fi, why=WHY)

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        """The best definition of each similar file gets ``text_similarity_boost`` times its share
        times the best score of any definition: added after PageRank, since a file the chat
        files do not reach has almost no rank for a multiplier to scale."""
        weight = _boost(ctx)
        if weight > 0 and len(scores):
            ctx.lift_best_definitions(scores, self._similar(ctx), weight)
        return scores
