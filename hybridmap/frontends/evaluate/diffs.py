"""What a commit changed inside one file: the hunks of ``git diff -U0``, and the new content.

Lines here are 1-based, as git prints them: ``old_lines`` are the parent's
lines a hunk removes or rewrites, ``new_lines`` the commit's lines it adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...workspace.diff import hunks
from .git import Repository, read_blob


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int

    @property
    def old_lines(self) -> range:
        """Old-side lines this hunk removes or rewrites (empty for a pure insertion)."""
        return range(self.old_start, self.old_start + self.old_count)

    @property
    def new_lines(self) -> range:
        """New-side lines this hunk adds or rewrites (empty for a pure deletion)."""
        return range(self.new_start, self.new_start + self.new_count)


@dataclass(frozen=True, slots=True)
class FileDiff:
    old_path: str
    new_path: str
    hunks: tuple[Hunk, ...]
    new_source: bytes = b""
    """The file's content in the commit (to find where added lines land)."""

    @property
    def added(self) -> int:
        return sum(h.new_count for h in self.hunks)

    @property
    def deleted(self) -> int:
        return sum(h.old_count for h in self.hunks)


def parse_hunks(diff_text: str) -> tuple[Hunk, ...]:
    """The hunks of ``git diff -U0`` output (the map of a change reads them the same way)."""
    return tuple(Hunk(*found) for found in hunks(diff_text.encode("utf-8", "surrogateescape")))


def file_diff(repo: Repository, parent: str, sha: str, old_path: str, new_path: str) -> FileDiff:
    """Diff two blobs (parent's ``old_path``, commit's ``new_path``): paths never need unquoting."""
    prefix = f"{repo.prefix}/" if repo.prefix else ""
    text = repo.git(
        "diff",
        "-U0",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        f"{parent}:{prefix}{old_path}",
        f"{sha}:{prefix}{new_path}",
    )
    return FileDiff(old_path, new_path, parse_hunks(text), read_blob(repo, sha, new_path))
