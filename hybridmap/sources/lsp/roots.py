"""Project roots: the directory a file's language server runs in.

A monorepo holds many projects: Go modules, TypeScript packages, Python projects, each with
its own manifest. A server started at the repository root serves none of them well (gopls
without a ``go.mod`` resolves nothing, ty does not find ``py/one``'s package by its absolute
name), so each file gets the *project root* its language's markers say:

- ``roots`` (the language TOML's key): the **nearest** directory, from the file's own upwards,
  holding one of these names is the file's project root (``go.mod``, ``package.json``,
  ``pyproject.toml``);
- ``workspace-roots``: markers of a workspace spanning several projects (``go.work``): the
  **outermost** directory holding one wins over any ``roots`` marker below it, so one server
  serves the whole workspace, as its tool expects. A marker may also be a file holding a line
  (``{ file = "Cargo.toml", line = '^[[]workspace[].]' }``): a cargo workspace without a
  ``Cargo.lock``, as most libraries are, is known by its manifest's ``[workspace]`` table (read
  up to ``MAX_MARKER_BYTES``, each answer kept until the file's size or time changes);
- nothing found: the repository root, as before.

Markers inside test data or vendored code (``paths.is_test_data_or_vendored``: ``fixtures/``,
``testdata/``, ``vendor/``...) make no root: those files go to the project around them.

The search never leaves the repository root and never follows a symlink out of it: a
directory that is a symlink holds no markers, and a marker that is a symlink counts only when
it resolves to a regular file inside the root. Markers are looked up with ``lstat`` (or one
``scandir`` for glob markers such as ``*.csproj``) in the directories of the listed files
only, never by walking the tree; each directory's answer is kept, in a bounded memo, until its
own modification time changes (adding or removing an entry changes it).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import stat
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...infra.boundaries import inside
from ...languages.paths import is_test_data_or_vendored

MAX_MARKERS = 32
"""How many marker names one language may declare (``roots`` and ``workspace-roots`` each)."""
MAX_SCAN_ENTRIES = 4096
"""Entries of one directory read to match glob markers: a huge directory costs no more."""
MAX_MARKER_BYTES = 256 * 1024
"""Bytes of a marker file read for a line marker: a huge manifest costs no more."""


@dataclass(frozen=True, slots=True)
class LineMarker:
    """A marker file that counts only when one of its lines matches ``line`` (a regex)."""

    file: str
    line: str


@dataclass(frozen=True, slots=True)
class RootMarkers:
    """One language's root markers (file names, or globs of file names, never paths)."""

    project: tuple[str, ...] = ()
    """The nearest directory holding one of these is the project root."""
    workspace: tuple[str, ...] = ()
    """The outermost directory holding one of these wins over ``project`` markers below it."""
    workspace_lines: tuple[LineMarker, ...] = ()
    """... or holding one of these files with a line that matches."""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.project) | frozenset(self.workspace) | {m.file for m in self.workspace_lines}

    def __bool__(self) -> bool:
        return bool(self.project or self.workspace or self.workspace_lines)


def marker_problem(name: str) -> str:
    """Why ``name`` cannot be a root marker ("" when it can): one file name, nothing that
    could name a path elsewhere."""
    if not name or len(name) > 255 or "\0" in name:
        return f"{name!r} is not a file name"
    if "/" in name or "\\" in name or name in (".", ".."):
        return f"{name!r} is a path, not a file name"
    return ""


def _is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


@dataclass(frozen=True, slots=True)
class _Seen:
    """What one directory held when it was last looked at."""

    signature: tuple[int, int]
    """(st_mtime_ns, st_ino) of the directory: an entry added or removed changes the first."""
    asked: frozenset[str]
    found: frozenset[str]


class ProjectRoots:
    """Finds each file's project root under one repository root (resolved, absolute)."""

    def __init__(self, root: Path, racy_seconds: float = 2.0, max_dirs: int = 65_536) -> None:
        self._root = root
        self._racy_ns = int(racy_seconds * 1e9)
        self._max_dirs = max(1, max_dirs)
        self._memo: OrderedDict[str, _Seen] = OrderedDict()
        self._lines: OrderedDict[tuple[str, LineMarker], tuple[tuple[int, int, int], bool]] = OrderedDict()
        """(marker file, line marker) -> ((size, mtime, inode) when read, whether a line matched)."""
        self.stats = {"dirs_checked": 0, "dirs_reused": 0}

    def assign(self, files: Iterable[tuple[str, RootMarkers]]) -> dict[str, str]:
        """``path -> project root`` (relative to the repository root; "" is the root itself)
        for each ``(path, markers)``; one look at each directory per call."""
        found: dict[tuple[str, frozenset[str]], frozenset[str] | None] = {}  # this call's looks
        resolved: dict[tuple[str, RootMarkers], str] = {}
        out: dict[str, str] = {}
        for path, markers in files:
            directory = _parent(path)
            if directory is None or not markers:
                out[path] = ""
                continue
            key = (directory, markers)
            if key not in resolved:
                resolved[key] = self._root_of_dir(directory, markers, found)
            out[path] = resolved[key]
        return out

    def root_of(self, path: str, markers: RootMarkers) -> str:
        """The project root of one file (see :meth:`assign`)."""
        return self.assign([(path, markers)])[path]

    def _root_of_dir(
        self, directory: str, markers: RootMarkers, found: dict[tuple[str, frozenset[str]], frozenset[str] | None]
    ) -> str:
        chain: list[str] = []  # the file's directory, then each parent up to the root ("")
        current: str | None = directory
        while current is not None:
            chain.append(current)
            current = _parent(current) if current else None
        names = markers.names
        nearest: str | None = None
        outermost: str | None = None
        # Root first: a directory that is not a real one (a symlink, gone) ends the search, so
        # nothing reached through a symlinked directory is ever looked at.
        for current in reversed(chain):
            key = (current, names)
            if key not in found:
                # A fixture's or a vendored package's markers do not make a project of the
                # repository (this repository's 54 language fixtures would each get a server).
                data = bool(current) and is_test_data_or_vendored(current)
                found[key] = frozenset() if data else self._present(current, names)
            here = found[key]
            if here is None:
                break
            if outermost is None and (
                not here.isdisjoint(markers.workspace)
                or any(m.file in here and self._holds_line(current, m) for m in markers.workspace_lines)
            ):
                outermost = current
            if not here.isdisjoint(markers.project):
                nearest = current
        if outermost is not None:
            return outermost
        return nearest if nearest is not None else ""

    def _present(self, directory: str, names: frozenset[str]) -> frozenset[str] | None:
        """Which of ``names`` are marker files in ``directory`` (relative to the root); None
        when it is not a real directory."""
        absolute = self._root / directory if directory else self._root
        try:
            st = os.lstat(absolute)
        except (OSError, ValueError):
            return None
        if not stat.S_ISDIR(st.st_mode):  # a symlinked directory may lead anywhere
            return None
        signature = (st.st_mtime_ns, st.st_ino)
        seen = self._memo.get(directory)
        if seen is not None and seen.signature != signature:
            seen = None
        if seen is not None and names <= seen.asked:
            self._memo.move_to_end(directory)
            self.stats["dirs_reused"] += 1
            return seen.found & names
        self.stats["dirs_checked"] += 1
        # Languages ask different names of the same directory: look only at the new ones.
        asked, present = (seen.asked, seen.found) if seen is not None else (frozenset(), frozenset())
        present |= self._look(absolute, names - asked)
        # A directory changed within the racy window may change again within the same
        # timestamp tick: not remembered, looked at again next time.
        if time.time_ns() - st.st_mtime_ns > self._racy_ns:
            self._memo[directory] = _Seen(signature, asked | names, present)
            self._memo.move_to_end(directory)
            while len(self._memo) > self._max_dirs:
                self._memo.popitem(last=False)
        return present & names

    def _look(self, directory: Path, names: frozenset[str]) -> frozenset[str]:
        exact = [n for n in names if not _is_glob(n)]
        globs = [n for n in names if _is_glob(n)]
        present = {n for n in exact if self._marker_file(directory / n)}
        if globs:
            try:
                with os.scandir(directory) as entries:
                    for entry in itertools.islice(entries, MAX_SCAN_ENTRIES):
                        hits = [g for g in globs if fnmatch.fnmatchcase(entry.name, g)]
                        if hits and self._marker_file(Path(entry.path)):
                            present.update(hits)
            except OSError:
                pass
        return frozenset(present)

    def _marker_file(self, path: Path) -> bool:
        """A regular file, or a symlink to a regular file inside the root."""
        try:
            st = os.lstat(path)
        except (OSError, ValueError):
            return False
        if stat.S_ISREG(st.st_mode):
            return True
        if not stat.S_ISLNK(st.st_mode):
            return False
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):  # dangling, a loop
            return False
        return inside(self._root, target) and target.is_file()

    def _holds_line(self, directory: str, marker: LineMarker) -> bool:
        """Whether ``directory``'s ``marker.file`` (a marker file: regular, inside the root) has a
        line matching ``marker.line``, in its first ``MAX_MARKER_BYTES``."""
        path = (self._root / directory if directory else self._root) / marker.file
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return False
        if not stat.S_ISREG(st.st_mode):  # swapped since it was found: a FIFO would block the read
            return False
        key, signature = (str(path), marker), (st.st_size, st.st_mtime_ns, st.st_ino)
        held = self._lines.get(key)
        if held is not None and held[0] == signature:
            return held[1]
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # never waits on what replaced the file
            with os.fdopen(fd, "rb") as file:
                head = file.read(MAX_MARKER_BYTES)
        except (OSError, ValueError):
            return False
        holds = re.search(marker.line.encode(), head, re.MULTILINE) is not None
        self._lines[key] = (signature, holds)
        while len(self._lines) > self._max_dirs:
            self._lines.popitem(last=False)
        return holds


def _parent(path: str) -> str | None:
    """The directory part of a listed relative path ("" for the root); None for a path that
    is not a plain relative one (absolute, or with ``..``/``.`` parts), never climbed."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    return "/".join(parts[:-1])


def groups(roots: Mapping[str, str], languages: Mapping[str, str]) -> dict[tuple[str, str], list[str]]:
    """(language, project root) -> its files, from ``path -> root`` and ``path -> language``."""
    out: dict[tuple[str, str], list[str]] = {}
    for path, root in roots.items():
        out.setdefault((languages[path], root), []).append(path)
    return out


def contains(root: str, path: str) -> bool:
    """Whether the relative ``path`` is under the relative project ``root`` ("" holds all)."""
    return not root or path == root or path.startswith(root + "/")
