"""The eval's use of git: through the one hardened runner of :mod:`hybridmap.infra.git`.

The runner overrides every configuration key that could make git run a command
(hooks, fsmonitor, filters, external diffs, signature programs, pagers) and
refuses embedded bare repositories. That module also owns the ``-c`` items and the
timeout the eval reads history with (:data:`~hybridmap.infra.git.STABLE_HISTORY_CONFIG`,
:data:`~hybridmap.infra.git.EXPLICIT_BARE_CONFIG`, :data:`~hybridmap.infra.git.HISTORY_TIMEOUT`),
so every ``-c`` item, environment variable and time limit git runs with is decided
in one place. This module adds what the eval needs on top: one clear failure line
(:class:`GitError`), a repository that may be a bare one the user named, blobs.
The eval never writes to the user's work tree or index: it checks commits out
only in a scratch worktree of its own (see :mod:`.worktree`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import RequestError, RootError
from ...infra.git import (
    EXPLICIT_BARE_CONFIG,
    HISTORY_TIMEOUT,
    STABLE_HISTORY_CONFIG,
    GitUnavailable,
    Location,
    locate,
)
from ...infra.git import run_git as run_hardened


class GitError(RequestError):
    """A git command the eval needs failed (the message names the command and git's reason)."""


@dataclass(frozen=True, slots=True)
class Repository:
    """A git repository the eval reads: ``top`` is the work tree (or the git dir of a bare one)."""

    top: Path
    prefix: str
    """ROOT relative to ``top`` ('' when ROOT is the top): only files under it are evaluated."""
    bare: bool
    config: tuple[str, ...] = ()
    """``-c`` items every call on this repository adds (a bare repository the user named)."""

    def git(
        self,
        *args: str,
        check: bool = True,
        timeout: float = HISTORY_TIMEOUT,
        extra_config: tuple[str, ...] = (),
        writable: tuple[Path, ...] = (),
    ) -> str:
        return run_git(
            self.top, *args, check=check, timeout=timeout, extra_config=(*self.config, *extra_config), writable=writable
        )


def run_git(
    cwd: Path,
    *args: str,
    check: bool = True,
    timeout: float = HISTORY_TIMEOUT,
    input_text: str | None = None,
    extra_config: tuple[str, ...] = (),
    writable: tuple[Path, ...] = (),
) -> str:
    """``git ARGS`` in ``cwd``; ``writable``: what it may write (the sandbox allows nothing else)."""
    try:
        result = run_hardened(
            cwd,
            *args,
            timeout=timeout,
            extra_config=(*STABLE_HISTORY_CONFIG, *extra_config),
            input_bytes=None if input_text is None else input_text.encode(),
            writable=writable,
        )
    except GitUnavailable as exc:
        raise GitError(f"{exc} (git is needed to read the history)") from exc
    if check and not result.ok:
        raise GitError(f"'git {' '.join(args[:3])}' failed: {result.reason()}")
    return result.text()


def read_blob(repo: Repository, sha: str, path: str) -> bytes:
    """The bytes of ``path`` (relative to ROOT) at ``sha`` (no filters, no textconv)."""
    prefix = f"{repo.prefix}/" if repo.prefix else ""
    try:
        result = run_hardened(
            repo.top, "cat-file", "blob", f"{sha}:{prefix}{path}", timeout=HISTORY_TIMEOUT, extra_config=repo.config
        )
    except GitUnavailable as exc:
        raise GitError(f"cannot read {path} at {sha[:10]}: {exc}") from exc
    if not result.ok:
        raise GitError(f"cannot read {path} at {sha[:10]}: {result.reason()}")
    return result.stdout


def open_repository(root: Path) -> Repository:
    """The repository ROOT belongs to; :class:`RootError` when ROOT is not in one, or when
    git may not be asked about it (see :func:`hybridmap.infra.git.locate`).

    A bare repository is used only when ROOT *is* its git directory, named by the user;
    ROOT inside a bare repository (one embedded in a clone) is refused like everywhere.
    """
    if not root.is_dir():
        raise RootError(f"root '{root}' is not a directory")
    root = root.resolve()
    where = locate(root)
    if isinstance(where, Location):
        return Repository(where.top, where.prefix, False)
    explicit = run_git(root, "rev-parse", "--absolute-git-dir", check=False, extra_config=EXPLICIT_BARE_CONFIG).strip()
    if (
        explicit
        and Path(explicit).resolve() == root
        and run_git(root, "rev-parse", "--is-bare-repository", check=False, extra_config=EXPLICIT_BARE_CONFIG).strip()
        == "true"
    ):
        return Repository(root, "", True, EXPLICIT_BARE_CONFIG)
    if where.expected:
        raise RootError(f"root '{root}' is not a git repository (eval replays its history)")
    raise RootError(f"root '{root}': {where.reason}")
