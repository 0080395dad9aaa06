"""Files a one-shot map takes without reading their cache records: the last process's kept keys.

A one-shot map that adopts the kept graph reads the tags of the few hundred files it shows; at
100,000 files, reading every file's record only to learn its problems was a quarter of a warm
one-shot map. :class:`UnreadTags` reads the keys and problems the last one-shot process kept
(:mod:`hybridmap.store.kept_keys`) once, at the first index; a file whose key is the kept one gets
its kept problems and tags that fetch their record when first read (parsed then, if the record
was evicted or is damaged: never shown empty). At the end it gives what this process knows for
the next, when that is new.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import partial
from typing import TypeGuard

from ..model import Diagnostic, FileTags, ParseOutcome, Symbol
from ..store.cache import Cache
from ..store.codec import LazyFileTags
from ..store.kept_keys import KeptKeys
from ..workspace.state import Snapshot


def well_formed(value: object) -> TypeGuard[ParseOutcome]:
    """A cached outcome of today's shape. An entry pickled from an older shape of these
    records unpickles with fields missing or of other types, and would fail later."""
    if not isinstance(value, ParseOutcome):
        return False
    try:
        tags, problems = value.tags, value.problems
        if not isinstance(problems, tuple):
            return False
        if tags is None or isinstance(tags, LazyFileTags):  # the codec's own: checked when decoded
            return True
        return (
            isinstance(tags, FileTags)
            and isinstance(tags.symbols, tuple)
            and isinstance(tags.ref_names, tuple)
            and isinstance(tags.ref_positions, bytes)
            and isinstance(tags.ref_kinds, bytes)
            and isinstance(tags.line_count, int)
            and isinstance(tags.complete, bool)
            and len(tags.ref_positions) == 8 * len(tags.ref_names) == 8 * len(tags.ref_kinds)
            and all(isinstance(symbol, Symbol) for symbol in tags.symbols[:1])
        )
    except AttributeError:
        return False


#: Files whose tags were first read in the order they were indexed, one after another, before the
#: records of the next ones are read ahead in one query (a pass over every file: the policies and
#: the graph of a one-shot map after an edit). A map that renders a few hundred files reads them
#: in rank order and never reads ahead.
READ_AHEAD_AFTER = 32
#: Records read ahead per query (held as read, decoded when their tags are: about 5 MB).
READ_AHEAD_RECORDS = 512
#: How far apart two files read one after the other may be indexed and still count as in order
#: (a file read earlier, a chat file, is skipped).
READ_AHEAD_GAP = 8

#: One indexed file as :meth:`UnreadTags.to_keep` reads it: path, tags key, tags (None: the
#: record holds none), problems, and whether the outcome is the cache's.
IndexedFile = tuple[str, str, FileTags | None, tuple[Diagnostic, ...], bool]


class UnreadTags:
    """One tree-sitter source's kept keys: read once, used at the first index, handed on."""

    def __init__(
        self,
        cache: Cache,
        read: Callable[[], KeptKeys | None] | None,
        parse_one: Callable[[Snapshot, str], ParseOutcome | None],
    ) -> None:
        """``read``: the kept keys (None: none are read, and none are handed on); ``parse_one``:
        a file of a snapshot parsed now (None: it no longer holds that snapshot's contents)."""
        self._cache = cache
        self._read = read
        self._enabled = read is not None
        self._parse_one = parse_one
        self._learned = False
        """Whether an index looked up a file the kept keys did not name (what :meth:`to_keep`
        gives is new)."""
        self._lock = threading.Lock()
        """Held while a record is fetched: tags may be first read from two threads."""
        self._order: list[str] = []
        """The keys of the files taken unread, in the order they were indexed."""
        self._last = -1
        """Where the last fetched file is in :attr:`_order`."""
        self._in_order = 0
        """Fetches so far that each came just after the one before (:data:`READ_AHEAD_GAP`)."""
        self._ahead: dict[str, object] = {}
        """Records read ahead, not yet asked for (their tags decoded when read)."""

    def take(self) -> KeptKeys | None:
        """The kept keys, at the first call only (an index after the first looks up what moved)."""
        read, self._read = self._read, None
        return read() if read is not None else None

    def learned(self, something_new: bool) -> None:
        """An index looked up files the kept keys did not name (or no longer saw some they did)."""
        self._learned |= something_new

    def tags(
        self, snapshot: Snapshot, rel: str, key: str, kept: KeptKeys
    ) -> tuple[FileTags | None, tuple[Diagnostic, ...]]:
        """The tags and problems of ``rel``, which ``kept`` names with ``key``: its record is read,
        or the file parsed, only when the tags are first read."""
        tags = None
        if rel not in kept.untagged:
            tags = LazyFileTags(fetch=partial(self._fetch, snapshot, rel, key, len(self._order)))
            self._order.append(key)
        problems = kept.problems.get(rel)
        if problems is None:  # most files: no generator made for none
            return tags, ()
        return tags, tuple(Diagnostic(rel, kind, message) for kind, message in problems)

    def _fetch(self, snapshot: Snapshot, rel: str, key: str, position: int) -> FileTags | None:
        """The tags under ``key`` (the ``position``-th file taken unread): from the cache, else
        (the record evicted, damaged or unusable since the keys were kept) parsed now and
        cached; None when the file no longer holds those contents."""
        with self._lock:
            found = self._record(key, position)
            hit = found if well_formed(found) else None
            if found is not None and hit is None:
                self._cache.drop([key], "written by another hybridmap version, or damaged")
            tags = hit.tags if hit is not None else None
            if isinstance(tags, LazyFileTags):  # read ahead, held as read: decoded now
                decoded = tags.decoded()
                tags = None if tags.damaged else decoded  # a damaged record was dropped and said
            if tags is None:
                parsed = self._parse_one(snapshot, rel)
                if parsed is None or parsed.deferred:
                    return None
                if parsed.cacheable:
                    self._cache.set_many({key: parsed})
                tags = parsed.tags
            return tags

    def _record(self, key: str, position: int) -> object:
        """``key``'s record: read ahead, or read now, with the next :data:`READ_AHEAD_RECORDS`
        when the files have been read in the order they were indexed. Read alone, a record cost
        about 110 us of SQLite at 100,000 files (its pages found one by one); a pass over every
        file read that way was half of a one-shot map after an edit (py-spy)."""
        held = self._ahead.pop(key, None)
        self._in_order = self._in_order + 1 if 0 < position - self._last <= READ_AHEAD_GAP else 0
        self._last = position
        if held is not None:
            return held
        if self._in_order < READ_AHEAD_AFTER:
            return self._cache.get_many([key]).get(key)  # None: not there
        found = self._cache.get_many(self._order[position : position + READ_AHEAD_RECORDS], lazy_tags=True)
        hit = found.pop(key, None)
        self._ahead = found
        return hit

    def to_keep(self, files: Iterable[IndexedFile]) -> KeptKeys | None:
        """What the next one-shot process may take unread: each indexed file's key and problems
        but those not from the cache and records found damaged (None: keys are neither read nor
        handed on, or what was read is all this process knows)."""
        if not self._enabled or not self._learned:
            return None
        keys: dict[str, str] = {}
        problems: dict[str, tuple[tuple[str, str], ...]] = {}
        untagged: set[str] = set()
        for rel, key, tags, diagnostics, cached in files:
            if not cached or (isinstance(tags, LazyFileTags) and tags.damaged):
                continue  # looked up again by the next process
            keys[rel] = key
            if tags is None:
                untagged.add(rel)
            if diagnostics:
                problems[rel] = tuple((d.kind, d.message) for d in diagnostics)
        return KeptKeys(keys, problems, frozenset(untagged)) if keys else None
