"""What an agent did in one conversation, as a long-lived map hears it.

The agent (or its harness) reports events: files it edited, files it read, the file open in
its editor. They weigh in every later map of the session (``edited_file_personalization``,
``read_file_personalization``, ``active_file_personalization``), the most recent
``session_max_files`` of each kind. The session also remembers the content of the repository
at its last map, to say what is new, gone or changed at the next (:class:`~.model.MapChanges`),
and, for a stable layout, how its last map was laid out (:class:`Layout`).
Paths here are relative to the root and already validated by the caller.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...infra.patched import changed_keys
from ...model import MapChanges


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """The files a map is asked with: the session's events plus the request's own."""

    edited: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    active: tuple[str, ...] = ()
    """At most one file; a tuple so the ranker treats the three alike."""


Block = tuple[str, tuple[tuple[int, str], ...]]
"""One file block of a map's text: the path and its items, each a symbol index (-1: the file by
name) and the symbol's name then (an edit may move indices: a kept item must still be that name)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """How a map's text was laid out, for the next map of a stable layout to keep
    (:mod:`hybridmap.pipeline.pack.stable`)."""

    blocks: tuple[Block, ...]
    """The file blocks in text order (a path may have two: one kept, one added after)."""
    summarized: frozenset[tuple[str, int]] = frozenset()
    """(path, symbol index) of the definitions shown with a summary."""
    budget: int = 0
    age: int = 0
    """Maps laid out since the last full re-rank (0: this one was one)."""


class Session:
    """One conversation's events and the last map's view of the repository."""

    def __init__(self, max_files: int) -> None:
        self._max = max_files
        self._edited: OrderedDict[str, None] = OrderedDict()
        self._read: OrderedDict[str, None] = OrderedDict()
        self._active: str | None = None
        self._last_shas: Mapping[str, str] | None = None
        self.layout: Layout | None = None
        """The layout of the session's last shown map (what a stable layout keeps)."""

    def file_edited(self, path: str) -> None:
        self._remember(self._edited, path)
        self._read.pop(path, None)  # an edited file was read too: the stronger event stands

    def file_read(self, path: str) -> None:
        if path not in self._edited:
            self._remember(self._read, path)

    def set_active(self, path: str | None) -> None:
        self._active = path

    def forget(self) -> None:
        """Drop the events and the last map's view: a new conversation on the same repository
        has seen no map, so its first one says what changed since nothing (``first``)."""
        self._edited.clear()
        self._read.clear()
        self._active = None
        self._last_shas = None
        self.layout = None

    def _remember(self, kind: OrderedDict[str, None], path: str) -> None:
        kind.pop(path, None)
        kind[path] = None
        while len(kind) > self._max:
            kind.popitem(last=False)

    def files(self, edited: Iterable[str] = (), read: Iterable[str] = (), active: str | None = None) -> SessionFiles:
        """The session's files with a request's added (the request's active file wins)."""
        all_edited = tuple(dict.fromkeys((*self._edited, *edited)))
        all_read = tuple(p for p in dict.fromkeys((*self._read, *read)) if p not in all_edited)
        chosen = active if active is not None else self._active
        return SessionFiles(all_edited, all_read, (chosen,) if chosen else ())

    def changes(self, shas: Mapping[str, str]) -> MapChanges:
        """What moved since the last call (the first call compares with nothing), then remember."""
        last = self._last_shas
        self._last_shas = shas
        if last is None:
            return MapChanges(first=True)
        return Session.compare(last, shas)

    @staticmethod
    def compare(before: Mapping[str, str], after: Mapping[str, str]) -> MapChanges:
        """Files new, gone and changed (by content hash) from ``before`` to ``after``."""
        if before is after:
            return MapChanges(first=False)
        # The paths whose hash object moved (a snapshot patched by path says which), then compared.
        moved = changed_keys(before, after)
        new = tuple(sorted(p for p in moved if p not in before))
        gone = tuple(sorted(p for p in moved if p not in after))
        changed = tuple(sorted(p for p in moved if p in before and p in after and before[p] != after[p]))
        return MapChanges(False, new, gone, changed)
