"""The lexical index of a repository's files: each file's words as BM25 reads them.

:class:`LexicalIndex` is the one owner of what the text-similarity signal keeps between maps:
the words' ids (a :class:`Vocabulary`), each file's word vector with the tags it was read
from (a new graph after an edit re-reads only the files whose tags changed: an unchanged
file's tags are the same object), each graph's :class:`LexicalModel` (dropped with the graph;
the next graph's is made from the last one when an edit changed a few files) and the last
request's answer per graph. The map builder holds one per repository; two maps
built at once in two threads take turns on its lock.

Between processes: a process's first model of each kind is made from the lexicon the last
process kept (:mod:`hybridmap.store.lexicon`, handed in by the engine) when its files' paths and
tags' keys (:meth:`LexicalIndex.describe`) still match: only the other files' words are counted.
:meth:`LexicalIndex.to_keep` gives what to keep when this process counted any.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np

from ...infra.patched import changed_positions
from ...languages.lexical import decode_words, name_counts, word_counts
from ...model import FileTags
from ...store.lexicon import KeptLexicon, KeptModel
from ..graph.repo_graph import RepoGraph

#: The dtype of a model's per-entry arrays (word ids, counts, slots): 4 bytes an entry, not 8. The
#: 100,000-file monorepo's two models hold 12 M entries: 8-byte ids, slots and postings, and
#: float counts, were 384 MB of a one-shot map's peak. Counts are integers; BM25's arithmetic
#: meets them with float64 values first (idf, norms), so each score is the same float.
ENTRY = np.int32

#: Okapi BM25's constants, as SQLite FTS5's ``bm25()`` has them.
K1 = 1.2
B = 0.75
#: FTS5's floor for the idf of a word in half the files or more (its formula turns negative). Such
#: a word is left out of a query that has any other word: at most 2.2e-6 a file beside a rarer
#: word's 1 or more, it moved no map of the eleven eval corpora, and it was half of a query's
#: hits at 100,000 files (``def``, ``self``, ``return``: 40-60 % of the entries read per query,
#: the costliest stage of a map there). A query of such words only is scored with them.
MIN_IDF = 1e-6
#: A query whose hits are more than 1/MASK_SHARE of a model's entries finds them by marking a mask
#: over every entry rather than by sorting the hits (the same entries in the same order).
MASK_SHARE = 16
#: A query's hits are scored this many entries at a time (cut at slot starts), each run's
#: temporaries under 512 KB: in cache, and reused from the heap. All at once, a query at 100,000
#: files made ~30 MB arrays, which the allocator hands back to the kernel between maps and the
#: next map faults in again (4,000 page faults a query after an edit, which frees and allocates
#: the most). The whole-text query there, alternating in-process: 72-97 -> 57-63 ms; 1 << 18 and
#: 1 << 20 were between the two.
HITS_CHUNK = 1 << 16


def file_words(path: str, tags: FileTags | None) -> dict[str, int]:
    """A file's words: the parts of its path, of every name it defines and of every name it
    uses, and the words of its definitions' signatures and doc lines (the path's first, then in
    the order :func:`name_counts` gives). Counted at parse time (``FileTags.name_words``) when the
    parse did; else here, names before they are split (a file uses a few names many times)."""
    if tags is None:
        return dict(word_counts(path))
    rest = _decoded(tags.name_words)
    if rest is None:
        rest = name_counts(tags.symbols, tags.ref_names)
    merged = {word: times + rest.pop(word, 0) for word, times in word_counts(path).items()}
    merged.update(rest)
    return merged


def file_text_words(path: str, tags: FileTags | None) -> dict[str, int]:
    """A file's words from its whole text (``FileTags.words``) and its path; its names'
    words (:func:`file_words`) when the parse did not count them (a server's or an old entry)."""
    counts = _decoded(tags.words) if tags is not None else None
    if counts is None:
        return file_words(path, tags)
    for word, times in word_counts(path).items():
        counts[word] = counts.get(word, 0) + times
    return counts


def _decoded(words: str) -> dict[str, int] | None:
    """Words the parse counted, or None when it did not, or when they are not as it writes them
    (a damaged or planted cache entry: the caller counts them itself, and the map goes on)."""
    if not words:
        return None
    try:
        return decode_words(words)
    except ValueError:
        return None


class Vocabulary:
    """Word -> a small integer, for the words of every file seen: each file's words are then
    two arrays (ids, counts), and a graph's model is their concatenation (no Python loop over
    words per graph). Grows with the distinct words only."""

    def __init__(self, words: Sequence[str] = ()) -> None:
        self._ids: dict[str, int] = {w: i for i, w in enumerate(words)}

    @property
    def words(self) -> tuple[str, ...]:
        """Every word seen, word id i at i."""
        return tuple(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def vector(self, counts: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """``counts`` as (word ids, counts), in ``counts``' own order. Not sorted: nothing needs
        a file's ids in order (the postings sort all entries), and sorting each file's pairs was
        half the cost of a model (a first map with a chat file at 100,000 files builds two)."""
        ids, n = self._ids, len(counts)
        try:
            found = np.fromiter(map(ids.__getitem__, counts), ENTRY, n)
        except KeyError:  # a word not seen yet: numbered in the order it comes
            setdefault = ids.setdefault
            found = np.array([setdefault(w, len(ids)) for w in counts], ENTRY)
        return found, np.fromiter(counts.values(), ENTRY, n)

    def known(self, words: Sequence[str]) -> np.ndarray:
        """The ids of the words already seen, once each."""
        found = {self._ids[w] for w in words if w in self._ids}
        return np.fromiter(sorted(found), np.int64, len(found))


#: An edit's model is made from the last one (:meth:`LexicalModel.updated`) unless the files it
#: changes, or the entries no file points at any more, pass this share: then it is built afresh.
REBUILD_SHARE = 0.25
#: A process whose models all came from the kept lexicon keeps a new one only when it counted the
#: words of more than this share of the files: the next process adopts the older lexicon just as
#: well, counting those files again (an edit's few). Writing it anyway after a one-file edit at
#: 100,000 files sorted every entry again and wrote 185 MB: the high of that one-shot map.
KEPT_DRIFT_SHARE = 0.01


@dataclass(frozen=True, slots=True)
class LexicalModel:
    """A graph's files as BM25 sees them: each file's word ids and counts, end to end.

    Entries are kept by *slot*: each graph file points at the slot holding its vector. A model
    made from the last one after an edit (:meth:`updated`) keeps the slots of the files that did
    not change and appends slots for those that did (the old ones stay, pointed at by no file):
    nothing is copied per file and the kept entries' postings are not sorted again. Each file's
    entries are the same values in the same order whichever way the model was made, so its BM25
    sum, the lengths and their average are bit-identical (a test checks it)."""

    ids: np.ndarray
    counts: np.ndarray
    owner: np.ndarray
    """The slot of each entry."""
    slot_starts: np.ndarray
    """Slot s's entries are ``ids[slot_starts[s]:slot_starts[s + 1]]``."""
    slot_lengths: np.ndarray
    """Per slot: its words counted (|d|)."""
    slot_of_file: np.ndarray
    """Per graph file: its slot."""
    frequency: np.ndarray
    """Per word id: how many files hold it."""
    average: float
    """The files' mean length."""
    _postings: dict[str, tuple[np.ndarray, np.ndarray, int]] = field(default_factory=dict, compare=False, repr=False)
    """:meth:`postings` made so far: ``base`` (carried from the model this one was made from) and
    ``tail`` (the entries after it), each (order, each word id's first place, first entry), and
    ``tail before``: the tail of the model this one was made from, which its own extends."""
    _norms_made: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)
    """:meth:`_norms`, once made."""
    _cuts_made: list[list[int]] = field(default_factory=list, compare=False, repr=False)
    """:meth:`_cuts`, once made."""
    _room: list[_Room] = field(default_factory=list, compare=False, repr=False)
    """The room its entries are the start of, when made by :meth:`updated` (see :meth:`_appended`)."""

    @classmethod
    def of(cls, vectors: Sequence[tuple[np.ndarray, np.ndarray]], vocabulary_size: int) -> LexicalModel:
        n = len(vectors)
        ids, counts, owner, starts, lengths = _entries(vectors, 0, 0)
        frequency = np.bincount(ids, minlength=vocabulary_size)
        return cls(ids, counts, owner, starts, lengths, np.arange(n), frequency, _average(lengths))

    @classmethod
    def kept(cls, kept: KeptModel, vocabulary_size: int) -> LexicalModel:
        """The model a process kept, one slot per kept file in its order (what :meth:`of` makes of
        the same vectors: each slot's entries, lengths and the postings are the same values)."""
        n = len(kept.files)
        owner = np.repeat(np.arange(n, dtype=ENTRY), np.diff(kept.starts))
        # Kept counts are whole numbers (the lexicon keeps no other), so each file's sum taken
        # from a running integer sum is exactly the float one a bincount with weights makes: at
        # 100,000 files 0.02 s against 0.26 s.
        running = np.zeros(len(kept.counts) + 1, np.int64)
        np.cumsum(kept.counts, out=running[1:])
        lengths = (running[kept.starts[1:]] - running[kept.starts[:-1]]).astype(np.float64)
        frequency = np.bincount(kept.ids, minlength=vocabulary_size)
        model = cls(kept.ids, kept.counts, owner, kept.starts, lengths, np.arange(n), frequency, _average(lengths))
        if kept.order is not None:
            # The order is the ids' stable sort (checked when read), so word w's postings start
            # after the entries of every smaller id: a running sum of the frequencies, where a
            # search of the sorted ids gathered every entry (0.15 s at 100,000 files).
            firsts = np.zeros(vocabulary_size + 1, np.int64)
            np.cumsum(frequency[:vocabulary_size], out=firsts[1:])
            model._postings["base"] = (kept.order, firsts, 0)
        return model

    def compacted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(ids, counts, starts, postings order) of the graph's files in graph order, as
        :meth:`kept` takes them. The order is this model's own postings when they are it, else
        sorted here: at the end of a process, not at the next one's first request."""
        slots = self.slot_of_file
        if len(slots) == len(self.slot_lengths) and np.array_equal(slots, np.arange(len(slots))):
            ids, counts, starts = self.ids, self.counts, self.slot_starts
            base = self._postings.get("base")
            if base is not None and len(base[0]) == len(ids):
                return ids, counts, starts, base[0]
        else:
            sizes = self.slot_starts[slots + 1] - self.slot_starts[slots]
            starts = np.zeros(len(slots) + 1, np.int64)
            np.cumsum(sizes, out=starts[1:])
            gather = np.repeat(self.slot_starts[slots] - starts[:-1], sizes) + np.arange(starts[-1])
            ids, counts = self.ids[gather], self.counts[gather]
        # As the file keeps it (int32): the int64 argsort freed now, not copied beside it at the
        # writing, the end of a cold map of 100,000 files (48 MB more at its peak).
        return ids, counts, starts, np.argsort(ids, kind="stable").astype(ENTRY)

    def updated(
        self, kept: np.ndarray, fresh: Mapping[int, tuple[np.ndarray, np.ndarray]], vocabulary_size: int
    ) -> LexicalModel | None:
        """The model of the next graph: ``kept`` gives each of its files' slot here (-1 for the
        files in ``fresh``, by file index, whose vectors are new). None when building afresh is
        due (:data:`REBUILD_SHARE`)."""
        n_slots = len(self.slot_lengths)
        was = np.zeros(n_slots, bool)
        was[self.slot_of_file] = True
        now = np.zeros(n_slots, bool)
        now[kept[kept >= 0]] = True
        dropped = np.flatnonzero(was & ~now)
        idle = n_slots - int(now.sum()) + len(fresh)
        if len(fresh) > REBUILD_SHARE * max(1, len(kept)) or idle > REBUILD_SHARE * max(1, n_slots):
            return None
        if not fresh and not len(dropped):  # the same files (a process adopting its last one's)
            frequency = np.zeros(vocabulary_size, np.int64)
            frequency[: len(self.frequency)] = self.frequency
            average = _average(self.slot_lengths[kept])
            # The entries and their postings are this model's; the norms follow the average.
            return replace(
                self,
                slot_of_file=kept.copy(),
                frequency=frequency,
                average=average,
                _postings=dict(self._postings),
                _norms_made=[],
            )
        order = sorted(fresh)
        ids, counts, owner, starts, lengths = _entries([fresh[i] for i in order], len(self.ids), n_slots)
        slot_of_file = kept.copy()
        slot_of_file[order] = np.arange(n_slots, n_slots + len(order))
        frequency = np.zeros(vocabulary_size, np.int64)
        frequency[: len(self.frequency)] = self.frequency
        gone = [self.ids[self.slot_starts[slot] : self.slot_starts[slot + 1]] for slot in dropped]
        frequency -= np.bincount(np.concatenate([np.zeros(0, np.int64), *gone]), minlength=vocabulary_size)
        frequency += np.bincount(ids, minlength=vocabulary_size)
        all_lengths = np.concatenate([self.slot_lengths, lengths])
        room = self._appended((ids, counts, owner))
        model = LexicalModel(
            *room.arrays(),
            np.concatenate([self.slot_starts, starts[1:]]),
            all_lengths,
            slot_of_file,
            frequency,
            _average(all_lengths[slot_of_file]),
            _room=[room],
        )
        base = self._postings.get("base")
        if base is not None:
            model._postings["base"] = base  # its entries did not move; the rest is sorted when asked
            tail = self._postings.get("tail")
            if tail is not None:  # the tail's new entries are merged into it when asked
                model._postings["tail before"] = tail
        return model

    def _appended(self, tail: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Room:
        """Room holding this model's (ids, counts, owner) then ``tail``'s: the room this model was
        made in when it is the last made there and ``tail`` fits, else a new one with spare room
        (an edit appends a few files' entries: at 100,000 files copying every entry per edit was
        a tenth of an edit's map). A model made earlier in the same room sees only its own
        entries: the room is only ever written past the last model's."""
        end, more = len(self.ids), len(tail[0])
        room = self._room[0] if self._room else None
        if room is None or room.used != end or end + more > room.capacity:
            capacity = end + more + (end + more) // ROOM_SHARE + 1
            room = _Room(
                np.empty(capacity, self.ids.dtype),
                np.empty(capacity, self.counts.dtype),
                np.empty(capacity, self.owner.dtype),
                0,
            )
            room.write(0, (self.ids, self.counts, self.owner))
        room.write(end, tail)
        return room

    def words_of(self, fi: int) -> np.ndarray:
        slot = self.slot_of_file[fi]
        return self.ids[self.slot_starts[slot] : self.slot_starts[slot + 1]]

    def postings(self) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Runs of (entries ordered by word id, each word id's first place in that order, the first
        entry of the run): which entries hold a word, without a pass over every entry of a large
        repository per request. Made on the first request this model answers, then kept."""
        base = self._postings.get("base")
        if base is None:
            base = self._postings["base"] = _postings(self.ids, 0, len(self.frequency))
        runs = [base]
        end = base[2] + len(base[0])
        if end < len(self.ids):
            tail = self._postings.get("tail")
            if tail is None:
                before = self._postings.get("tail before")
                if before is not None and before[2] == end:
                    tail = _merged_postings(before, self.ids, len(self.frequency))
                else:
                    tail = _postings(self.ids[end:], end, len(self.frequency))
                self._postings["tail"] = tail
            runs.append(tail)
        return runs

    def _norms(self) -> np.ndarray:
        """Each slot's BM25 length norm, K1 * (1 - B + B * |d| / avgdl): made once per model."""
        if not self._norms_made:
            self._norms_made.append(K1 * (1 - B + B * self.slot_lengths / self.average))
        return self._norms_made[0]

    def _cuts(self) -> list[int]:
        """Entry positions that split the entries into runs of about :data:`HITS_CHUNK`, each at
        the start of a slot: a slot's hits are all in one run."""
        if not self._cuts_made:
            starts, total = self.slot_starts, len(self.ids)
            inner = starts[np.searchsorted(starts, np.arange(HITS_CHUNK, total, HITS_CHUNK))]
            self._cuts_made.append(np.unique(np.concatenate([[0], inner, [total]])).tolist())
        return self._cuts_made[0]

    def _add_hits(self, hit: np.ndarray, idf_of: np.ndarray, per_slot: np.ndarray) -> None:
        """Add the BM25 terms of the entries ``hit`` (ascending, whole slots only) to
        ``per_slot``. Each slot's terms are summed in entry order from zero, as one bincount of
        every hit sums them, and added to its zero: the same floats."""
        if not len(hit):
            return
        tf, slots = self.counts[hit], self.owner[hit]
        # idf * tf * (K1 + 1) / (tf + norm), each step in place: the same operations in the same
        # order (the same floats) without three more temporaries.
        weights = idf_of[self.ids[hit]]
        weights *= tf
        weights *= K1 + 1
        norm = self._norms()[slots]
        norm += tf
        weights /= norm
        low, high = int(slots[0]), int(slots[-1]) + 1  # slots ascend with entries
        slots -= low
        per_slot[low:high] += np.bincount(slots, weights=weights, minlength=high - low)

    def scores(self, query: np.ndarray, n: int) -> np.ndarray:
        """Each file's BM25 score for the word ids ``query`` (each counted once)."""
        if not len(query) or not len(self.ids):
            return np.zeros(n)
        words = np.unique(query[(query >= 0) & (query < len(self.frequency))]).astype(np.int64)
        held = self.frequency[words].astype(np.float64)
        idf = np.log((n - held + 0.5) / (held + 0.5))
        # A word no file holds (a kept vocabulary remembers words of older contents) adds nothing
        # and decides nothing: a fresh model of the same files has never seen it.
        useful = (idf > MIN_IDF) & (held > 0)
        if useful.any():  # the words at the floor left out (MIN_IDF)
            words, idf = words[useful], idf[useful]
        else:  # only those: they still order the files, at the floor
            idf = np.maximum(idf, MIN_IDF)
        known = words.tolist()
        runs = [
            order[firsts[w] : firsts[w + 1]] + start if start else order[firsts[w] : firsts[w + 1]]
            for order, firsts, start in self.postings()
            for w in known
            if w + 1 < len(firsts)
        ]
        # Each word's idf and each slot's length norm computed once, then gathered per entry:
        # the same values as computing them per entry (the same expressions on the same inputs).
        idf_of = np.zeros(len(self.frequency))
        idf_of[words] = idf
        per_slot = np.zeros(len(self.slot_lengths))
        # Entry order, as a mask over every entry gives: the sums below add in the same order.
        # Sorting the hits costs more than marking them once they pass a share of the entries (a
        # chat file's common words at 100,000 files: 565 -> 156 ms for one query).
        if runs and sum(map(len, runs)) * MASK_SHARE > len(self.ids):
            mask = np.zeros(len(self.ids), bool)
            for run in runs:
                mask[run] = True
            cuts = self._cuts()
            for start, end in pairwise(cuts):
                self._add_hits(start + np.flatnonzero(mask[start:end]), idf_of, per_slot)
        elif runs:
            self._add_hits(np.sort(np.concatenate(runs)), idf_of, per_slot)
        per_file: np.ndarray = np.take(per_slot, self.slot_of_file)
        return per_file


def _entries(
    vectors: Sequence[tuple[np.ndarray, np.ndarray]], first_entry: int, first_slot: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``vectors`` end to end as slots numbered from ``first_slot``: (ids, counts, each entry's
    slot, the slots' starts from ``first_entry``, their lengths)."""
    n = len(vectors)
    sizes = np.fromiter((len(v[0]) for v in vectors), np.int64, n)
    starts = np.full(n + 1, first_entry, np.int64)
    np.cumsum(sizes, out=starts[1:])
    starts[1:] += first_entry
    ids = np.concatenate([v[0] for v in vectors]) if n else np.zeros(0, ENTRY)
    counts = np.concatenate([v[1] for v in vectors]) if n else np.zeros(0, ENTRY)
    local = np.repeat(np.arange(n, dtype=ENTRY), sizes)
    lengths = np.bincount(local, weights=counts, minlength=n) if n else np.zeros(0)
    return ids, counts, (local + first_slot).astype(ENTRY, copy=False), starts, lengths


def _average(lengths: np.ndarray) -> float:
    """The mean file length, over the files in graph order (1 for none or all empty)."""
    return float(lengths.mean()) if len(lengths) and lengths.sum() > 0 else 1.0


def _postings(ids: np.ndarray, start: int, vocabulary_size: int) -> tuple[np.ndarray, np.ndarray, int]:
    order = np.argsort(ids, kind="stable")
    firsts = np.searchsorted(ids[order], np.arange(vocabulary_size + 1))
    # Held as the kept lexicon holds it (4 bytes an entry): the two models' int64 orders were
    # 96 MB of a cold one-shot map's peak at 100,000 files, and converted again when kept.
    return (order.astype(ENTRY) if len(ids) <= np.iinfo(ENTRY).max else order), firsts, start


def _merged_postings(
    before: tuple[np.ndarray, np.ndarray, int], ids: np.ndarray, vocabulary_size: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """:func:`_postings` of the entries from ``before``'s start to the end of ``ids``, made from
    ``before`` (those of the entries it covers) and the entries after them: each edit appends its
    files' entries to the tail, and sorting the whole tail again per edit grew with the session
    (at 1,790 files, 40 edits in: 1.2 ms per model and map, 25,000 entries). The entries after
    ``before``'s come after its entries of the same word (the stable sort's order)."""
    order, firsts, start = before
    covered = start + len(order)
    new = ids[covered:]
    new_order = np.argsort(new, kind="stable")
    new_ids = new[new_order]
    at = np.searchsorted(ids[start:covered][order], new_ids, side="right")
    merged = np.insert(order, at, new_order + (covered - start))
    grown = np.empty(vocabulary_size + 1, np.int64)
    grown[: len(firsts)] = firsts
    grown[len(firsts) :] = firsts[-1]
    grown[1:] += np.cumsum(np.bincount(new_ids, minlength=vocabulary_size))
    return merged, grown, start


def _same_files(kept: Sequence[tuple[str, str]], files: Sequence[str], keys: Mapping[str, str]) -> bool:
    """Whether ``kept`` (path, key) pairs are ``files`` in order, each with its key in ``keys``:
    compared as two lists, where matching each file by a dict of the pairs was 0.2 s at 100,000."""
    if len(kept) != len(files):
        return False
    if [path for path, _ in kept] != list(files):
        return False
    kept_keys = [key for _, key in kept]
    return all(kept_keys) and kept_keys == [keys.get(path) for path in files]  # "": never matched


#: A room for a model's entries is made with 1/ROOM_SHARE more than they need, for later edits.
ROOM_SHARE = 16


@dataclass(slots=True)
class _Room:
    """Arrays of (ids, counts, owner) with spare room at the end, ``used`` of them written: the
    entries of a chain of models made one from the other, each a prefix."""

    ids: np.ndarray
    counts: np.ndarray
    owner: np.ndarray
    used: int

    @property
    def capacity(self) -> int:
        return len(self.ids)

    def write(self, at: int, arrays: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        end = at + len(arrays[0])
        for into, values in zip((self.ids, self.counts, self.owner), arrays, strict=True):
            into[at:end] = values
        self.used = end

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.ids[: self.used], self.counts[: self.used], self.owner[: self.used]


@dataclass(frozen=True, slots=True)
class _Last:
    """A kind's last model: its graph's files and their index, each file's tags, the model, and
    how to name the files' tags (:meth:`LexicalIndex.describe`; None: not described)."""

    files: Sequence[str]
    index: Mapping[str, int]
    tags: Mapping[str, FileTags]
    model: LexicalModel
    describe: Callable[[], Mapping[str, str]] | None


Answer = list[tuple[int, float]]
"""Files (graph indices), best first, each with its score over the best file's."""


class LexicalIndex:
    """One repository's words, vectors, models and last answers (see the module docstring)."""

    def __init__(self, kept: Callable[[], KeptLexicon | None] | None = None, keep_vectors: bool = True) -> None:
        """``kept``: reads the lexicon the last process kept (asked once, at the first model);
        ``keep_vectors``: hold each file's vector for the models of later graphs (False in a
        one-shot process, whose first map is its last: at 100,000 files the vectors were 184 MB
        of a cold map's peak, beside the models made of them)."""
        self._vocabulary = Vocabulary()
        self._keep_vectors = keep_vectors
        self._vectors: dict[tuple[bool, str], tuple[FileTags | None, tuple[np.ndarray, np.ndarray]]] = {}
        """(whole text?, path) -> (the tags it was read from, its vector); empty unless ``keep_vectors``."""
        self._models: weakref.WeakKeyDictionary[RepoGraph, dict[bool, LexicalModel]] = weakref.WeakKeyDictionary()
        self._answers: weakref.WeakKeyDictionary[RepoGraph, tuple[object, Answer]] = weakref.WeakKeyDictionary()
        self._last: dict[bool, _Last] = {}
        """Per kind of model, the last one made, what the next graph's is made from."""
        self._keys: weakref.WeakKeyDictionary[RepoGraph, Callable[[], Mapping[str, str]]] = weakref.WeakKeyDictionary()
        self._read_kept = kept
        self._kept: dict[bool, KeptModel] = {}
        """The kept lexicon's models not adopted yet (the vocabulary is its words)."""
        self._counted: dict[bool, int] = {}
        """Per kind of model, files whose words this process counted since the last lexicon it kept."""
        self._built_afresh = False
        """A model was built from every file's words (not from the kept lexicon)."""
        self._kept_files = 0
        """Files whose entries a model took from the kept lexicon since :meth:`take_kept_files`
        (the most of any one model)."""
        self._lock = threading.Lock()

    def take_kept_files(self) -> int:
        """How many files' entries came from the kept lexicon since the last call."""
        with self._lock:
            kept, self._kept_files = self._kept_files, 0
            return kept

    def describe(self, graph: RepoGraph, keys: Callable[[], Mapping[str, str]]) -> None:
        """How to name what each of ``graph``'s files' tags were made from (path -> key, for the
        files whose tags are a parse of their content): a kept lexicon's entries are adopted for
        the files whose key is the same, and what this process keeps names them so."""
        with self._lock:
            self._keys[graph] = keys

    def _vector_of(self, path: str, tags: FileTags | None, whole_text: bool) -> tuple[np.ndarray, np.ndarray]:
        held = self._vectors.get((whole_text, path))
        if held is not None and held[0] is tags:
            return held[1]
        self._counted[whole_text] = self._counted.get(whole_text, 0) + 1
        vector = self._vocabulary.vector(file_text_words(path, tags) if whole_text else file_words(path, tags))
        if self._keep_vectors:
            self._vectors[(whole_text, path)] = (tags, vector)
        return vector

    def model_for(self, graph: RepoGraph, tags: Mapping[str, FileTags], whole_text: bool = False) -> LexicalModel:
        """The graph's lexical model (of its files' names' words, or of their whole texts), made
        from ``tags`` (the graph's own) the first time: from the last graph's model when only a
        few files' tags changed (an edit), from the kept lexicon when this process has none yet,
        else built afresh."""
        with self._lock:
            models = self._models.setdefault(graph, {})
            model = models.get(whole_text)
            if model is None:
                model = self._updated(graph, tags, whole_text)
                if model is None:
                    now = tuple(map(tags.get, graph.files))
                    model = self._adopted(graph, now, whole_text) or self._built(graph, now, whole_text)
                models[whole_text] = model
                self._last[whole_text] = _Last(graph.files, graph.index, tags, model, self._keys.get(graph))
            return model

    def _built(self, graph: RepoGraph, now: Sequence[FileTags | None], whole_text: bool) -> LexicalModel:
        self._built_afresh = True
        vectors = [self._vector_of(path, t, whole_text) for path, t in zip(graph.files, now, strict=True)]
        live = set(graph.files)
        for key in [k for k in self._vectors if k[1] not in live]:  # only current files' words are kept
            del self._vectors[key]
        return LexicalModel.of(vectors, len(self._vocabulary))

    def _updated(self, graph: RepoGraph, tags: Mapping[str, FileTags], whole_text: bool) -> LexicalModel | None:
        """The last graph's model carried over to ``graph`` (``tags``: its files' tags): a file
        keeps its slot when its tags are the same object (the sources keep an unchanged file's),
        the others' vectors are new. The same file list: only the paths :func:`changed_keys`
        names are looked at (a pass over every file was ~60 ms of an edit's map at 100,000)."""
        last = self._last.get(whole_text)
        if last is None:
            return None
        files, index, was, old = last.files, last.index, last.tags, last.model
        if graph.files is files:  # an edit that added and removed nothing: the same file list
            changed = changed_positions(was, tags, index)
            kept = old.slot_of_file.copy()
        else:
            slots = [
                old.slot_of_file[oi] if (oi := index.get(p)) is not None and was.get(p) is tags.get(p) else -1
                for p in graph.files
            ]
            kept = np.array(slots, np.int64)
            changed = np.flatnonzero(kept < 0).tolist()
            for path in index:
                if path not in graph.index:
                    self._vectors.pop((whole_text, path), None)
        if len(changed) > REBUILD_SHARE * len(graph.files):
            return None  # a checkout, not an edit
        kept[changed] = -1
        fresh = {fi: self._vector_of(graph.files[fi], tags.get(graph.files[fi]), whole_text) for fi in changed}
        return old.updated(kept, fresh, len(self._vocabulary))

    def _adopted(self, graph: RepoGraph, now: Sequence[FileTags | None], whole_text: bool) -> LexicalModel | None:
        """The kept lexicon's model of this kind carried over to ``graph``: a file keeps its kept
        entries when its path and tags' key are the same, the others' words are counted."""
        kept = self._kept_model(whole_text)
        describe = self._keys.get(graph)
        if kept is None or describe is None:
            return None
        keys = describe()
        if _same_files(kept.files, graph.files, keys):  # the last process's files: slot i is file i
            slots, changed = np.arange(len(graph.files), dtype=np.int64), []
        else:
            slot_of = {pair: slot for slot, pair in enumerate(kept.files) if pair[1]}
            slots = np.fromiter(
                (slot_of.get((p, k), -1) if (k := keys.get(p)) else -1 for p in graph.files),
                np.int64,
                len(graph.files),
            )
            changed = np.flatnonzero(slots < 0).tolist()
        if len(changed) > REBUILD_SHARE * len(graph.files):
            return None
        fresh = {fi: self._vector_of(graph.files[fi], now[fi], whole_text) for fi in changed}
        model = LexicalModel.kept(kept, len(self._vocabulary)).updated(slots, fresh, len(self._vocabulary))
        if model is not None:
            self._kept_files = max(self._kept_files, len(graph.files) - len(changed))
        return model

    def _kept_model(self, whole_text: bool) -> KeptModel | None:
        """The kept model of this kind, once: the lexicon is read at the first model of the
        process, and only used when no word was numbered before (its ids are its words')."""
        if self._read_kept is not None:
            read, self._read_kept = self._read_kept, None
            lexicon = read() if not len(self._vocabulary) else None
            if lexicon is not None:
                self._vocabulary = Vocabulary(lexicon.words)
                self._kept = {m.whole_text: m for m in lexicon.models}
        return self._kept.pop(whole_text, None)

    def to_keep(self) -> KeptLexicon | None:
        """What the next process should adopt: the last models, when this process counted words
        for them (else what it adopted is what is kept already) and, if every model came from the
        kept lexicon, for more than :data:`KEPT_DRIFT_SHARE` of the files; their files named. A
        kept model of a kind this process never made goes on as it was (its ids are still the
        vocabulary's: words are only ever added)."""
        with self._lock:
            if not self._counted or not self._last:
                return None
            most = max(len(last.files) for last in self._last.values())
            if not self._built_afresh and max(self._counted.values()) <= KEPT_DRIFT_SHARE * most:
                return None  # the kept lexicon serves the next process as well
            models = [kept for whole_text, kept in sorted(self._kept.items()) if whole_text not in self._last]
            for whole_text, last in sorted(self._last.items()):
                keys = last.describe() if last.describe is not None else {}
                if not keys:
                    continue
                ids, counts, starts, order = last.model.compacted()
                files = tuple((p, keys.get(p, "")) for p in last.files)
                models.append(KeptModel(whole_text, files, ids, counts, starts, order))
            if not models:
                return None
            self._counted, self._built_afresh = {}, False
            return KeptLexicon(self._vocabulary.words, tuple(models))

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
