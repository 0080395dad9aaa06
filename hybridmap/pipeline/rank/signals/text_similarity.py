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
strings of the files it is about. The ``text_similarity_files`` best
files (chat files excepted) get ``text_similarity_personalization`` of teleport, and their
best definition ``text_similarity_boost`` times the best definition score, each times the
file's score over the best file's.

BM25 is computed here with numpy, not with SQLite FTS5 (:mod:`hybridmap.languages.lexical`, what the
eval's lexical peer uses): an FTS5 ``OR`` query of a file's 64 most frequent words took 62 ms
on 237 files (256 words: 260 ms), where gathering the postings of the query's words and summing
them takes well under a millisecond. Same formula as FTS5's ``bm25()`` (Okapi, k1 = 1.2,
b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at a small positive value), each query
word counted once; a test checks the two agree.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ....languages.lexical import decode_words, name_words, word_counts
from ....model import FileTags
from ...graph.repo_graph import RepoGraph
from ..context import FileFactor, Mass, RankContext, Signal

#: Okapi BM25's constants, as SQLite FTS5's ``bm25()`` has them.
K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a word in more than half the files (its formula turns negative).
MIN_IDF = 1e-6
#: The reason a lifted file gives.
WHY = "reads like the chat files or the request"


def file_words(path: str, tags: FileTags | None) -> Counter[str]:
    """A file's words: the parts of its path, of every name it defines and of every name it
    uses, and the words of its definitions' signatures and doc lines. Names are counted before
    they are split (a file uses a few names many times), the rest in one pass over it joined:
    the standard library's 1,790 files took 2.4 s with a pass per name and per signature."""
    if tags is None:
        return word_counts(path)
    symbols = tags.symbols
    names = Counter(tags.ref_names)
    names.update(s.name for s in symbols)
    counts = word_counts("\n".join((path, *(s.signature for s in symbols), *(s.doc for s in symbols))))
    for name, times in names.items():
        for part in name_words(name):
            counts[part] += times
    return counts


def file_text_words(path: str, tags: FileTags | None) -> Counter[str]:
    """A file's words from its whole text (``FileTags.words``) and its path; its names'
    words (:func:`file_words`) when the parse did not count them (a server's or an old entry)."""
    if tags is None or not tags.words:
        return file_words(path, tags)
    counts = decode_words(tags.words)
    counts.update(word_counts(path))
    return counts


class Vocabulary:
    """Word -> a small integer, for the words of every file seen: each file's words are then
    two arrays (ids, counts), and a graph's model is their concatenation (no Python loop over
    words per graph). Grows with the distinct words only."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def vector(self, counts: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
        """``counts`` as (word ids, counts), the ids ascending."""
        ids = self._ids
        pairs = sorted((ids.setdefault(w, len(ids)), c) for w, c in counts.items())
        return np.fromiter((i for i, _ in pairs), np.int64, len(pairs)), np.fromiter(
            (c for _, c in pairs), np.float64, len(pairs)
        )

    def known(self, words: Sequence[str]) -> np.ndarray:
        """The ids of the words already seen, once each."""
        found = {self._ids[w] for w in words if w in self._ids}
        return np.fromiter(sorted(found), np.int64, len(found))


@dataclass(frozen=True, slots=True)
class LexicalModel:
    """A graph's files as BM25 sees them: each file's word ids and counts, end to end."""

    starts: np.ndarray
    """File f's words are ``ids[starts[f]:starts[f + 1]]``."""
    ids: np.ndarray
    counts: np.ndarray
    owner: np.ndarray
    """The file of each entry."""
    norm: np.ndarray
    """Per entry: k1 (1 - b + b |d| / avg|d|) of its file."""
    frequency: np.ndarray
    """Per word id: how many files hold it."""
    _postings: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list, compare=False, repr=False)
    """:meth:`postings`, once made (a list: the record is frozen, its postings are made lazily)."""

    @classmethod
    def of(cls, vectors: Sequence[tuple[np.ndarray, np.ndarray]], vocabulary_size: int) -> LexicalModel:
        n = len(vectors)
        sizes = np.fromiter((len(v[0]) for v in vectors), np.int64, n)
        starts = np.zeros(n + 1, np.int64)
        np.cumsum(sizes, out=starts[1:])
        ids = np.concatenate([v[0] for v in vectors]) if n else np.zeros(0, np.int64)
        counts = np.concatenate([v[1] for v in vectors]) if n else np.zeros(0)
        owner = np.repeat(np.arange(n), sizes)
        lengths = np.bincount(owner, weights=counts, minlength=n) if n else np.zeros(0)
        average = float(lengths.mean()) if n and lengths.sum() > 0 else 1.0
        norm = K1 * (1 - B + B * lengths[owner] / average)
        frequency = np.bincount(ids, minlength=vocabulary_size)
        return cls(starts, ids, counts, owner, norm, frequency)

    def words_of(self, fi: int) -> np.ndarray:
        return self.ids[self.starts[fi] : self.starts[fi + 1]]

    def postings(self) -> tuple[np.ndarray, np.ndarray]:
        """(entries ordered by word id, each word id's first place in that order): which entries
        hold a word, without a pass over every entry of a large repository per request."""
        if not self._postings:  # built on the first request this model answers, then kept with it
            order = np.argsort(self.ids, kind="stable")
            self._postings.append((order, np.searchsorted(self.ids[order], np.arange(len(self.frequency) + 1))))
        return self._postings[0]

    def scores(self, query: np.ndarray, n: int) -> np.ndarray:
        """Each file's BM25 score for the word ids ``query`` (each counted once)."""
        if not len(query) or not len(self.ids):
            return np.zeros(n)
        order, firsts = self.postings()
        known = query[(query >= 0) & (query < len(self.frequency))]
        runs = [order[firsts[w] : firsts[w + 1]] for w in known.tolist()]
        # Entry order, as a mask over every entry would give: the sums below add in the same order.
        hit = np.sort(np.concatenate(runs)) if runs else np.zeros(0, np.intp)
        ids, tf = self.ids[hit], self.counts[hit]
        held = self.frequency[ids].astype(np.float64)
        idf = np.maximum(np.log((n - held + 0.5) / (held + 0.5)), MIN_IDF)
        weights = idf * tf * (K1 + 1) / (tf + self.norm[hit])
        return np.bincount(self.owner[hit], weights=weights, minlength=n)


#: The words' ids, and each file's word vector by path with the tags it was read from: a new
#: graph after an edit re-reads only the files whose tags changed (an unchanged file's tags are
#: the same object).
_VOCABULARY = Vocabulary()
#: Keyed by (whole text?, path).
_VECTORS: dict[tuple[bool, str], tuple[FileTags | None, tuple[np.ndarray, np.ndarray]]] = {}


def _vector_of(path: str, tags: FileTags | None, whole_text: bool) -> tuple[np.ndarray, np.ndarray]:
    held = _VECTORS.get((whole_text, path))
    if held is not None and held[0] is tags:
        return held[1]
    vector = _VOCABULARY.vector(file_text_words(path, tags) if whole_text else file_words(path, tags))
    _VECTORS[(whole_text, path)] = (tags, vector)
    return vector


_NONE = np.zeros(0, np.int64)
#: Each graph's model (dropped with the graph), and each graph's last request's answer
#: (personalization and file factors both ask for it).
_MODELS: weakref.WeakKeyDictionary[RepoGraph, dict[bool, LexicalModel]] = weakref.WeakKeyDictionary()
_ANSWERS: weakref.WeakKeyDictionary[RepoGraph, tuple[object, list[tuple[int, float]]]] = weakref.WeakKeyDictionary()


#: The vocabulary and the vectors are the process's (two maps share words): maps built in two
#: threads at once (two repositories, each its own lock) take turns here.
_LOCK = threading.Lock()


def model_for(graph: RepoGraph, tags: Mapping[str, FileTags], whole_text: bool = False) -> LexicalModel:
    """The graph's lexical model (of its files' names' words, or of their whole texts), built
    from ``tags`` (the graph's own) the first time."""
    with _LOCK:
        models = _MODELS.setdefault(graph, {})
        model = models.get(whole_text)
        if model is None:
            vectors = [_vector_of(path, tags.get(path), whole_text) for path in graph.files]
            model = models[whole_text] = LexicalModel.of(vectors, len(_VOCABULARY))
            live = set(graph.files)
            for key in [k for k in _VECTORS if k[1] not in live]:  # only the current files' words are kept
                del _VECTORS[key]
        return model


def _boost(ctx: RankContext) -> float:
    """The boost of this request: files' words are a richer query than a message's identifiers
    alone, and a wrong first file costs more than none (``text_similarity_message_boost``)."""
    settings = ctx.settings
    return settings.text_similarity_boost if ctx.chat or ctx.edited else settings.text_similarity_message_boost


@dataclass(frozen=True)
class TextSimilarity(Signal):
    """Files whose words best match the chat and edited files' words and the named identifiers
    (see the module docstring)."""

    name: ClassVar[str] = "text_similarity"

    def _similar(self, ctx: RankContext) -> list[tuple[int, float]]:
        settings = ctx.settings
        if settings.text_similarity_files <= 0 or not (ctx.chat or ctx.edited or ctx.idents or ctx.message_words):
            return []
        if _boost(ctx) <= 0 and settings.text_similarity_personalization <= 0:
            return []
        key = (
            ctx.chat,
            ctx.edited,
            ctx.idents,
            ctx.message_words,
            settings.text_similarity_files,
            settings.text_similarity_message_full_text,
        )
        held = _ANSWERS.get(ctx.graph)
        if held is not None and held[0] == key:
            return held[1]
        answer = self._answer(ctx)
        _ANSWERS[ctx.graph] = (key, answer)
        return answer

    def _answer(self, ctx: RankContext) -> list[tuple[int, float]]:
        settings = ctx.settings
        whole_text = settings.text_similarity_message_full_text and not (ctx.chat or ctx.edited)
        model = model_for(ctx.graph, ctx.tags, whole_text)
        sources = dict.fromkeys((*ctx.chat, *ctx.edited))
        named = [p for ident in ctx.idents for p in name_words(ident)]
        named += ctx.message_words
        with _LOCK:
            named_ids = _VOCABULARY.known(named)
        query = np.union1d(named_ids, np.concatenate([_NONE, *(model.words_of(fi) for fi in sources)]))
        scores = model.scores(query, ctx.n)
        for fi in ctx.chat:  # the model has them; an edited file it may not, and it reads like itself
            scores[fi] = 0.0
        best = np.argsort(-scores, kind="stable")[: settings.text_similarity_files]
        top = float(scores[best[0]]) if len(best) else 0.0
        if top <= 0:
            return []
        return [(int(fi), float(scores[fi]) / top) for fi in best if scores[fi] > 0]

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
        if weight <= 0 or not len(scores):
            return scores
        similar = self._similar(ctx)
        if not similar:
            return scores
        graph = ctx.graph
        outside = ~np.isin(graph.symbol_file, list(ctx.chat_set)) if ctx.chat else np.ones(len(scores), dtype=bool)
        reference = float(scores[outside].max()) if outside.any() else 0.0
        if reference <= 0:
            return scores
        starts = np.searchsorted(graph.symbol_file, np.arange(ctx.n + 1))
        for fi, share in similar:
            lo, hi = int(starts[fi]), int(starts[fi + 1])
            if hi > lo:
                best = lo + int(np.argmax(scores[lo:hi]))
                scores[best] += weight * share * reference
        return scores
