"""Find the repository's files and read them safely.

Listing: in a git work tree, ``git ls-files`` (tracked + untracked-but-not-ignored), and the
same of each checked-out submodule (``max_submodules``);
otherwise an ignore-aware walk (``.gitignore`` and ``.ignore`` at every level,
matched by :mod:`.ignore`: gitignore semantics in polynomial time). Either way the user's ``include`` /
``exclude`` patterns apply, and untracked files under build-output directories
(``untracked_build_dirs``) are left out unless an ``include`` pattern names them. Reading: every file is resolved
and must stay inside the root (symlinks are never followed out, and the file
actually opened is checked again, so a directory swapped for a symlink between
the check and the open is caught), then classified as ok / binary / too large /
minified / undecodable / unreadable / vanished. Nothing here raises for a bad
file: it becomes a :class:`Diagnostic`, and no message ever carries a path the
operating system reported (it could lie outside the root).
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import RootError
from ..infra import git
from ..infra.boundaries import inside
from ..infra.ignore import IgnoreSpec
from ..infra.sanitize import escape_path
from ..languages.notebooks import is_notebook
from ..languages.paths import is_test_data_or_vendored
from ..model import Diagnostic, FileStatus
from ..settings import Settings

#: Files listed first in a map when present: they tell a model what the project is.
SPECIAL_FILE_NAMES = frozenset(
    {
        "README",
        "README.md",
        "README.rst",
        "README.txt",
        "AGENTS.md",
        "CLAUDE.md",
        "CONTRIBUTING.md",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "package.json",
        "tsconfig.json",
        "go.mod",
        "Cargo.toml",
        "Gemfile",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "CMakeLists.txt",
        "Makefile",
        "meson.build",
        "composer.json",
        "mix.exs",
        "Dockerfile",
        "docker-compose.yml",
        ".gitlab-ci.yml",
        ".travis.yml",
        "Jenkinsfile",
        "deno.json",
        "pubspec.yaml",
        "Package.swift",
    }
)


def is_special_file(rel: str) -> bool:
    """Root-level READMEs, manifests and agent notes, and CI workflow files."""
    if rel.startswith(".github/workflows/") and rel.endswith((".yml", ".yaml")):
        return True
    return "/" not in rel and rel in SPECIAL_FILE_NAMES


@dataclass(frozen=True, slots=True)
class Listing:
    """Relative POSIX paths under the root, and how they were found."""

    paths: tuple[str, ...]
    source: str  # "git" or "walk"
    diagnostics: tuple[Diagnostic, ...] = ()
    by_path: bool = False
    """Whether :func:`list_named` answers for any of these paths as this listing would: git's
    listing, whole (nothing cut by ``max_listed_paths`` or ``max_files``) and without submodules."""


@dataclass(frozen=True, slots=True)
class ReadResult:
    status: FileStatus
    data: bytes = b""
    sha256: str = ""
    message: str = ""
    size: int = 0
    notes: tuple[tuple[str, str], ...] = ()
    """For an OK file: (diagnostic kind, message) for what was converted to make it
    parseable (``transcoded``, ``nul_bytes``); ``message`` joins their messages."""


def resolve_root(root: str | os.PathLike[str]) -> Path:
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise RootError(f"root '{root}' does not exist or cannot be resolved") from exc
    if not resolved.is_dir():
        raise RootError(f"root '{root}' is not a directory")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise RootError(f"root '{root}' is not readable")
    return resolved


class PathFilter:
    """The user's ``include`` / ``exclude`` patterns and the build-output rule, for one listing."""

    def __init__(self, settings: Settings) -> None:
        self._include = IgnoreSpec.from_lines(settings.include) if settings.include else None
        self._exclude = IgnoreSpec.from_lines(settings.exclude) if settings.exclude else None
        self._build_dirs = settings.untracked_build_dirs
        # An untracked .venv/ or node_modules/ nobody listed in .gitignore: git's listing has it
        # (``--others``), the walk never enters it; neither lists it.
        self._skipped_names = frozenset(settings.walk_exclude_dirs)
        # Answers per directory: a listing asks about the same few thousand directories for a
        # million files (measured: 38 s of a 1M-path walk went to these checks before).
        self._build_names: dict[str, bool] = {}
        self._build_parents: dict[str, bool] = {}

    def keep(self, rel: str, tracked: bool) -> bool:
        included = self._include is not None and self._include.match_file(rel)
        if self._include is not None and not included:
            return False
        if self._exclude is not None and self._exclude.match_file(rel):
            return False
        # Build output nobody committed: a copy of the sources (build/lib) or artefacts.
        return tracked or included or not self._under_build_dir(rel[: max(rel.rfind("/"), 0)])

    def _under_build_dir(self, directory: str) -> bool:
        if not directory:
            return False
        known = self._build_parents.get(directory)
        if known is None:
            known = any(self.excluded_name(part) or self.is_build_dir(part) for part in directory.split("/"))
            self._build_parents[directory] = known
        return known

    def is_build_dir(self, name: str) -> bool:
        known = self._build_names.get(name)
        if known is None:
            known = any(fnmatch.fnmatchcase(name, pattern) for pattern in self._build_dirs)
            self._build_names[name] = known
        return known

    def excluded_name(self, name: str) -> bool:
        """A directory name of ``walk_exclude_dirs``: the walk never enters it, and git's listing
        keeps only what git tracks under it."""
        return name in self._skipped_names

    def prunes(self, name: str) -> bool:
        """Whether the walk may skip a directory of this name unseen: ``walk_exclude_dirs`` always,
        build output when no include could bring it back."""
        return self.excluded_name(name) or (self._include is None and self.is_build_dir(name))


#: The longest path a listing record may hold (PATH_MAX and its NUL), for the byte bound of a listing.
_MAX_RECORD_BYTES = 4098


def _git_ls_files(
    root: Path, max_paths: int, max_submodules: int = 0
) -> tuple[list[tuple[str, bool]] | None, Diagnostic | None, bool, tuple[Diagnostic, ...], bool]:
    """(path relative to ``root``, tracked) from git; None when git cannot or may not list them.

    git is asked only through the hardened runner of :mod:`hybridmap.infra.git`, and only
    when :func:`hybridmap.infra.git.locate` finds the root inside a work tree that is safe to
    ask about. The diagnostic says why a repository was not used (outside a work tree
    there is nothing to say). git's own messages are not echoed: they name paths that
    may lie outside the root. Git is stopped after ``max_paths`` records (the third value
    says it was): listing a million-path tree costs seconds and memory before any file is read.
    Checked-out submodules are listed too (:func:`_with_submodules`); the fourth value says which
    were left out and why. The last: whether the repository has no submodule under the root (a
    listing :func:`list_named` can update path by path).
    """
    where = git.locate(root)
    if isinstance(where, git.Refusal):
        if where.expected:
            return None, None, False, (), False
        return None, Diagnostic(".", "git_unavailable", f"{where.reason}; {_WALKED}"), False, (), False
    out, problem, truncated = _ls_files(root, max_paths)
    if out is None:
        return None, Diagnostic(".", "git_unavailable", f"{problem}; {_WALKED}"), False, (), False
    if truncated:
        return out, None, True, (), False
    out, notes, truncated, gitlinks = _with_submodules(root, where, out, max_paths, max_submodules)
    return out, None, truncated, notes, not gitlinks


#: git's listing: tracked and untracked files, not ignored ones; ``-t`` tags each path: "? " for
#: untracked, another letter for what the index holds.
_LS_FILES = ("ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard")


def _ls_files(cwd: Path, max_paths: int) -> tuple[list[tuple[str, bool]] | None, str, bool]:
    """git's listing of ``cwd``: (path relative to it, tracked), whether git was stopped at
    ``max_paths`` records; None and why when git failed."""
    try:
        proc, truncated = git.run_git_bounded(
            cwd,
            *_LS_FILES,
            max_output=min(max_paths * _MAX_RECORD_BYTES, 1 << 30),
            max_records=max_paths,
        )
    except git.GitUnavailable as exc:
        return None, str(exc), False
    if not proc.ok and not truncated:
        return None, f"git ls-files failed (exit {proc.returncode})", False
    seen: set[str] = set()
    out: list[tuple[str, bool]] = []
    for rel, tracked in _ls_records(proc.stdout):
        if rel not in seen:  # a conflicted file is listed once per stage
            seen.add(rel)
            out.append((rel, tracked))
    return out, "", truncated


def _ls_records(stdout: bytes) -> Iterator[tuple[str, bool]]:
    """(path, tracked) of each whole record of :data:`_LS_FILES`'s output."""
    for raw in stdout.split(b"\0"):
        if len(raw) >= 3:
            yield os.fsdecode(raw[2:]), raw[:2] != b"? "


#: Submodule paths named in a diagnostic; the rest are counted.
_SUBMODULES_SHOWN = 20


def _with_submodules(
    root: Path, where: git.Location, listed: list[tuple[str, bool]], max_paths: int, max_submodules: int
) -> tuple[list[tuple[str, bool]], tuple[Diagnostic, ...], bool, int]:
    """``listed`` with every checked-out submodule under ``root`` listed in place of its gitlink
    entry (nested ones too, at most ``max_submodules`` in all), (diagnostics for those left out),
    whether ``max_paths`` cut the listing, and how many gitlinks there were.

    ``ls-files --recurse-submodules`` cannot list untracked files, so each submodule is a
    repository of its own: asked through the same hardened runner (its own config, hooks and
    fsmonitor run nothing), and only when :func:`hybridmap.infra.git.locate_submodule` accepts it (its
    work tree is its directory, its git directory inside it or in the superproject's
    ``.git/modules``). Nothing of ``.gitmodules`` is read (its URLs and ``update`` commands are
    the repository's), only the index's gitlinks; a submodule git refuses or cannot list is left
    out with the reason, and one not checked out (no ``.git``) is simply absent.
    """
    out = listed
    gitlinks: set[str] = set()
    notes: list[Diagnostic] = []
    absent: list[str] = []
    over: list[str] = []
    mapped = 0
    pending: list[tuple[git.Location, Path, str]] = [(where, root, "")]
    while pending:
        repository, cwd, prefix = pending.pop(0)
        links, problem = _gitlinks(repository, cwd, max_paths)
        if problem:
            notes.append(Diagnostic(prefix.rstrip("/") or ".", "submodule_skipped", problem))
        for link in links:
            rel = prefix + link
            gitlinks.add(rel)
            work_tree = root / rel
            if not _checked_out(work_tree):
                absent.append(rel)
                continue
            if mapped >= max_submodules:
                over.append(rel)
                continue
            mapped += 1
            if Path(os.path.realpath(work_tree)) != work_tree:
                found: git.Location | git.Refusal = git.Refusal("its path passes through a symbolic link")
            else:
                found = git.locate_submodule(work_tree, repository)
            if isinstance(found, git.Refusal):
                notes.append(Diagnostic(rel, "submodule_skipped", f"submodule not listed: {found.reason}"))
                continue
            room = max_paths - len(out)
            files, why, cut = _ls_files(work_tree, room) if room > 0 else ([], "", True)
            if files is None:
                notes.append(Diagnostic(rel, "submodule_skipped", f"submodule not listed: {why}"))
                continue
            out.extend((f"{rel}/{path}", tracked) for path, tracked in files)
            if cut:
                return _without(out, gitlinks), tuple(notes), True, len(gitlinks)
            pending.append((found, work_tree, f"{rel}/"))
    if absent:
        notes.append(_submodules_note(absent, "submodule(s) not checked out (git submodule update --init)"))
    if over:
        notes.append(_submodules_note(over, f"checked-out submodule(s) past max_submodules={max_submodules}"))
    return _without(out, gitlinks), tuple(notes), False, len(gitlinks)


def _gitlinks(repository: git.Location, cwd: Path, max_paths: int) -> tuple[list[str], str]:
    """The submodule paths (gitlinks) the index of ``repository`` holds under ``cwd``, relative
    to it, and why they could not be read ('' when they could). Only asked when the work tree
    has a ``.gitmodules`` (git itself reads submodules from it): no second listing otherwise."""
    try:
        if not stat.S_ISREG(os.lstat(repository.top / ".gitmodules").st_mode):
            return [], ""
    except OSError:
        return [], ""
    try:
        proc, _ = git.run_git_bounded(
            cwd,
            "ls-files",
            "-z",
            "--stage",
            max_output=min(max_paths * (_MAX_RECORD_BYTES + 64), 1 << 30),
            max_records=max_paths,
        )
    except git.GitUnavailable as exc:
        return [], f"submodules not looked for: {exc}"
    links: dict[str, None] = {}
    for raw in proc.stdout.split(b"\0"):
        meta, tab, path = raw.partition(b"\t")
        if tab and meta.startswith(b"160000 "):  # a gitlink: "MODE SHA STAGE<TAB>PATH"
            links[os.fsdecode(path)] = None
    return list(links), ""


def _checked_out(work_tree: Path) -> bool:
    """A submodule's directory with a ``.git`` (``git submodule update`` has run); not followed
    if it is a link (refused later, with the reason)."""
    try:
        if stat.S_ISLNK(os.lstat(work_tree).st_mode):
            return True
        os.lstat(work_tree / ".git")
    except OSError:
        return False
    return True


def _without(listed: list[tuple[str, bool]], gitlinks: set[str]) -> list[tuple[str, bool]]:
    """The listing without gitlink entries: a submodule is a directory, not a file to read."""
    return [item for item in listed if item[0] not in gitlinks] if gitlinks else listed


def _submodules_note(paths: list[str], what: str) -> Diagnostic:
    shown = ", ".join(escape_path(path) for path in paths[:_SUBMODULES_SHOWN])
    more = f" and {len(paths) - _SUBMODULES_SHOWN} more" if len(paths) > _SUBMODULES_SHOWN else ""
    return Diagnostic(".", "submodule_skipped", f"{len(paths)} {what}, not mapped: {shown}{more}")


_WALKED = (
    "files were listed by walking the directory (.gitignore files honoured, .git/info/exclude and global excludes not)"
)


#: The ignore files the walk honours in every directory; the later one's patterns win (ripgrep's order).
IGNORE_FILES = (".gitignore", ".ignore")

#: Each directory's ignore patterns, with the directory (relative to the root) they apply under.
IgnoreSpecs = tuple[tuple[str, IgnoreSpec], ...]


def _ignore_spec(root: Path, rel_dir: str, settings: Settings) -> tuple[IgnoreSpec | None, list[Diagnostic]]:
    """The patterns of the ignore files in ``rel_dir``, and a diagnostic for each one not read.

    The repository writes them: each is read like a source (never through a link, only a regular
    file, at most ``max_file_bytes``, non-blocking: a FIFO named ``.gitignore`` hung the walk for
    good), and matched by :mod:`.ignore` (a pattern cannot make matching exponential, and one
    git would never match is skipped rather than raised).
    """
    lines: list[str] = []
    problems: list[Diagnostic] = []
    for name in IGNORE_FILES:
        rel = f"{rel_dir}/{name}" if rel_dir else name
        data, problem = _read_ignore_file(root, rel, settings.max_file_bytes)
        if problem:
            problems.append(Diagnostic(rel, str(FileStatus.UNREADABLE), f"{problem}; its patterns are not applied"))
        elif data:
            lines.extend(data.decode("utf-8", errors="replace").splitlines())
    return (IgnoreSpec.from_lines(lines) if lines else None), problems


def _read_ignore_file(root: Path, rel: str, limit: int) -> tuple[bytes, str]:
    """(the file's bytes, "") or (b"", why it was not read); (b"", "") when there is none."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(root / rel, flags)
    except (FileNotFoundError, NotADirectoryError):
        return b"", ""
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # git does not follow an in-tree .gitignore link either
            return b"", "a symbolic link, not read"
        if exc.errno == errno.ENAMETOOLONG:  # the directory's own listing says so, once
            return b"", ""
        return b"", f"cannot open: {_reason(exc)}"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return b"", ""  # a directory of that name: nothing to read, nothing to say
        if not stat.S_ISREG(info.st_mode) or not _opened_inside(root, fd):
            return b"", "not a regular file inside the root, not read"
        if info.st_size > limit:
            return b"", f"{info.st_size} bytes > max_file_bytes={limit}, not read"
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        return b"", f"cannot read: {_reason(exc)}"
    finally:
        os.close(fd)
    if len(data) > limit:
        return b"", f"more than max_file_bytes={limit} bytes, not read"
    return data, ""


def _ignored(specs: IgnoreSpecs, rel: str, is_dir: bool) -> bool:
    for prefix, spec in specs:
        sub = rel[len(prefix) + 1 :] if prefix else rel
        if spec.match_file(sub + "/" if is_dir else sub):
            return True
    return False


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """ "dir" (a real directory), "dirlink" (a symlink to one: never entered) or "file"."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_symlink() and entry.is_dir():
            return "dirlink"
    except OSError:
        pass
    return "file"  # anything else is listed; reading decides what it is


def _walk(root: Path, settings: Settings, keep: PathFilter) -> tuple[list[str], list[Diagnostic]]:
    out: list[str] = []
    diagnostics: list[Diagnostic] = []
    # Depth-first with an explicit stack, not os.walk: os.walk recurses, and a tree
    # about 1000 directories deep would raise RecursionError. Each pending directory
    # carries the ignore specs of its ancestors: (dir prefix relative to root, spec).
    stack: list[tuple[str, IgnoreSpecs]] = [("", ())]
    while stack:
        rel_dir, specs = stack.pop()
        directory = root / rel_dir if rel_dir else root
        spec, problems = _ignore_spec(root, rel_dir, settings)
        diagnostics.extend(problems)
        if spec is not None:
            specs = (*specs, (rel_dir, spec))
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError as exc:
            diagnostics.append(
                Diagnostic(rel_dir or ".", "unreadable", f"cannot list directory: {exc.strerror or type(exc).__name__}")
            )
            continue
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            kind = _entry_kind(entry)
            if kind == "dir":
                if not keep.prunes(entry.name) and not _ignored(specs, rel, True):
                    subdirs.append(rel)
            elif kind == "file" and not _ignored(specs, rel, False) and keep.keep(rel, tracked=False):
                out.append(rel)
                if len(out) >= settings.max_listed_paths:
                    diagnostics.append(_listing_cut(settings))
                    return out, diagnostics
        stack.extend((sub, specs) for sub in reversed(subdirs))  # sorted order, depth first
    return out, diagnostics


def list_files(root: Path, settings: Settings, is_source: Callable[[str], bool] | None = None) -> Listing:
    """List candidate files under an already-resolved ``root``.

    When more than ``max_files`` are found, the kept ones are chosen by what they are, not by
    where they sort (a ``bulk/`` of data sorting first must not push out every source): project
    files, then the repository's own sources (``is_source``), then sources in test data or
    vendored code, then everything else; listing order within each.
    """
    listed, git_problem, truncated, notes, plain = _git_ls_files(
        root, settings.max_listed_paths, settings.max_submodules
    )
    keep = PathFilter(settings)
    # A root that git ignores (e.g. a directory inside an ignored tree) lists nothing: walk it.
    if listed:
        git_paths = [rel for rel, tracked in listed if keep.keep(rel, tracked)]
        diagnostics = [*notes, _listing_cut(settings)] if truncated else list(notes)
        listing = _within_max_files(git_paths, "git", diagnostics, settings, is_source)
        by_path = plain and not truncated and len(listing.paths) == len(git_paths)
        return replace(listing, by_path=by_path) if by_path else listing
    paths, diagnostics = _walk(root, settings, keep)
    if git_problem is not None:
        diagnostics.insert(0, git_problem)
    if 0 < settings.not_a_project_files < len(paths) and not _looks_like_a_project(root, paths):
        diagnostics.insert(0, _not_a_project(len(paths), settings))
    return _within_max_files(paths, "walk", diagnostics, settings, is_source)


#: Paths per :func:`list_named` call (a batch of edits is a few; more is a checkout: list it all).
MAX_NAMED_PATHS = 512


def list_named(root: Path, settings: Settings, named: Collection[str]) -> set[str] | None:
    """Which of ``named`` (files, not directories) :func:`list_files` would list now, for a root
    whose last listing was ``by_path``: git is asked about these paths only (``:(literal)``
    pathspecs: a name is never a pattern) and the same filters apply. None when git cannot
    answer (a path in a submodule, git gone): the caller lists everything."""
    if not named or len(named) > MAX_NAMED_PATHS:
        return None if named else set()
    specs = [f":(literal){rel}" for rel in sorted(named)]
    try:
        proc, truncated = git.run_git_bounded(
            root,
            *_LS_FILES,
            "--",
            *specs,
            max_output=(len(named) + 1) * 4 * _MAX_RECORD_BYTES,
            max_records=4 * len(named),
        )
    except git.GitUnavailable:
        return None
    if truncated or not proc.ok:
        return None
    keep = PathFilter(settings)
    wanted = set(named)
    out: set[str] = set()
    for rel, tracked in _ls_records(proc.stdout):
        if rel not in wanted:
            return None  # a named path is a directory in git's index (removed or moved): list it all
        if keep.keep(rel, tracked):
            out.add(rel)
    return out


def directories_of(paths: Iterable[str], into: set[str] | None = None) -> set[str]:
    """Every directory holding one of ``paths``, and each of their parents (the root, '', left
    out), added to ``into`` when given; a chain is climbed only until a directory already in."""
    out = set() if into is None else into
    for path in paths:
        directory = path.rpartition("/")[0]
        while directory and directory not in out:
            out.add(directory)
            directory = directory.rpartition("/")[0]
    return out


#: Version control other than git at a root: a project, even if git does not list it.
_OTHER_VCS = (".hg", ".svn", ".jj", ".fossil", "_FOSSIL_", ".bzr")
#: Root files that do not make a project (a home directory or a downloads folder may have them).
_NOT_PROJECT_FILES = frozenset({"README", "README.md", "README.rst", "README.txt", "AGENTS.md", "CLAUDE.md"})


def _looks_like_a_project(root: Path, paths: Sequence[str]) -> bool:
    """A project file at the top (a manifest of ``SPECIAL_FILE_NAMES``), or another VCS."""
    if any(is_special_file(rel) and rel not in _NOT_PROJECT_FILES and "/" not in rel for rel in paths):
        return True
    return any(os.path.lexists(root / name) for name in _OTHER_VCS)


def _not_a_project(count: int, settings: Settings) -> Diagnostic:
    return Diagnostic(
        ".",
        "not_a_project",
        f"ROOT does not look like a project (not a git work tree, no other version control, no "
        f"project file such as pyproject.toml or package.json at its top) and lists {count:,} files "
        f"(not_a_project_files={settings.not_a_project_files:,}): mapping it is slow and mostly "
        "noise; give the project's own directory",
    )


def _listing_cut(settings: Settings) -> Diagnostic:
    return Diagnostic(
        ".",
        "too_many_files",
        f"stopped listing at max_listed_paths={settings.max_listed_paths}; files past it were not seen",
    )


def _within_max_files(
    paths: list[str],
    source: str,
    diagnostics: list[Diagnostic],
    settings: Settings,
    is_source: Callable[[str], bool] | None,
) -> Listing:
    if len(paths) <= settings.max_files:
        return Listing(tuple(paths), source, tuple(diagnostics))
    source_check = is_source or (lambda _rel: False)
    set_aside: dict[str, bool] = {}  # per directory: test data or vendored

    def tier(rel: str) -> int:
        if is_special_file(rel):
            return 0
        if not source_check(rel):
            return 3
        directory = rel[: max(rel.rfind("/"), 0)]
        aside = set_aside.get(directory)
        if aside is None:
            aside = set_aside[directory] = bool(directory) and is_test_data_or_vendored(directory)
        return 2 if aside else 1

    tiers = [tier(rel) for rel in paths]
    counts = [tiers.count(level) for level in range(4)]
    room = settings.max_files
    last_tier = 3
    for level, count in enumerate(counts):
        if count >= room:
            last_tier = level
            break
        room -= count
    partial = _fair_share([rel for rel, level in zip(paths, tiers, strict=True) if level == last_tier], room)
    kept = [rel for rel, level in zip(paths, tiers, strict=True) if level < last_tier or rel in partial]
    dropped = len(paths) - len(kept)
    kinds = ("project files", "sources", "sources in test data or vendored code", "other files")
    diagnostics.append(
        Diagnostic(
            ".",
            "too_many_files",
            f"{len(paths)} files listed, max_files={settings.max_files}: {dropped} left out, "
            f"starting with {kinds[last_tier]} (kept in order: {', '.join(kinds)}; "
            "the last kind shared fairly among its directories)",
        )
    )
    return Listing(tuple(kept), source, tuple(diagnostics))


def _fair_share(paths: list[str], room: int) -> set[str]:
    """``room`` of ``paths``, shared fairly among the directories just below their common one.

    Water-filling: a directory with fewer files than an equal share keeps them all and leaves
    the rest to the others, so ten thousand generated files in one directory cannot push out a
    hundred sources in its sibling. Listing order decides within a directory.
    """
    if room <= 0:
        return set()
    common = os.path.commonpath(paths) if len(paths) > 1 else ""
    start = len(common) + 1 if common else 0
    groups: dict[str, list[str]] = {}
    for rel in paths:
        cut = rel.find("/", start)
        groups.setdefault(rel[start:cut] if cut >= 0 else rel[start:], []).append(rel)
    kept: set[str] = set()
    by_size = sorted(groups.values(), key=len)
    for index, group in enumerate(by_size):
        share = room // (len(by_size) - index)
        taken = group[:share] if share < len(group) else group
        kept.update(taken)
        room -= len(taken)
    return kept


def stat_signature(root: Path, rel: str) -> tuple[int, int, int, int] | None:
    """(mtime_ns, ctime_ns, size, inode) of the file itself, or None if it cannot be stat'ed.

    Used only as an in-memory shortcut between calls of one long-lived map: the
    persistent cache is keyed by content hash. ctime is in it because a tool can
    put mtime back (``cp -p``, ``rsync -t``) but nobody can set ctime.
    """
    try:
        st = os.stat(root / rel, follow_symlinks=True)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _reason(exc: OSError) -> str:
    # strerror only: str(exc) carries the filename the OS reported, which can lie outside the root.
    return exc.strerror or type(exc).__name__


def _opened_inside(root: Path, fd: int) -> bool:
    """Whether the file behind ``fd`` is inside ``root``, asked of the kernel (Linux /proc).

    Resolving a path and opening it are two steps: a directory on the way can be
    swapped for a symlink in between (measured: 175 reads of an outside file in
    4 s against a process flipping one). Where /proc is missing, the resolve check
    before the open is all there is.
    """
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    if target.endswith(" (deleted)"):
        target = target[: -len(" (deleted)")]
    return inside(root, Path(target))


class DirectoryResolver:
    """Resolves listed paths for one pass over a listing (a workspace refresh): each directory's
    real path once, not once per file. A file whose own name is a symlink, or whose directory
    cannot be resolved, is resolved whole, as :func:`read_source` does alone. A directory swapped
    for a symlink after it was resolved here is caught where it is caught without this: the
    kernel's answer for the opened file (:func:`_opened_inside`). Resolving every path was 8 % of
    a warm one-shot map of 100,000 files (``Path.resolve`` walks each component in Python)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._directories: dict[str, str | None] = {}

    def __call__(self, full: Path, rel: str) -> Path:
        directory, _, name = rel.rpartition("/")
        if directory not in self._directories:
            try:
                real = os.path.realpath(self._root / directory, strict=True) if directory else str(self._root)
            except (OSError, ValueError):
                real = None  # not resolvable: each of its files is resolved whole, and says why
            self._directories[directory] = real
        real_directory = self._directories[directory]
        if real_directory is None or stat.S_ISLNK(os.lstat(full).st_mode):
            return full.resolve(strict=True)
        return Path(real_directory, name)


def read_source(root: Path, rel: str, settings: Settings, resolver: DirectoryResolver | None = None) -> ReadResult:
    """Read one listed file, refusing anything that resolves outside ``root`` (``resolver``: a
    pass's memo of resolved directories)."""
    full = root / rel
    try:
        real = full.resolve(strict=True) if resolver is None else resolver(full, rel)
    except FileNotFoundError:
        if full.is_symlink():
            return ReadResult(FileStatus.UNREADABLE, message="dangling symlink")
        return ReadResult(FileStatus.VANISHED, message="file disappeared after listing")
    except RuntimeError:  # Python 3.11 pathlib reports a symlink loop this way
        return ReadResult(FileStatus.UNREADABLE, message="cannot resolve: symlink loop")
    except OSError as exc:  # ELOOP, ENAMETOOLONG, EACCES on a directory on the way
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot resolve: {_reason(exc)}")
    if not inside(root, real):
        return ReadResult(FileStatus.OUTSIDE_ROOT, message="symlink points outside the root; not read")
    attempts = max(1, settings.read_attempts)
    notebook = is_notebook(rel)
    for _ in range(attempts):
        result = _read_once(root, real, settings, notebook)
        if result is not None:
            return result
    return ReadResult(
        FileStatus.UNREADABLE, message=f"file kept changing while it was read ({attempts} attempts); skipped this time"
    )


#: Bytes :func:`read_head` reads: enough for a shebang line.
HEAD_BYTES = 256


def read_head(root: Path, rel: str, limit: int = HEAD_BYTES) -> bytes:
    """The first ``limit`` bytes of ``rel``, opened as :func:`read_source` opens a file (never
    outside ``root``, never through a final link, never blocking on a FIFO); b"" when it is not a
    regular file inside ``root`` or cannot be read. For ``language_for``'s shebang check."""
    try:
        real = (root / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return b""
    if not inside(root, real):
        return b""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except OSError:
        return b""
    try:
        if not _opened_inside(root, fd) or not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, limit)
    except OSError:
        return b""
    finally:
        os.close(fd)


def head_reader(root: Path) -> Callable[[str], bytes]:
    """:func:`read_head` under ``root``, as ``LanguageRegistry.language_for`` takes it."""
    return lambda rel: read_head(root, rel)


def _read_once(root: Path, real: Path, settings: Settings, notebook: bool = False) -> ReadResult | None:
    """One read; None when the file changed while it was read (size or times moved). A notebook
    is held to ``max_notebook_bytes`` (its code cells to ``max_file_bytes`` when parsed)."""
    limit, name = (
        (settings.max_notebook_bytes, "max_notebook_bytes") if notebook else (settings.max_file_bytes, "max_file_bytes")
    )
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ReadResult(FileStatus.VANISHED, message="file disappeared after listing")
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the file itself was replaced by a symlink after the check
            return ReadResult(FileStatus.UNREADABLE, message="became a symlink while being opened; not read")
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot open: {_reason(exc)}")
    try:
        if not _opened_inside(root, fd):
            return ReadResult(
                FileStatus.OUTSIDE_ROOT, message="a directory on its path became a symlink out of the root; not read"
            )
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            return ReadResult(FileStatus.UNREADABLE, message="not a regular file")
        if before.st_size > limit:
            message = f"{before.st_size} bytes > {name}={limit}"
            return ReadResult(FileStatus.TOO_LARGE, size=before.st_size, message=message)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
        after = os.fstat(fd)
    except OSError as exc:
        return ReadResult(FileStatus.UNREADABLE, message=f"cannot read: {_reason(exc)}")
    finally:
        os.close(fd)
    if len(data) > limit:  # grew while we read it
        return ReadResult(FileStatus.TOO_LARGE, size=len(data), message=f"more than {name}={limit}")
    if (before.st_size, before.st_mtime_ns, before.st_ctime_ns) != (
        after.st_size,
        after.st_mtime_ns,
        after.st_ctime_ns,
    ):
        return None  # a writer was busy: these bytes may be half old, half new
    return classify(data, settings, minified_check=not notebook)


#: Control bytes other than NUL that do not occur in text (tab, newlines, form feed,
#: vertical tab and ESC do).
_CONTROL_BYTES = bytes(b for b in range(1, 32) if b not in b"\t\n\r\f\v\x1b") + b"\x7f"


def _looks_binary(data: bytes, settings: Settings) -> bool:
    """Binary data is full of control bytes besides NUL; UTF-16 without a BOM and
    zero-filled blocks are mostly NUL. A text file with a stray NUL is neither."""
    size = max(1, len(data))
    others = size - len(data.translate(None, _CONTROL_BYTES))
    return others / size > settings.binary_control_ratio or data.count(b"\0") / size > settings.binary_nul_ratio


def classify(data: bytes, settings: Settings, minified_check: bool = True) -> ReadResult:
    """Decide whether bytes are parseable source, and make them so.

    ``minified_check`` False: long lines are fine (a notebook: its outputs are long JSON lines,
    and only its code cells are parsed).

    UTF-16 and Latin-1 become UTF-8; a BOM is dropped; stray NUL bytes in text
    become spaces and lone CR line ends become LF (both one byte for one, so
    lines and columns stay those of the file). Each conversion leaves a note.
    """
    notes: list[tuple[str, str]] = []
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            data = data.decode("utf-16").encode("utf-8")
            notes.append(("transcoded", "UTF-16 file transcoded to UTF-8"))
        except UnicodeDecodeError:
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="invalid UTF-16")
    elif data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a BOM is not code; tree-sitter would see it as an error token
    if b"\0" in data:
        # The leading window decides most binaries without scanning the whole file.
        window = data[: settings.binary_sniff_bytes]
        if (b"\0" in window and _looks_binary(window, settings)) or _looks_binary(data, settings):
            return ReadResult(FileStatus.BINARY, size=len(data), message="binary content (NUL and control bytes)")
        # Some grammars' scanners take NUL for the end of input and drop everything after it.
        first = data.count(b"\n", 0, data.index(b"\0")) + 1
        count = data.count(b"\0")
        notes.append(("nul_bytes", f"{count} NUL byte(s) read as spaces (first on line {first})"))
        data = data.replace(b"\0", b" ")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        try:
            # Latin-1 decodes any byte string; only accept it when it is mostly text.
            text = data.decode("latin-1")
        except UnicodeDecodeError:  # pragma: no cover - latin-1 never fails
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="not valid text")
        printable = sum(1 for ch in text[:4096] if ch.isprintable() or ch in "\r\n\t")
        if printable < 0.95 * min(len(text), 4096):
            return ReadResult(FileStatus.UNDECODABLE, size=len(data), message="not UTF-8 and not text-like")
        data = text.encode("utf-8")
        notes.append(("transcoded", "not UTF-8; decoded as Latin-1"))
    if b"\r" in data and b"\n" not in data:
        data = data.replace(b"\r", b"\n")  # classic Mac line ends: tree-sitter only counts LF as a line
        notes.append(("transcoded", "CR line endings read as LF"))
    if data and minified_check:
        line_count = data.count(b"\n") + 1
        longest = max(len(line) for line in data.split(b"\n")) if len(data) > settings.minified_avg_line_chars else 0
        if len(data) / line_count > settings.minified_avg_line_chars or longest > settings.minified_max_line_chars:
            return ReadResult(
                FileStatus.MINIFIED, size=len(data), message=f"looks minified (longest line {longest} chars)"
            )
    return ReadResult(
        FileStatus.OK,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        message="; ".join(message for _, message in notes),
        size=len(data),
        notes=tuple(notes),
    )
