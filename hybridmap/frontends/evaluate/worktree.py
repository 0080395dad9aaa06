"""A scratch worktree to check commits out in, never the user's own work tree or index.

One detached worktree (``git worktree add --detach``) in a temporary directory
is reused across commits (``checkout --detach --force`` + ``clean``), and
removed when the block ends, however it ends: normally, on an exception, on
Ctrl-C (SIGINT) and on SIGTERM, which is turned into the same
``KeyboardInterrupt`` while the worktree exists. A Ctrl-C during removal is held
until removal is done, then raised, so it can neither leave a half-removed
worktree behind nor be lost. Checkouts run no hooks (the hardened runner of
:mod:`hybridmap.infra.git`) and no filter driver: every driver any configuration defines
is emptied for them, so the files are the committed blobs.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ...infra.git import filter_overrides
from .git import GitError, Repository, run_git


def _interrupt(signum: int, frame: FrameType | None) -> None:
    # SIGTERM becomes a Ctrl-C: inside asyncio.run, whose own SIGINT handler cancels the run
    # cleanly (a KeyboardInterrupt raised from a task's step would leave tasks pending).
    signal.raise_signal(signal.SIGINT)


class ScratchWorktree:
    """``with ScratchWorktree(repo) as wt: root = wt.checkout(sha)``."""

    def __init__(self, repo: Repository, temp_parent: Path | None = None) -> None:
        self._repo = repo
        self._temp_parent = temp_parent
        self.directory: Path | None = None
        self.path: Path | None = None
        self._created = False
        self._previous_sigterm: Any = None
        self._no_filters: tuple[str, ...] | None = None
        self._writable: tuple[Path, ...] = ()

    def _may_write(self) -> tuple[Path, ...]:
        """What git may write (its sandbox allows nothing else): the scratch directory, and the
        repository's git directory, where a linked worktree keeps its HEAD and index."""
        if not self._writable and self.directory is not None:
            common = self._repo.git("rev-parse", "--path-format=absolute", "--git-common-dir", check=False).strip()
            self._writable = (self.directory, *([Path(common)] if common else []))
        return self._writable

    def __enter__(self) -> ScratchWorktree:
        self.directory = Path(tempfile.mkdtemp(prefix="hybridmap-eval-", dir=self._temp_parent))
        self.path = self.directory / "worktree"
        if threading.current_thread() is threading.main_thread():
            self._previous_sigterm = signal.signal(signal.SIGTERM, _interrupt)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    def checkout(self, sha: str) -> Path:
        """Check ``sha`` out (detached) and return the evaluated root inside the worktree."""
        if self.path is None:
            raise RuntimeError("use ScratchWorktree as a context manager")
        if self._no_filters is None:
            self._no_filters = (*self._repo.config, *filter_overrides(self._repo.top, self._repo.config))
        if not self._created:
            self._created = True  # set first: a Ctrl-C inside 'worktree add' must still clean up
            try:
                self._repo.git(
                    "worktree",
                    "add",
                    "--detach",
                    "--force",
                    "--quiet",
                    str(self.path),
                    sha,
                    timeout=600,
                    extra_config=self._no_filters,
                    writable=self._may_write(),
                )
            except GitError:  # half made (a blob the clone lacks): gone, so the next commit adds it again
                self._discard()
                raise
        else:
            run_git(
                self.path,
                *("checkout", "--detach", "--force", "--quiet", sha),
                timeout=600,
                extra_config=self._no_filters,
                writable=self._may_write(),
            )
            run_git(self.path, "clean", "-ffdq", timeout=600, writable=self._may_write())
        return self.path / self._repo.prefix if self._repo.prefix else self.path

    def _discard(self) -> None:
        """Remove a worktree whose ``add`` failed, keeping the scratch directory for the next."""
        writable = self._may_write()
        self._repo.git("worktree", "remove", "--force", "--force", str(self.path), check=False, writable=writable)
        self._repo.git("worktree", "prune", check=False, writable=writable)
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        self._created = False

    def remove(self) -> None:
        """Remove the worktree and its directory; safe to call twice."""
        main_thread = threading.current_thread() is threading.main_thread()
        interrupted: list[int] = []
        # A Ctrl-C now must not leave a half-removed worktree: it is held until removal is done,
        # then honoured (the run still ends as interrupted, not as a success).
        previous_sigint = (
            signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum)) if main_thread else None
        )
        try:
            if self._created and self.path is not None:
                writable = self._may_write()
                self._repo.git(
                    "worktree", "remove", "--force", "--force", str(self.path), check=False, writable=writable
                )
                self._repo.git("worktree", "prune", check=False, writable=writable)
                self._created = False
            if self.directory is not None:
                shutil.rmtree(self.directory, ignore_errors=True)
                self.directory = None
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, previous_sigint)
                if self._previous_sigterm is not None:
                    signal.signal(signal.SIGTERM, self._previous_sigterm)
                    self._previous_sigterm = None
        if interrupted:
            raise KeyboardInterrupt("interrupted while the scratch worktree was being removed")
