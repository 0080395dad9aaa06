"""What a commit changed inside one file: the hunks of ``git diff -U0``, on the parent's side.

Lines here are 1-based, as git prints them. A hunk that removes or rewrites
old lines *touches* those lines; a pure insertion (``-a,0``) touches no old
line but sits between old lines ``a`` and ``a + 1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .git import Repository

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


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
    def insertion_after(self) -> int | None:
        """For a pure insertion: the old line it follows (0 = top of file); else None."""
        return self.old_start if self.old_count == 0 else None


@dataclass(frozen=True, slots=True)
class FileDiff:
    old_path: str
    new_path: str
    hunks: tuple[Hunk, ...]

    @property
    def added(self) -> int:
        return sum(h.new_count for h in self.hunks)

    @property
    def deleted(self) -> int:
        return sum(h.old_count for h in self.hunks)


def parse_hunks(diff_text: str) -> tuple[Hunk, ...]:
    return tuple(
        Hunk(int(m[1]), int(m[2]) if m[2] is not None else 1, int(m[3]), int(m[4]) if m[4] is not None else 1)
        for m in _HUNK.finditer(diff_text)
    )


def file_diff(repo: Repository, parent: str, sha: str, old_path: str, new_path: str) -> FileDiff:
    """Diff two blobs (parent's ``old_path``, commit's ``new_path``): paths never need unquoting."""
    prefix = f"{repo.prefix}/" if repo.prefix else ""
    text = repo.git("diff", "-U0", "--no-ext-diff", "--no-textconv", "--no-color",
                    f"{parent}:{prefix}{old_path}", f"{sha}:{prefix}{new_path}")
    return FileDiff(old_path, new_path, parse_hunks(text))
