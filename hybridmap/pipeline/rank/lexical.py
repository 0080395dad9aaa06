"""The lexical index of a repository's files: each file's words as BM25 reads them.

:class:`LexicalIndex` is the one owner of what the text-similarity signal keeps between maps:
the words' ids (a :class:`Vocabulary`), each file's word vector with the tags it was read
from (a new graph after an edit re-reads only the files whose tags changed: an unchanged
file's tags are the same object), each graph's :class:`LexicalModel` (dropped with the graph)
and the last request's answer per graph. The map builder holds one per repository; two maps
built at once in two threads take turns on its lock.

BM25 is computed with numpy, not with SQLite FTS5 (:mod:`hybridmap.languages.lexical`, what
the eval's lexical peer uses): an FTS5 ``OR`` query of a file's 64 most frequent words took
62 ms on 237 files (256 words: 260 ms), where gathering the postings of the query's words and
summing them takes well under a millisecond. Same formula as FTS5's ``bm25()`` (Okapi,
k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at a small positive value),
each query word counted once; a test checks the two agree.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...languages.lexical import decode_words, name_words, word_counts
from ...model import FileTags
from ..graph.repo_graph import RepoGraph

#: Okapi BM25's constants, as SQLite FTS5's ``bm25()`` has them.
K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a word in more than half the files (its formula turns negative).
MIN_IDF = 1e-6


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


Answer = list[tuple[int, float]]
"""Files (graph indices), best first, each with its score over the best file's."""


class LexicalIndex:
    """One repository's words, vectors, models and last answers (see the module docstring)."""

    def __init__(self) -> None:
        self._vocabulary = Vocabulary()
        self._vectors: dict[tuple[bool, str], tuple[FileTags | None, tuple[np.ndarray, np.ndarray]]] = {}
        """(whole text?, path) -> (the tags it was read from, its vector)."""
        self._models: weakref.WeakKeyDictionary[RepoGraph, dict[bool, LexicalModel]] = weakref.WeakKeyDictionary()
        self._answers: weakref.WeakKeyDictionary[RepoGraph, tuple[object, Answer]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def _vector_of(self, path: str, tags: FileTags | None, whole_text: bool) -> tuple[np.ndarray, np.ndarray]:
        held = self._vectors.get((whole_text, path))
        if held is not None and held[0] is tags:
            return held[1]
        vector = self._vocabulary.vector(file_text_words(path, tags) if whole_text else file_words(path, tags))
        self._vectors[(whole_text, path)] = (tags, vector)
        return vector

    def model_for(self, graph: RepoGraph, tags: Mapping[str, FileTags], whole_text: bool = False) -> LexicalModel:
        """The graph's lexical model (of its files' names' words, or of their whole texts), built
        from ``tags`` (the graph's own) the first time."""
        with self._lock:
            models = self._models.setdefault(graph, {})
            model = models.get(whole_text)
            if model is None:
                vectors = [self._vector_of(path, tags.get(path), whole_text) for path in graph.files]
                model = models[whole_text] = LexicalModel.of(vectors, len(self._vocabulary))
                live = set(graph.files)
                for key in [k for k in self._vectors if k[1] not in live]:  # only current files' words are kept
                    del self._vectors[key]
            return model

    def word_ids(self, words: Sequence[str]) -> np.ndarray:
        """The ids of ``words`` the index has seen, once each."""
        with self._lock:
            return self._vocabulary.known(words)

    def answer(self, graph: RepoGraph, key: object, compute: Callable[[], Answer]) -> Answer:
        """The answer to request ``key`` on ``graph``: computed once, asked for by each of a
        request's phases (personalization, file factors, boosts)."""
        with self._lock:
            held = self._answers.get(graph)
        if held is not None and held[0] == key:
            return held[1]
        answer = compute()  # outside the lock: it takes it to build the model
        with self._lock:
            self._answers[graph] = (key, answer)
        return answer
