"""The focus of a map of a change: which files and definitions a :class:`~hybridmap.model.CodeChange`
touches, in the terms the ranker and the renderer use. Pure.

A definition is *changed* when a changed line falls inside it and outside every one of its
children that is changed too: an edit inside a method marks the method, not its class (whose
header the map shows anyway, as the method's scope); an edit to a class attribute marks the
class. In a file that changed everywhere (added, or whose hunks were not read) every innermost
definition is changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...model import ChangeStatus, CodeChange, FileTags


@dataclass(frozen=True, slots=True)
class ChangeFocus:
    """What the ranker and the renderer need of a change, for the files the map knows."""

    change: CodeChange
    status: Mapping[str, ChangeStatus] = field(default_factory=dict)
    """Each changed file the map has tags for (not deleted) -> how it changed."""
    symbols: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """Changed file -> the indices of its changed definitions, in file order."""
    deleted: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """The changed files the map knows, most changed lines first (ties by path)."""
        size = {f.path: f.added + f.deleted for f in self.change.files}
        return tuple(sorted(self.status, key=lambda p: (-size.get(p, 0), p)))


def change_focus(change: CodeChange, tags: Mapping[str, FileTags]) -> ChangeFocus:
    """The focus of ``change`` over the map's ``tags`` (files it cannot show are left out)."""
    status: dict[str, ChangeStatus] = {}
    symbols: dict[str, tuple[int, ...]] = {}
    deleted: list[str] = []
    for changed in change.files:
        if changed.status == "deleted":
            deleted.append(changed.path)
            continue
        file_tags = tags.get(changed.path)
        if file_tags is None:
            continue
        status[changed.path] = changed.status
        # 0-based like the tags' spans; a whole file is one range past any line it can have.
        ranges = [(0, 1 << 62)] if changed.whole else [(a - 1, b - 1) for a, b in changed.lines]
        symbols[changed.path] = changed_symbols(file_tags, ranges)
    return ChangeFocus(change, status, symbols, tuple(deleted))


def changed_symbols(tags: FileTags, ranges: list[tuple[int, int]]) -> tuple[int, ...]:
    """Indices of the definitions a changed line (0-based inclusive ``ranges``) falls inside and
    outside every changed child of."""
    symbols = tags.symbols

    def touched(i: int) -> list[tuple[int, int]]:
        span = symbols[i].span
        start, end = span.start_line, span.end_line
        return [(max(a, start), min(b, end)) for a, b in ranges if a <= end and b >= start]

    hit = {i: t for i in range(len(symbols)) if (t := touched(i))}
    children: dict[int, list[int]] = {}
    for i in hit:
        parent = symbols[i].parent
        if parent in hit:
            children.setdefault(parent, []).append(i)
    out = []
    for i, parts in hit.items():
        inside = [(symbols[c].span.start_line, symbols[c].span.end_line) for c in children.get(i, ())]
        if any(_not_covered(a, b, inside) for a, b in parts):
            out.append(i)
    return tuple(sorted(out, key=lambda i: (symbols[i].span.start_line, i)))


def _not_covered(start: int, end: int, covers: list[tuple[int, int]]) -> bool:
    """Whether some line of [start, end] lies outside every range of ``covers``."""
    line = start
    for a, b in sorted(covers):
        if a > line:
            return True
        line = max(line, b + 1)
        if line > end:
            return False
    return line <= end
