"""The eval's only door to git: run a git command in a repository, fail with one clear line.

Every call sets a fixed, minimal environment for the output formats we parse
(no pager, no colour, no user diff drivers) and never writes to the user's
work tree or index: the eval reads history and checks commits out only in a
scratch worktree of its own (see :mod:`.worktree`).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import RequestError, RootError

#: Options that make git's output independent of the user's configuration.
_STABLE = ("-c", "core.quotepath=off", "-c", "color.ui=never", "-c", "diff.renames=true",
           "-c", "core.pager=cat")


class GitError(RequestError):
    """A git command the eval needs failed (the message names the command and git's reason)."""


@dataclass(frozen=True, slots=True)
class Repository:
    """A git repository the eval reads: ``top`` is the work tree (or the git dir of a bare one)."""

    top: Path
    prefix: str
    """ROOT relative to ``top`` ('' when ROOT is the top): only files under it are evaluated."""
    bare: bool

    def git(self, *args: str, check: bool = True, timeout: float = 120) -> str:
        return run_git(self.top, *args, check=check, timeout=timeout)


def run_git(cwd: Path, *args: str, check: bool = True, timeout: float = 120,
            input_text: str | None = None) -> str:
    env = {**os.environ, "GIT_PAGER": "cat", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        proc = subprocess.run(["git", *_STABLE, *args], cwd=cwd, capture_output=True, text=True,
                              errors="surrogateescape", timeout=timeout, env=env, input=input_text,
                              check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed (it is needed to read the history)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"'git {' '.join(args[:3])}' took longer than {timeout:.0f} s") from exc
    if check and proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["exit code " + str(proc.returncode)])[-1]
        raise GitError(f"'git {' '.join(args[:3])}' failed: {reason}")
    return proc.stdout


def read_blob(repo: Repository, sha: str, path: str) -> bytes:
    """The bytes of ``path`` (relative to ROOT) at ``sha``."""
    prefix = f"{repo.prefix}/" if repo.prefix else ""
    try:
        proc = subprocess.run(["git", *_STABLE, "cat-file", "blob", f"{sha}:{prefix}{path}"], cwd=repo.top,
                              capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"cannot read {path} at {sha[:10]}: {exc}") from exc
    if proc.returncode != 0:
        raise GitError(f"cannot read {path} at {sha[:10]}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def open_repository(root: Path) -> Repository:
    """The repository ROOT belongs to; :class:`RootError` when ROOT is not in one."""
    if not root.is_dir():
        raise RootError(f"root '{root}' is not a directory")
    inside = run_git(root, "rev-parse", "--is-inside-work-tree", "--is-bare-repository",
                     check=False).split()
    if len(inside) < 2:
        raise RootError(f"root '{root}' is not a git repository (eval replays its history)")
    if inside[1] == "true":
        top = Path(run_git(root, "rev-parse", "--absolute-git-dir").strip())
        return Repository(top, "", True)
    top = Path(run_git(root, "rev-parse", "--show-toplevel").strip())
    prefix = run_git(root, "rev-parse", "--show-prefix").strip().rstrip("/")
    return Repository(top, prefix, False)
