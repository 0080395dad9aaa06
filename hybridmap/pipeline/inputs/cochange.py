"""Files changed together in the repository's history: who is edited with whom.

One ``git log --name-only`` over the last ``co_change_max_commits`` non-merge commits (through
the hardened runner of :mod:`hybridmap.infra.git`); a commit touching between ``co_change_min_files``
and ``co_change_max_files`` files counts once for each pair of them (a sweeping commit, a
reformat or a rename of everything, says nothing about which files belong together). Kept per
HEAD: when HEAD moves forward only the new commits are read and the oldest fall off; when it
moves elsewhere (a checkout of another branch, history rewritten) the log is read again.
Outside a git repository, or before its first commit, there is nothing (quietly: a plain
directory is not a degraded map); when git fails or times out, :attr:`CoChange.problem` says why
(a ``co_change_off`` diagnostic on the map).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...infra import git
from ...settings import Settings


@dataclass(frozen=True)
class CoChange:
    """Pair counts of one history: ``partners[a][b]`` commits changed both ``a`` and ``b``."""

    head: str | None = None
    partners: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    commits: int = 0
    """Commits read (all of them, counted or not)."""
    problem: str = ""
    """Why there is no history ('' when there is)."""

    def of(self, path: str) -> Mapping[str, int]:
        return self.partners.get(path, {})


class CoChangeIndex:
    """The co-change counts of one root, kept up to date with its HEAD."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self._root = root
        self._settings = settings
        self._commits: tuple[git.Commit, ...] = ()
        self._current = CoChange(problem="not read yet")

    @property
    def current(self) -> CoChange:
        return self._current

    def refresh(self) -> CoChange:
        """The counts for the root's HEAD now (read only what changed since the last call)."""
        settings = self._settings
        try:
            head = git.head_commit(self._root, settings.co_change_timeout_seconds)
            if head is None:  # not a repository (or no commit yet): nothing to say, nothing wrong
                self._commits = ()
                self._current = CoChange()
                return self._current
            if head == self._current.head:
                return self._current
            commits, problem = self._read(head)
        except (git.GitUnavailable, ValueError) as exc:
            commits, problem = (), str(exc)
        self._commits = commits
        if problem and not commits:
            self._current = CoChange(problem=f"git history unavailable ({problem}); co-change is off")
        else:
            self._current = CoChange(head, pair_counts(commits, settings), len(commits))
        return self._current

    def _read(self, head: str) -> tuple[tuple[git.Commit, ...], str]:
        settings = self._settings
        timeout = settings.co_change_timeout_seconds
        old = self._current.head
        limit = settings.co_change_max_commits
        if old is not None and self._commits and git.is_ancestor(self._root, old, head, timeout):
            newer = git.log_name_only(self._root, limit, timeout, head=head, since=old)
            if newer.complete:
                return (*newer.commits, *self._commits)[:limit], ""
        history = git.log_name_only(self._root, limit, timeout, head=head)
        return history.commits, history.problem


def pair_counts(commits: tuple[git.Commit, ...], settings: Settings) -> dict[str, dict[str, int]]:
    """``out[a][b]``: commits (of those touching ``co_change_min_files`` to ``co_change_max_files``
    files) that changed both ``a`` and ``b``; symmetric, no file its own partner."""
    counts: Counter[tuple[str, str]] = Counter()
    low, high = settings.co_change_min_files, settings.co_change_max_files
    for commit in commits:
        paths = sorted(set(commit.paths))
        if not low <= len(paths) <= high:
            continue
        for i, a in enumerate(paths):
            for b in paths[i + 1 :]:
                counts[(a, b)] += 1
    out: defaultdict[str, dict[str, int]] = defaultdict(dict)
    for (a, b), n in counts.items():
        out[a][b] = n
        out[b][a] = n
    return dict(out)
