"""The one owner of the repository's current state: what files there are, and what changed.

A :class:`Workspace` lives as long as its repository map. :meth:`Workspace.refresh` lists the
files (``walk.list_files``: git's index, else a bounded walk), reads the ones whose stat
signature moved, and returns a :class:`Snapshot` of every file in a known language (its
language, content hash, read diagnostics) with the :class:`ChangeSet` since the previous
refresh, *by content*: a file touched but not changed is not in it. Sources (tree-sitter, the
language servers, an index) and caches take that change set instead of each detecting change
their own way.

Between refreshes it remembers each file's (mtime, ctime, size, inode): a warm refresh
re-reads only files whose signature changed. A file that changed just before it was looked at
is re-read next time whatever its signature says (a second write in the same timestamp tick
would not show), so the next map always sees the last write.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..languages.notebooks import NotebookError, is_notebook
from ..languages.registry import LanguageRegistry
from ..model import Diagnostic, FileStatus
from ..settings import Settings
from .walk import head_reader, is_special_file, list_files, read_source

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class FileState:
    """One listed file in a known language, as last read."""

    language: str
    sha256: str
    """sha256 of the content; empty when it could not be read (see ``diagnostics``)."""
    signature: tuple[int, ...] = ()
    """Stat signature trusted for the next refresh; empty: re-read next time."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Why it was not read, or what was converted to read it (transcoded, NUL bytes)."""


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The repository at one refresh. Read-only; the next refresh makes a new one."""

    root: Path
    files: Mapping[str, FileState]
    special_files: tuple[str, ...] = ()
    """Root-level READMEs, manifests and CI files (shown by name), in any language or none."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Listing problems (too many files, git refused...)."""
    stats: Mapping[str, float] = field(default_factory=dict)
    generation: int = 0
    """Bumped by every refresh whose change set is not empty."""

    @cached_property
    def languages(self) -> dict[str, str]:
        """path -> language, for every listed file in a known language."""
        return {path: state.language for path, state in self.files.items()}

    @cached_property
    def shas(self) -> dict[str, str]:
        """path -> content sha256, for every file that could be read."""
        return {path: state.sha256 for path, state in self.files.items() if state.sha256}

    def file_diagnostics(self) -> list[Diagnostic]:
        """The listing's diagnostics, then each file's."""
        out = list(self.diagnostics)
        for state in self.files.values():
            out.extend(state.diagnostics)
        return out


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """What differs from the previous snapshot, by content. The first refresh adds every file."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    contents: Mapping[str, bytes] = field(default_factory=dict)
    """The bytes read for added and changed files (sources parse from these, not the disk)."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    @property
    def touched(self) -> frozenset[str]:
        """Every path added, changed or removed."""
        return frozenset((*self.added, *self.changed, *self.removed))


class Workspace:
    """Lists and reads one repository root; the only place that decides what changed."""

    def __init__(self, root: Path, settings: Settings, registry: LanguageRegistry) -> None:
        self.root = root
        self._settings = settings
        self._registry = registry
        self._snapshot = Snapshot(root, {})
        #: First bytes of a file, for the few names only a shebang decides (``bin/php``).
        self._head = head_reader(root)

    def _is_source(self, rel: str) -> bool:
        return self._registry.language_for(rel, self._head) is not None

    @property
    def snapshot(self) -> Snapshot:
        """The last refresh's snapshot (empty before the first)."""
        return self._snapshot

    def refresh(self, progress: Progress | None = None) -> tuple[Snapshot, ChangeSet]:
        """List and read what moved; the new snapshot and what changed since the last."""
        t0 = time.perf_counter()
        listing = list_files(self.root, self._settings, self._is_source)
        t_list = time.perf_counter()
        total = len(listing.paths)
        if progress is not None:
            progress("listing", total, total)
        previous = self._snapshot.files
        files: dict[str, FileState] = {}
        contents: dict[str, bytes] = {}
        special: list[str] = []
        gone: list[Diagnostic] = []
        reused = read_count = 0
        # Files whose ctime is at or after this were changing while we looked (module docstring).
        racy_from = time.time_ns() - int(self._settings.stat_racy_seconds * 1e9)
        prefix = os.path.join(self.root, "")
        for index, rel in enumerate(listing.paths, start=1):
            if is_special_file(rel):
                special.append(rel)
            language = self._registry.language_for(rel, self._head)
            if language is None:
                continue
            sig = _stat_signature(prefix + rel)
            if sig is None and _missing(self.root / rel):
                # Listed (git's index lists deleted files too) but not there: not a file of this
                # snapshot, so a removal for the sources; said, since it may be a race with us.
                gone.append(Diagnostic(rel, str(FileStatus.VANISHED), "file disappeared after listing"))
                continue
            old = previous.get(rel)
            # A notebook's language is its kernel's, read with its content: the same signature, the same.
            same_language = old is not None and (old.language == language or is_notebook(rel))
            if sig is not None and old is not None and old.signature == sig and same_language:
                files[rel] = old
                reused += 1
                continue
            read_count += 1
            state, data = self._read(rel, language, sig, racy_from)
            if progress is not None:  # after the read: "reading" reports files read so far
                progress("reading", index, total)
            if state is None:
                continue  # vanished between listing and stat: not a file of this snapshot
            files[rel] = state
            if data is not None and (old is None or old.sha256 != state.sha256 or old.language != state.language):
                contents[rel] = data
        changes = _changes(previous, files, contents)
        stats = {
            "list": t_list - t0,
            "read": time.perf_counter() - t_list,
            "files_listed": float(total),
            "files_read": float(read_count),
            "files_reused": float(reused),
        }
        generation = self._snapshot.generation + (0 if changes.empty else 1)
        diagnostics = (*listing.diagnostics, *gone)
        self._snapshot = Snapshot(self.root, files, tuple(special), diagnostics, stats, generation)
        return self._snapshot, changes

    def _read(
        self, rel: str, language: str, sig: tuple[int, ...] | None, racy_from: int
    ) -> tuple[FileState | None, bytes | None]:
        kept: tuple[int, ...] = () if sig is None or sig[1] >= racy_from else sig
        read = read_source(self.root, rel, self._settings)
        if read.status is not FileStatus.OK:
            diagnostic = Diagnostic(rel, str(read.status), read.message)
            if sig is None:  # gone, or never a readable file: said once, not remembered
                return FileState(language, "", (), (diagnostic,)), None
            return FileState(language, "", kept, (diagnostic,)), None
        notes = tuple(Diagnostic(rel, kind, message) for kind, message in read.notes)
        if is_notebook(rel):
            language, problem = self._notebook_language(read.data, language)
            if problem is not None:
                return FileState(language, "", kept, (*notes, Diagnostic(rel, *problem))), None
        return FileState(language, read.sha256, kept, notes), read.data

    def _notebook_language(self, data: bytes, listed: str) -> tuple[str, tuple[str, str] | None]:
        """A notebook's language (its kernel's), or why it is not mapped: (kind, message)."""
        try:
            language = self._registry.notebook_language(data)
        except NotebookError as exc:
            return listed, ("notebook_unreadable", f"{exc}; its code cells are not mapped")
        if language not in self._registry.names:
            return listed, (
                "notebook_language",
                f"kernel language {language[:40]!r} is not one hybridmap parses; its code cells are not mapped",
            )
        return language, None

    def read(self, rel: str) -> bytes | None:
        """The current bytes of a listed file when they still hash to the snapshot's sha256
        (a source that needs a file it did not keep, e.g. one whose parse was deferred)."""
        state = self._snapshot.files.get(rel)
        if state is None or not state.sha256:
            return None
        result = read_source(self.root, rel, self._settings)
        if result.status is not FileStatus.OK or result.sha256 != state.sha256:
            return None
        return result.data


def _stat_signature(path: str) -> tuple[int, int, int, int] | None:
    """:func:`hybridmap.workspace.walk.stat_signature` of ``root / rel`` given as one string: every
    refresh stats every listed file, and building a ``Path`` per file was a third of a warm
    refresh of the standard library (~10 ms of ~30 ms)."""
    try:
        st = os.stat(path, follow_symlinks=True)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _missing(path: Path) -> bool:
    """Not there at all (not: there but unreadable, or a dangling link: those are said)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _changes(
    previous: Mapping[str, FileState], files: Mapping[str, FileState], contents: Mapping[str, bytes]
) -> ChangeSet:
    added = tuple(p for p in files if p not in previous)
    changed = tuple(
        p
        for p, state in files.items()
        if p in previous and (previous[p].sha256 != state.sha256 or previous[p].language != state.language)
    )
    removed = tuple(p for p in previous if p not in files)
    return ChangeSet(added, changed, removed, contents)
