"""Trees kept for the next parse of the same file: tree-sitter re-parses an edited text from the
tree of the text before it, re-using every subtree the edit did not touch.

An agent edits the same file again and again, and a long-lived map parses it after each edit. A
fresh parse of the standard library's ``email/message.py`` (1,200 lines) is ~4.7 ms of the ~12 ms
its extraction costs; the whole extraction from the previous tree, after a function appended,
6.6-6.8 ms against 10.4-15.8 ms (in-process, medians of 30). Only the tree
changes: the tag query then runs over the whole new tree, as after a fresh parse, so the tags are
the same (``tests/sources/test_reparse.py`` compares them after random edits, per language).

One :class:`KeptTrees` per base source, used by its in-process parses only (the ones an edit
makes; the cold index parses in worker processes, whose trees never come back). Bounded by the
bytes of the texts whose trees it holds (``reparse_kept_bytes``; a tree is ~20 times its
text); the least recently parsed go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Kept:
    """A file's last parse: its language, the text parsed and the tree made of it."""

    language: str
    source: bytes
    tree: Any


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Where two texts differ, as ``Tree.edit`` takes it: one changed run, in bytes and in
    (row, column-in-bytes) points, from the common prefix to the common suffix."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: tuple[int, int]
    old_end_point: tuple[int, int]
    new_end_point: tuple[int, int]


def text_edit(old: bytes, new: bytes) -> TextEdit:
    """The one edit that turns ``old`` into ``new`` (the run between their common prefix and
    common suffix; the suffix never overlaps the prefix)."""
    start = _common_prefix(old, new)
    tail = _common_suffix(old[start:], new[start:])
    old_end, new_end = len(old) - tail, len(new) - tail
    return TextEdit(start, old_end, new_end, _point(old, start), _point(old, old_end), _point(new, new_end))


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix: a binary search over slice comparisons (each a copy and a
    ``memcmp``; comparing ``memoryview`` slices goes item by item, 2 ms for 50 kB)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            low = mid
        else:
            high = mid - 1
    return low


def _point(text: bytes, offset: int) -> tuple[int, int]:
    """(row, column in bytes) of ``offset`` in ``text``, as tree-sitter counts them."""
    row = text.count(b"\n", 0, offset)
    return row, offset - (text.rfind(b"\n", 0, offset) + 1)


class KeptTrees:
    """path -> its last in-process parse, the least recently parsed dropped first once the texts
    held pass ``max_bytes`` (0: nothing kept)."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._bytes = 0
        self.reused = 0
        """Parses made from a kept tree so far."""
        # One owner (the base source, whose index runs in a worker thread under the map's lock);
        # the lock keeps the byte count right should a second parse ever meet it.
        self._lock = threading.Lock()

    def take(self, path: str, language: str) -> Kept | None:
        """The last parse of ``path`` in ``language``, handed over (it is not kept after: its
        tree is edited by the next parse)."""
        with self._lock:
            kept = self._kept.pop(path, None)
            if kept is not None:
                self._bytes -= len(kept.source)
        return kept if kept is not None and kept.language == language else None

    def put(self, path: str, language: str, source: bytes, tree: Any) -> None:
        if len(source) > self._max_bytes:
            return
        with self._lock:
            old = self._kept.pop(path, None)
            if old is not None:
                self._bytes -= len(old.source)
            self._kept[path] = Kept(language, source, tree)
            self._bytes += len(source)
            while self._bytes > self._max_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= len(dropped.source)

    def __len__(self) -> int:
        return len(self._kept)
