"""Which commits to replay: recent, first-parent, non-merge commits that co-edit a few source files.

A commit qualifies when it *modifies* between ``min_files`` and ``max_files``
source files (a language hybridmap maps) that exist in its parent. Files the
commit adds or deletes, and pure renames, are not targets: a map of the parent
cannot show a file that does not exist there, and a pure rename has no edit to
localize. A rename with edits counts, under its old path (the one the parent has).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...errors import RequestError
from .git import GitError, Repository

MIN_FILES = 2
MAX_FILES = 6


@dataclass(frozen=True, slots=True)
class FileChange:
    """A modified source file: its path in the parent and in the commit (relative to ROOT)."""

    old_path: str
    new_path: str


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    parent: str
    subject: str
    message: str
    changes: tuple[FileChange, ...]
    """The qualifying modified source files, sorted by ``old_path``."""


@dataclass(frozen=True, slots=True)
class Selection:
    commits: tuple[Commit, ...]
    requested: int
    scanned: int
    """First-parent commits looked at (merges and root commits included)."""
    rev: str
    head: str
    """The full sha ``rev`` resolved to."""

    @property
    def shortfall(self) -> str:
        """Empty when enough commits qualified, else a sentence saying how many did."""
        if len(self.commits) >= self.requested:
            return ""
        return (
            f"only {len(self.commits)} of the {self.requested} requested commits qualify "
            f"(scanned {self.scanned} first-parent commits of {self.rev}); evaluating {len(self.commits)}"
        )


def parse_name_status(output: str) -> list[tuple[str, str, str]]:
    """``git diff-tree -z --name-status`` output -> (status letter + score, old path, new path)."""
    fields = output.split("\0")
    out: list[tuple[str, str, str]] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if not status:
            i += 1
            continue
        if status[0] in "RC":
            out.append((status, fields[i + 1], fields[i + 2]))
            i += 3
        else:
            out.append((status, fields[i + 1], fields[i + 1]))
            i += 2
    return out


def qualifying_changes(entries: list[tuple[str, str, str]], is_source: Callable[[str], bool]) -> list[FileChange]:
    """Modified source files (and renamed-and-edited ones, by their old path); nothing else."""
    changes = []
    for status, old, new in entries:
        if (status == "M" and is_source(old)) or (
            status.startswith("R") and status != "R100" and is_source(old) and is_source(new)
        ):
            changes.append(FileChange(old, new))
    return sorted(changes, key=lambda c: c.old_path)


def select_commits(
    repo: Repository,
    rev: str,
    count: int,
    is_source: Callable[[str], bool],
    *,
    scan_limit: int,
    min_files: int = MIN_FILES,
    max_files: int = MAX_FILES,
) -> Selection:
    """The ``count`` most recent qualifying commits on the first-parent history of ``rev``.

    Raises :class:`RequestError` when ``rev`` does not name a commit, when the history
    is too short to have a commit with a parent, or when no commit qualifies. Fewer
    qualifying commits than asked is not an error: :attr:`Selection.shortfall` says so.
    """
    head = repo.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
    if not head:
        raise RequestError(f"revision '{rev}' does not name a commit (has the repository any commits?)")
    listing = repo.git("rev-list", "--first-parent", "--parents", f"--max-count={scan_limit}", head)
    lines = [line.split() for line in listing.splitlines() if line.strip()]
    if len(lines) < 2:
        raise RequestError(
            f"history too short: {rev} has {len(lines)} commit(s); eval needs commits whose parent it can check out"
        )
    relative = [f"--relative={repo.prefix}"] if repo.prefix else []
    found: list[Commit] = []
    scanned = 0
    for shas in lines:
        if len(found) >= count:
            break
        scanned += 1
        if len(shas) != 2:  # a root commit has no parent to map; a merge is not one edit
            continue
        sha, parent = shas
        try:
            raw = repo.git("diff-tree", "-r", "-z", "-M", "--no-commit-id", "--name-status", *relative, parent, sha)
        except GitError:
            continue  # a commit git cannot diff (shallow boundary): not evaluable
        changes = qualifying_changes(parse_name_status(raw), is_source)
        if not min_files <= len(changes) <= max_files:
            continue
        message = repo.git("show", "-s", "--format=%B", sha)
        subject = message.strip().splitlines()[0] if message.strip() else ""
        found.append(Commit(sha, parent, subject, message, tuple(changes)))
    if not found:
        raise RequestError(
            f"no qualifying commit in the last {scanned} first-parent commits of {rev} "
            f"(one that modifies {min_files}-{max_files} existing source files; "
            "merges, added, deleted and renamed-only files do not count)"
        )
    return Selection(tuple(found), count, scanned, rev, head)
