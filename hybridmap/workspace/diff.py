"""What the working tree changed since a base revision: the input of a map of a change.

:func:`read_change` asks git, through the one hardened and sandboxed runner
(:mod:`hybridmap.infra.git`), for the changed files under the root and the lines each change
touches in the working tree (tracked files, staged or not, against the base; untracked files
that are not ignored count as added). The base is a revision the caller names, or, by default,
the merge-base of ``HEAD`` with the default branch (``origin/HEAD``, else ``main``, ``master``,
their ``origin/`` copies): on a feature branch the branch's whole change, on the default branch
the edits not yet committed.

A revision comes from the caller, never from the repository, and is still handled as hostile
text: it can never be taken for an option (``--end-of-options``), and it is resolved to a full
object name before any diff is run. Output is bounded (``diff_max_files``, ``diff_max_bytes``):
a cut change says so (``CodeChange.complete``) instead of reading gigabytes.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import RequestError
from ..infra import git
from ..model import ChangedFile, ChangeStatus, CodeChange
from ..settings import Settings

#: ``@@ -a,b +c,d @@``: one hunk of ``git diff -U0`` (a count of 1 may be left out).
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
#: Branches taken as the default one, in this order, when ``origin/HEAD`` names none.
DEFAULT_BRANCHES = ("main", "master", "trunk", "develop")
#: The empty tree's object name per object format: the base of a repository without a commit.
_EMPTY_TREES = {
    "sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
_REVISION_MAX_CHARS = 256
_DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-color", "-M", "--relative")


def hunks(text: bytes) -> tuple[tuple[int, int, int, int], ...]:
    """Each ``@@`` header of ``git diff -U0`` output as (old start, old count, new start, new count)."""
    return tuple(
        (int(m[1]), int(m[2]) if m[2] is not None else 1, int(m[3]), int(m[4]) if m[4] is not None else 1)
        for m in _HUNK.finditer(text)
    )


def changed_lines(file_hunks: tuple[tuple[int, int, int, int], ...]) -> tuple[tuple[int, int], ...]:
    """The working tree's lines the hunks touch, 1-based inclusive; a pure deletion (no new line)
    is the line before it (git's new start), at least line 1."""
    out = []
    for _old, _count, start, count in file_hunks:
        out.append((start, start + count - 1) if count else (max(start, 1), max(start, 1)))
    return tuple(out)


def read_change(root: Path, revision: str, settings: Settings) -> CodeChange:
    """The working tree's change under ``root`` since ``revision`` ('' = the merge-base with the
    default branch). RequestError when ``root`` is not in a repository git may be asked about, or
    ``revision`` names no commit."""
    timeout = settings.diff_timeout_seconds
    try:
        where = git.locate(root, timeout)
        if isinstance(where, git.Refusal):
            raise RequestError(f"a map of a change needs a git repository: {where.reason}")
        base, base_name = _base(root, revision, timeout)
        return _change(root, base, base_name, settings)
    except git.GitUnavailable as exc:
        raise RequestError(f"a map of a change could not read git: {exc}") from exc


def _base(root: Path, revision: str, timeout: float) -> tuple[str, str]:
    """(the base's full object name, how it was chosen)."""
    if revision:
        if len(revision) > _REVISION_MAX_CHARS or not revision.isprintable() or revision.startswith("-"):
            raise RequestError(f"--diff takes a revision, got {revision!r}")
        sha = _commit(root, revision, timeout)
        if sha is None:
            hint = " (a directory: give ROOT before --diff, or write --diff= for the default base)"
            raise RequestError(
                f"--diff: {revision!r} names no commit in this repository{hint if Path(revision).is_dir() else ''}"
            )
        return sha, revision
    head = _commit(root, "HEAD", timeout)
    if head is None:  # no commit yet: every file is added
        fmt = git.run_git(root, "rev-parse", "--show-object-format", timeout=timeout).text().strip()
        return _EMPTY_TREES.get(fmt, _EMPTY_TREES["sha1"]), "the empty tree (no commit yet)"
    branch = _default_branch(root, timeout)
    if branch is None:
        return head, "HEAD (no default branch found)"
    merged = git.run_git(root, "merge-base", "--end-of-options", "HEAD", branch, timeout=timeout)
    sha = merged.text().strip()
    if not merged.ok or not sha:
        return head, f"HEAD ({branch} shares no history with it)"
    short = branch.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    return sha, f"merge-base with {short}"


def _commit(root: Path, revision: str, timeout: float) -> str | None:
    result = git.run_git(
        root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}", timeout=timeout
    )
    sha = result.text().strip()
    return sha if result.ok and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None


def _default_branch(root: Path, timeout: float) -> str | None:
    """The default branch's full ref name: what ``origin/HEAD`` points at, else the first of
    :data:`DEFAULT_BRANCHES` that exists locally or on ``origin``."""
    said = git.run_git(root, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD", timeout=timeout)
    ref = said.text().strip()
    if said.ok and ref.startswith("refs/remotes/") and _commit(root, ref, timeout):
        return ref
    for name in DEFAULT_BRANCHES:
        for ref in (f"refs/heads/{name}", f"refs/remotes/origin/{name}"):
            if _commit(root, ref, timeout):
                return ref
    return None


def _change(root: Path, base: str, base_name: str, settings: Settings) -> CodeChange:
    timeout = settings.diff_timeout_seconds
    limit = settings.diff_max_files
    statuses, cut = git.run_git_bounded(
        root,
        *("diff", "-z", "--name-status", *_DIFF_OPTIONS, base, "--"),
        max_output=settings.diff_max_bytes,
        max_records=3 * limit + 3,  # a rename is three records
        timeout=timeout,
    )
    if not cut and not statuses.ok:
        raise RequestError(f"git diff against {base_name} failed: {statuses.reason()}")
    entries = _name_status(statuses.stdout)
    complete = not cut
    patch, patch_cut = git.run_git_bounded(
        root, *("diff", "-U0", *_DIFF_OPTIONS, base, "--"), max_output=settings.diff_max_bytes, timeout=timeout
    )
    sections = _sections(patch.stdout)
    # Both commands list files in the same order with the same options; the last section of a cut
    # patch may be partial, so it and those after it count as changed everywhere.
    aligned = len(sections) == len(entries) or patch_cut
    whole_from = len(sections) - 1 if patch_cut else len(sections)
    files: list[ChangedFile] = []
    for i, (status, old, new) in enumerate(entries):
        read = aligned and i < whole_from
        found = hunks(sections[i]) if read else ()
        if status == "deleted":
            files.append(ChangedFile(old, "deleted", deleted=sum(h[1] for h in found)))
            continue
        lines: tuple[tuple[int, int], ...] = ()
        added = deleted = 0
        if read:
            lines = changed_lines(found)
            added = sum(h[3] for h in found)
            deleted = sum(h[1] for h in found)
        # A rename or mode change without hunks changed no line; unread hunks may be anywhere.
        whole = status == "added" or not read
        if whole:
            lines = ()
        files.append(ChangedFile(new, status, old if status == "renamed" else "", lines, whole, added, deleted))
    untracked, untracked_cut = git.run_git_bounded(
        root,
        *("ls-files", "-z", "--others", "--exclude-standard"),
        max_output=settings.diff_max_bytes,
        max_records=limit + 1,
        timeout=timeout,
    )
    for raw in untracked.stdout.split(b"\0"):
        if raw:
            files.append(ChangedFile(raw.decode("utf-8", "surrogateescape"), "added", whole=True))
    complete = complete and not untracked_cut and len(files) <= limit
    return CodeChange(base, base_name, tuple(files[:limit]), complete)


_STATUS: dict[str, ChangeStatus] = {
    "A": "added",
    "C": "added",
    "D": "deleted",
    "M": "modified",
    "R": "renamed",
    "T": "modified",
}


def _name_status(raw: bytes) -> list[tuple[ChangeStatus, str, str]]:
    """(status, old path, new path) from ``diff -z --name-status`` (whole records only)."""
    fields = [f.decode("utf-8", "surrogateescape") for f in raw.split(b"\0")]
    out: list[tuple[ChangeStatus, str, str]] = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][:1]
        two = letter in ("R", "C")
        if i + (2 if two else 1) >= len(fields):
            break  # a cut record
        old, new = (fields[i + 1], fields[i + 2]) if two else (fields[i + 1], fields[i + 1])
        if letter in _STATUS:  # U (unmerged), X: left out, like the patch, which shows them apart
            out.append((_STATUS[letter], old, new))
        i += 3 if two else 2
    return out


def _sections(patch: bytes) -> list[bytes]:
    """The patch cut into one section per file (each starts with ``diff --git``)."""
    if not patch:
        return []
    parts = re.split(rb"(?m)^diff --git ", patch)
    return parts[1:]
