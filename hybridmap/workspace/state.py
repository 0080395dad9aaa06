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
import stat
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..infra.patched import Patched, Projected
from ..languages.notebooks import NotebookError, is_notebook
from ..languages.registry import LanguageRegistry
from ..model import Diagnostic, FileStatus
from ..settings import Settings
from .walk import (
    DirectoryResolver,
    directories_of,
    head_reader,
    is_special_file,
    list_files,
    list_named,
    read_source,
)

Progress = Callable[[str, int, int], None]
Notice = Callable[[Diagnostic], None]
"""Told each of a listing's diagnostics as soon as the listing ends, before any file is read
(from the thread that lists; the map's ``diagnostics`` have them too): a root that is not a
project (``not_a_project``) may take a minute more to map, and a host's log should say so now."""


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
    def languages(self) -> Mapping[str, str]:
        """path -> language, for every listed file in a known language (read through the
        states: nothing copied per snapshot)."""
        return Projected(self.files, "language")

    @cached_property
    def shas(self) -> Mapping[str, str]:
        """path -> content sha256, for every file that could be read (read through the states;
        :func:`~hybridmap.infra.patched.changed_keys` follows the states' patches)."""
        return Projected(self.files, "sha256")

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

    def __init__(
        self, root: Path, settings: Settings, registry: LanguageRegistry, notice: Notice | None = None
    ) -> None:
        self.root = root
        self._settings = settings
        self._registry = registry
        self._notice = notice
        self._snapshot = Snapshot(root, {})
        #: First bytes of a file, for the few names only a shebang decides (``bin/php``).
        self._head = head_reader(root)
        self._listed: set[str] | None = None
        """Every path of the last listing, when it can be updated path by path (``by_path``)."""
        self._listed_directories: set[str] | None = None
        """Their directories, made on first need."""
        self.known: Mapping[str, FileState] = {}
        """States an earlier process kept (:mod:`.persisted`), trusted by the first refresh where
        the signature is the same, as the last refresh's are."""

    def language_of(self, rel: str) -> str | None:
        return self._registry.language_for(rel, self._head)

    def _is_source(self, rel: str) -> bool:
        return self.language_of(rel) is not None

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
        if self._notice is not None:
            for note in listing.diagnostics:
                self._notice(note)
        if progress is not None:
            progress("listing", total, total)
        visit = _Visit(self, self._snapshot.files, self._settings.stat_racy_seconds)
        for index, rel in enumerate(listing.paths, start=1):
            if visit.path(rel) and progress is not None:  # after a read: files read so far
                progress("reading", index, total)
        self._listed = set(listing.paths) if listing.by_path else None
        self._listed_directories = None
        self.known = {}  # the first refresh has used them: later ones have their own
        stats = {"list": t_list - t0, "read": time.perf_counter() - t_list, "files_listed": float(total)}
        return self._commit(visit, tuple(visit.special), (*listing.diagnostics, *visit.gone), stats)

    def refresh_paths(self, named: Collection[str]) -> tuple[Snapshot, ChangeSet] | None:
        """What :meth:`refresh` would find when only ``named`` (a watch's batch) moved, without
        listing or stat-ing the rest: git is asked about these paths alone. None when only a whole
        listing can say (the last one was not git's whole listing, a name is a directory or an
        ignore file, ``max_files`` would cut, git cannot answer): the caller refreshes."""
        if self._listed is None or any(_changes_listing(rel) for rel in named):
            return None
        t0 = time.perf_counter()
        if any(self._directory_now_or_before(rel) for rel in named):
            return None
        # A listed file that is still there stays listed: git is asked only about the rest (new
        # paths, and paths gone, which its index may still hold). What else could unlist a file
        # (an ignore file, .gitmodules, a directory) made this a whole listing above. Asking git
        # about every named path was 65 ms of an edit's map at 100,000 files (a fork, the index read).
        ask = [rel for rel in named if rel not in self._listed or not _present(os.path.join(self.root, rel))]
        listed_now = list_named(self.root, self._settings, ask)
        if listed_now is None:
            return None
        listed_now |= set(named).difference(ask)
        # The listing is changed in place (a copy of every path per batch was ~8 ms at 100,000).
        listed = self._listed
        leaving = [rel for rel in named if rel in listed and rel not in listed_now]
        if len(listed) - len(leaving) + len(listed_now.difference(listed)) > self._settings.max_files:
            return None
        t_list = time.perf_counter()
        previous = self._snapshot
        visit = _Visit(self, previous.files, self._settings.stat_racy_seconds, keep_unvisited=True)
        for rel in sorted(named):  # a file that stays keeps its place in the snapshot's order
            if rel in listed_now:
                visit.path(rel)
            else:
                visit.forget(rel)
        listed.difference_update(leaving)
        listed |= listed_now
        if self._listed_directories is not None:
            directories_of(listed_now, into=self._listed_directories)
        special = tuple(
            [rel for rel in previous.special_files if rel not in named]
            + sorted(rel for rel in listed_now if is_special_file(rel))
        )
        diagnostics = (*(d for d in previous.diagnostics if d.path not in named), *visit.gone)
        stats = {"list": t_list - t0, "read": time.perf_counter() - t_list, "files_listed": float(len(listed))}
        stats["files_named"] = float(len(named))  # a refresh of named paths (a watch's batch)
        return self._commit(visit, special, diagnostics, stats, among=sorted(named))

    def _commit(
        self,
        visit: _Visit,
        special: tuple[str, ...],
        diagnostics: tuple[Diagnostic, ...],
        stats: dict[str, float],
        among: Sequence[str] | None = None,
    ) -> tuple[Snapshot, ChangeSet]:
        """The new snapshot of a visit, and what changed since the last (``among``: the only
        paths that can have, when the visit kept every other file)."""
        files = visit.result()
        changes = _changes(visit.previous, files, visit.contents, among)
        stats.update(files_read=float(visit.read_count), files_reused=float(visit.reused))
        generation = self._snapshot.generation + (0 if changes.empty else 1)
        self._snapshot = Snapshot(self.root, files, special, diagnostics, stats, generation)
        return self._snapshot, changes

    def _directory_now_or_before(self, rel: str) -> bool:
        """Whether ``rel`` is a directory on disk, or was one of the last listing's (a directory
        removed or moved away: its files are not named one by one)."""
        try:
            if stat.S_ISDIR(os.stat(os.path.join(self.root, rel)).st_mode):
                return True
        except OSError:
            pass
        if self._listed_directories is None and self._listed is not None:
            self._listed_directories = directories_of(self._listed)
        return self._listed_directories is not None and rel in self._listed_directories

    def read_listed(
        self,
        rel: str,
        language: str,
        sig: tuple[int, ...] | None,
        racy_from: int,
        resolver: DirectoryResolver | None = None,
    ) -> tuple[FileState | None, bytes | None]:
        """Read one listed file whose signature moved (or that is new): its state and bytes."""
        kept: tuple[int, ...] = () if sig is None or sig[1] >= racy_from else sig
        read = read_source(self.root, rel, self._settings, resolver)
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


class _Visit:
    """One refresh's pass over listed paths: each is kept (same signature), read, or gone."""

    def __init__(
        self, workspace: Workspace, previous: Mapping[str, FileState], racy_seconds: float, keep_unvisited: bool = False
    ) -> None:
        self.workspace = workspace
        self.previous = previous
        self._keep = keep_unvisited
        self.files: dict[str, FileState] = {}
        """The visited paths' states (with ``keep_unvisited``: only those; :meth:`result` adds the rest)."""
        self._forgotten: set[str] = set()
        self.contents: dict[str, bytes] = {}
        self.special: list[str] = []
        self.gone: list[Diagnostic] = []
        self.reused = self.read_count = 0
        # Files whose ctime is at or after this were changing while we looked (module docstring).
        self._racy_from = time.time_ns() - int(racy_seconds * 1e9)
        self._prefix = os.path.join(workspace.root, "")
        self._resolver = DirectoryResolver(workspace.root)

    def forget(self, rel: str) -> None:
        self.files.pop(rel, None)
        self._forgotten.add(rel)

    def result(self) -> Mapping[str, FileState]:
        """Every file's state: the visited paths', and with ``keep_unvisited`` the previous states
        of the rest, as a :class:`~hybridmap.infra.patched.Patched` of the previous mapping (one
        copy; later stages ask it what moved instead of comparing every path)."""
        if not self._keep:
            return self.files
        changes: dict[str, FileState | None] = dict.fromkeys(self._forgotten - self.files.keys())
        changes.update(self.files)
        return Patched.patch(self.previous, changes)

    def path(self, rel: str) -> bool:
        """Visit one listed path; whether it was read."""
        if is_special_file(rel):
            self.special.append(rel)
        language = self.workspace.language_of(rel)
        if language is None:
            self.forget(rel)
            return False
        sig = _stat_signature(self._prefix + rel)
        if sig is None and _missing(self.workspace.root / rel):
            # Listed (git's index lists deleted files too) but not there: not a file of this
            # snapshot, so a removal for the sources; said, since it may be a race with us.
            self.gone.append(Diagnostic(rel, str(FileStatus.VANISHED), "file disappeared after listing"))
            self.forget(rel)
            return False
        old = self.previous.get(rel)
        # A notebook's language is its kernel's, read with its content: the same signature, the same.
        same_language = old is not None and (old.language == language or is_notebook(rel))
        if sig is not None and old is not None and old.signature == sig and same_language:
            self.files[rel] = old
            self.reused += 1
            return False
        known = self.workspace.known.get(rel) if old is None else None
        # New to this process (added, unread) but kept by the last: the same signature, the same.
        if (
            sig is not None
            and known is not None
            and known.signature == sig
            and (known.language == language or is_notebook(rel))
        ):
            self.files[rel] = known
            self.reused += 1
            return False
        self.read_count += 1
        state, data = self.workspace.read_listed(rel, language, sig, self._racy_from, self._resolver)
        if state is None:
            self.forget(rel)
            return True  # vanished between listing and stat: not a file of this snapshot
        self.files[rel] = state
        if data is not None and (old is None or old.sha256 != state.sha256 or old.language != state.language):
            self.contents[rel] = data
        return True


#: File names whose edit changes what a listing holds beyond themselves.
_LISTING_FILES = frozenset({".gitignore", ".ignore", ".gitmodules"})


def _changes_listing(rel: str) -> bool:
    return rel.rpartition("/")[2] in _LISTING_FILES


def _stat_signature(path: str) -> tuple[int, int, int, int] | None:
    """:func:`hybridmap.workspace.walk.stat_signature` of ``root / rel`` given as one string: every
    refresh stats every listed file, and building a ``Path`` per file was a third of a warm
    refresh of the standard library (~10 ms of ~30 ms)."""
    try:
        st = os.stat(path, follow_symlinks=True)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _present(path: str) -> bool:
    """Something is at ``path`` (a file, a link, anything ``lstat`` sees)."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


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
    previous: Mapping[str, FileState],
    files: Mapping[str, FileState],
    contents: Mapping[str, bytes],
    among: Sequence[str] | None = None,
) -> ChangeSet:
    """What differs, in ``files``' order (``among``: only these paths can differ, looked at in
    their order; three passes over every file were 50 ms of an edit's map at 100,000 files)."""
    present = list(files) if among is None else [p for p in among if p in files]
    added = tuple(p for p in present if p not in previous)
    changed = tuple(
        p
        for p in present
        if p in previous and (previous[p].sha256 != files[p].sha256 or previous[p].language != files[p].language)
    )
    removed = tuple(p for p in (previous if among is None else among) if p in previous and p not in files)
    return ChangeSet(added, changed, removed, contents)
