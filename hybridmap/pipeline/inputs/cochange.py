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

A shallow clone (CI's and many agents' checkouts) has a few commits, and its oldest lists its
whole tree as if added at once: those edge commits are left out, and the history an index
artifact brought for this root (``hybridmap index ROOT --import``: the exporting clone's own log,
stored under :func:`imported_history_key`) continues the local one, commits the clone has first.
A complete clone never reads it: its own history is the truth.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...infra import git
from ...infra.git_head import Stamp, head_stamp
from ...settings import Settings
from ...store.cache import Cache


@dataclass(frozen=True)
class CoChange:
    """Pair counts of one history: ``partners[a][b]`` commits changed both ``a`` and ``b``."""

    head: str | None = None
    partners: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    commits: int = 0
    """Commits read (all of them, counted or not)."""
    problem: str = ""
    """Why there is no history ('' when there is)."""
    imported: int = 0
    """Of :attr:`commits`, those an imported history gave (a shallow clone's continuation)."""

    def of(self, path: str) -> Mapping[str, int]:
        return self.partners.get(path, {})


class CoChangeIndex:
    """The co-change counts of one root, kept up to date with its HEAD."""

    def __init__(
        self, root: Path, settings: Settings, imported: Callable[[], git.CommitLog | None] | None = None
    ) -> None:
        self._root = root
        self._settings = settings
        self._imported = imported
        """The history an index artifact brought for this root, read only for a shallow clone."""
        self._commits: tuple[git.Commit, ...] = ()
        self._current = CoChange(problem="not read yet")
        self._git_dir: Path | None = None
        self._stamp: Stamp | None = None
        """HEAD's files as they were before git last answered (:mod:`hybridmap.infra.git_head`)."""

    @property
    def current(self) -> CoChange:
        return self._current

    def refresh(self) -> CoChange:
        """The counts for the root's HEAD now (read only what changed since the last call; git is
        not asked while the files HEAD is read from stand as they were when it last answered)."""
        settings = self._settings
        stamp = head_stamp(self._git_dir, settings.stat_racy_seconds) if self._git_dir is not None else None
        if stamp is not None and stamp == self._stamp:
            return self._current
        self._stamp = None
        kept: Stamp | None = None
        try:
            located = git.located_head(self._root, settings.co_change_timeout_seconds)
            if located is None:  # not a repository (or no commit yet): nothing to say, nothing wrong
                self._commits, self._git_dir = (), None
                self._current = CoChange()
                return self._current
            head, git_dir = located
            # Taken before git answered: a move since changes it. Kept only for a good answer (a
            # failed read is tried again at the next refresh, as before).
            kept = stamp if git_dir == self._git_dir else None
            self._git_dir = git_dir
            if head == self._current.head:
                self._stamp = kept
                return self._current
            commits, problem = self._read(head)
            commits, imported = self._continued(commits) if not problem else (commits, 0)
        except (git.GitUnavailable, ValueError) as exc:
            commits, problem, imported = (), str(exc), 0
        self._commits = commits
        if problem and not commits:
            self._current = CoChange(problem=f"git history unavailable ({problem}); co-change is off")
        else:
            self._current = CoChange(head, pair_counts(commits, settings), len(commits), imported=imported)
            self._stamp = None if problem else kept
        return self._current

    def _continued(self, commits: tuple[git.Commit, ...]) -> tuple[tuple[git.Commit, ...], int]:
        """``commits`` without a shallow clone's edge, continued by the imported history; as
        they are for a complete one. Git is asked once more only when the log ended early at a
        commit without parents (a young repository, or a shallow clone)."""
        limit = self._settings.co_change_max_commits
        if len(commits) >= limit or not any(c.parentless for c in commits):
            return commits, 0
        if not git.is_shallow(self._root, self._settings.co_change_timeout_seconds):
            return commits, 0
        own = tuple(c for c in commits if not c.parentless)
        log = self._imported() if self._imported is not None else None
        if log is None:
            return own, 0
        # The edge's own changes come from the imported log (it read them with their parents);
        # a commit without parents there is a true first commit, counted as a complete clone does.
        seen = {c.sha for c in own}
        more = tuple(c for c in log.commits if c.sha not in seen)[: limit - len(own)]
        return own + more, len(more)

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


def imported_history_key(root: Path) -> str:
    """The cache key of the history imported for ``root`` (its resolved path: the user imported
    it for this checkout)."""
    return "history:" + hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()


def imported_history(cache: Cache, root: Path) -> git.CommitLog | None:
    """The history imported for ``root`` into ``cache``, if any (never asked of a shared store:
    the key is this machine's path)."""
    key = imported_history_key(root)
    found = cache.get_many([key], shared=False).get(key)
    return found if isinstance(found, git.CommitLog) else None


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
