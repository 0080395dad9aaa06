"""Fuzzy file search: path matching in the style of fzf and nucleo, streamed while listing.

A query matches a path when its characters occur in it in order (a subsequence). Each space-
separated term must match; a path's score is the sum of its terms' scores, and a term's score is
fzf's (v1 algorithm): 16 per matched character, a bonus for a character right after a path
separator (9), after ``_``, ``-``, ``.`` or a space (8), at a camelCase hump or a letter-digit
change (7), doubled on the term's first character, a bonus of 4 per character continuing a run
of consecutive matches, and a penalty for gaps (-3 to open one, -1 per character more). Of the
shortest stretches holding the term, the one ending rightmost is scored, so a match in the file
name wins over one in a directory; ties go to the shorter path. Smart case: the match is
case-sensitive only when the query has an uppercase letter.

:func:`listing_chunks` lists the repository in chunks (``git ls-files`` in a work tree, else the
ignore-aware walk of :mod:`.walk`, which yields each directory's files as it goes), and
:func:`stream_matches` scores each chunk as it comes and yields the best so far: on a large
tree the first results arrive before the listing ends.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from ..infra.sanitize import escape_path
from ..settings import Settings
from ..workspace import walk

SCORE_MATCH = 16
GAP_START = -3
GAP_EXTENSION = -1
BONUS_SEPARATOR = 9
BONUS_BOUNDARY = 8
BONUS_CAMEL = 7
BONUS_CONSECUTIVE = 4
FIRST_CHAR_MULTIPLIER = 2
#: Paths listed per chunk before the matches are scored and yielded.
CHUNK = 1_000


def _bonus(prev: str, char: str) -> int:
    if prev == "/":
        return BONUS_SEPARATOR
    if prev in "_-. ":
        return BONUS_BOUNDARY
    if (prev.islower() and char.isupper()) or (prev.isalpha() != char.isalpha() and char.isalnum()):
        return BONUS_CAMEL if prev.isalnum() else BONUS_BOUNDARY
    return 0


def score_term(term: str, path: str, case_sensitive: bool) -> tuple[int, tuple[int, ...]] | None:
    """fzf v1: the score of ``term`` in ``path`` and the matched positions, or None."""
    hay = path if case_sensitive else path.lower()
    if not term:
        return 0, ()
    # Backwards from the end: the rightmost end of a full match, then back to its latest start.
    end = len(hay)
    i = len(term) - 1
    pos = end - 1
    while pos >= 0 and i >= 0:
        if hay[pos] == term[i]:
            if i == len(term) - 1:
                end = pos + 1
            i -= 1
        pos -= 1
    if i >= 0:
        return None
    start = pos + 1
    # Forward from that start: the shortest stretch, ending as early as possible.
    i, forward_end = 0, start
    for pos in range(start, end):
        if hay[pos] == term[i]:
            i += 1
            if i == len(term):
                forward_end = pos + 1
                break
    return _score_window(term, path, hay, start, forward_end)


def _score_window(term: str, path: str, hay: str, start: int, end: int) -> tuple[int, tuple[int, ...]]:
    score, positions = 0, []
    i, in_gap, consecutive, first_bonus = 0, False, 0, 0
    for pos in range(start, end):
        if i < len(term) and hay[pos] == term[i]:
            prev = path[pos - 1] if pos > 0 else "/"
            bonus = _bonus(prev, path[pos])
            if consecutive:
                bonus = max(bonus, first_bonus, BONUS_CONSECUTIVE)
            else:
                first_bonus = bonus
            score += SCORE_MATCH + bonus * (FIRST_CHAR_MULTIPLIER if i == 0 else 1)
            positions.append(pos)
            consecutive += 1
            in_gap = False
            i += 1
        else:
            score += GAP_EXTENSION if in_gap else GAP_START
            in_gap, consecutive = True, 0
    return score, tuple(positions)


class FileMatchJson(TypedDict):
    path: str
    score: int
    positions: list[int]


@dataclass(frozen=True, slots=True)
class FileMatch:
    path: str
    score: int
    positions: tuple[int, ...]
    """Matched character offsets in ``path`` (for highlighting)."""

    def to_json(self) -> FileMatchJson:
        return {"path": escape_path(self.path), "score": self.score, "positions": list(self.positions)}


class FileSearchJson(TypedDict):
    query: str
    matches: list[FileMatchJson]
    listed: int
    total: int
    done: bool
    truncated: bool
    """More paths matched than ``matches`` lists."""


@dataclass(frozen=True, slots=True)
class FileSearch:
    """The best matches among the paths listed so far (``done``: the listing is complete)."""

    query: str
    matches: tuple[FileMatch, ...]
    listed: int
    total: int
    """Paths matched so far."""
    done: bool

    def to_json(self) -> FileSearchJson:
        return {
            "query": self.query,
            "matches": [m.to_json() for m in self.matches],
            "listed": self.listed,
            "total": self.total,
            "done": self.done,
            "truncated": self.total > len(self.matches),
        }


def match_path(query: str, path: str) -> FileMatch | None:
    """``path`` scored against every term of ``query`` (smart case), or None if one misses."""
    case_sensitive = any(c.isupper() for c in query)
    total, positions = 0, set[int]()
    for term in query.split():
        scored = score_term(term, path, case_sensitive)
        if scored is None:
            return None
        total += scored[0]
        positions.update(scored[1])
    return FileMatch(path, total, tuple(sorted(positions)))


def stream_matches(query: str, chunks: Iterable[list[str]], limit: int = 20) -> Iterator[FileSearch]:
    """The best ``limit`` matches after each chunk of paths, then once more with ``done``."""
    best: list[tuple[int, int, str, FileMatch]] = []  # a min-heap of (score, -len, path) keys
    listed = total = 0
    for chunk in chunks:
        listed += len(chunk)
        for path in chunk:
            found = match_path(query, path)
            if found is None:
                continue
            total += 1
            entry = (found.score, -len(path), _reverse(path), found)
            if len(best) < limit:
                heapq.heappush(best, entry)
            elif entry[:3] > best[0][:3]:
                heapq.heapreplace(best, entry)
        yield FileSearch(query, _ranked(best), listed, total, False)
    yield FileSearch(query, _ranked(best), listed, total, True)


def _reverse(path: str) -> str:
    """A key that sorts paths in reverse: in the min-heap, the alphabetically first path wins a tie."""
    return "".join(chr(0x10FFFF - ord(c)) for c in path)


def _ranked(best: list[tuple[int, int, str, FileMatch]]) -> tuple[FileMatch, ...]:
    return tuple(entry[3] for entry in sorted(best, key=lambda e: e[:3], reverse=True))


def listing_chunks(root: Path, settings: Settings, chunk: int = CHUNK) -> Iterator[list[str]]:
    """The repository's files in chunks: git's listing in a work tree (one fast call), else an
    ignore-aware walk yielding as it goes (the walk :func:`.walk.list_files` does, streamed)."""
    from ..infra import git

    if not isinstance(git.locate(root), git.Refusal):
        paths = walk.list_files(root, settings).paths
        for i in range(0, len(paths), chunk):
            yield list(paths[i : i + chunk])
        return
    yield from _walk_chunks(root, settings, chunk)


def _walk_chunks(root: Path, settings: Settings, chunk: int) -> Iterator[list[str]]:
    keep = walk.PathFilter(settings)
    stack: list[tuple[str, walk.IgnoreSpecs]] = [("", ())]
    out: list[str] = []
    listed = 0
    while stack:
        rel_dir, specs = stack.pop()
        directory = root / rel_dir if rel_dir else root
        spec, _ = walk._ignore_spec(root, rel_dir, settings)  # the map's walk reports unread ones
        if spec is not None:
            specs = (*specs, (rel_dir, spec))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            kind = walk._entry_kind(entry)
            if kind == "dir":
                if not keep.prunes(entry.name) and not walk._ignored(specs, rel, True):
                    subdirs.append(rel)
            elif kind == "file" and not walk._ignored(specs, rel, False) and keep.keep(rel, tracked=False):
                out.append(rel)
                listed += 1
        if len(out) >= chunk:
            yield out
            out = []
        if listed >= settings.max_listed_paths:
            break
        stack.extend((sub, specs) for sub in reversed(subdirs))
    if out:
        yield out
