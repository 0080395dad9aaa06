"""The one door to git: every git command hybridmap runs goes through :func:`run_git`.

A repository is untrusted input, and git obeys the repository's own configuration:
``core.fsmonitor`` and hooks are commands, a filter driver runs on checkout, an
embedded bare repository (a directory with ``HEAD``, ``objects/``, ``refs/`` and a
``config``, which survives ``git clone``) is picked up by discovery, and
``core.worktree`` can point the work tree anywhere on the machine. So every call:

* runs the ``git`` found on the absolute entries of ``PATH`` only (a relative
  entry such as ``.`` would find a ``git`` the repository ships);
* overrides every configuration key that names a command git could run for the
  commands we use (:data:`HARDENED_CONFIG`; command-line ``-c`` wins over the
  repository's file and counts as protected configuration, so
  ``safe.bareRepository=explicit`` refuses embedded bare repositories);
* drops the caller's ``GIT_*`` variables (``GIT_DIR``, ``GIT_WORK_TREE``,
  ``GIT_EXTERNAL_DIFF``...) except the user's own configuration, ignores the system
  config, never prompts, never pages, takes no optional locks (a read never rewrites
  the index);
* is bounded in time, and reports failure as a value (:class:`GitResult`) or,
  when git cannot be run at all, as :class:`GitUnavailable`.

:func:`locate` then decides whether git may be asked about a root at all: the work
tree git reports must contain the root, and a git directory outside that work tree
must point back at it (a linked worktree or a submodule), so that neither
``core.worktree`` nor a ``.git`` file naming another repository can make us list
files from elsewhere. ``docs/security.md`` lists each defence with its test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .boundaries import absolute_path_entries, inside

#: Configuration that names a command, pages, writes, or trusts what it should not,
#: overridden on every call. Each is read by some command we run (ls-files and rev-parse
#: for the walk; log, diff, diff-tree, show, cat-file, worktree, checkout for the eval).
HARDENED_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",  # a command run on every index refresh
    "core.hooksPath=/dev/null",  # post-checkout and every other hook
    "safe.bareRepository=explicit",  # embedded bare repositories are never discovered
    "core.pager=cat",
    "pager.log=false",
    "pager.diff=false",
    "pager.show=false",
    "color.ui=never",
    "core.quotepath=off",
    "protocol.allow=never",  # no transport at all (ext:: runs commands; lazy fetches)
    "core.sshCommand=false",
    "credential.helper=",
    "core.askPass=",
    "gc.auto=0",  # no background gc (and its pre-auto-gc hook)
    "maintenance.auto=false",
    "log.showSignature=false",  # would run gpg.program
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "diff.external=",
    "core.untrackedCache=false",  # never rewrites the index's untracked cache
    "core.splitIndex=false",
    "submodule.recurse=false",
    "core.alternateRefsCommand=",
    "uploadpack.packObjectsHook=",
)

#: Environment variables set for every call (the caller's GIT_* are all dropped first).
_FIXED_ENVIRONMENT = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_NO_REPLACE_OBJECTS": "1",  # replace refs would show other content than the commit has
    "LC_ALL": "C",  # untranslated messages: we match some of them
}


class GitUnavailable(Exception):
    """git could not be run at all (not installed), or did not finish in time."""


@dataclass(frozen=True, slots=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def text(self) -> str:
        """stdout as text; bytes that are not UTF-8 kept reversibly (surrogateescape)."""
        return self.stdout.decode("utf-8", "surrogateescape")

    def reason(self) -> str:
        """git's last line of complaint (for messages about our own tools, not about a
        repository's paths: it may name paths outside the root)."""
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self.returncode}"


def git_executable(environ: Mapping[str, str] | None = None) -> str | None:
    """Absolute path of ``git`` on the absolute entries of ``PATH``, or None."""
    env = os.environ if environ is None else environ
    return shutil.which("git", path=os.pathsep.join(absolute_path_entries(env.get("PATH"))))


def _kept(name: str) -> bool:
    """The caller's configuration (``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n``, e.g. a
    ``safe.directory``, and ``GIT_CONFIG_GLOBAL``) is the user's, and our ``-c`` items still
    win over it; every other GIT_* variable (GIT_DIR, GIT_WORK_TREE, GIT_EXTERNAL_DIFF...)
    would make git read or run something other than the root's own repository."""
    return (
        not name.startswith("GIT_")
        or name in ("GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL")
        or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    )


def git_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    out = {k: v for k, v in env.items() if _kept(k)}
    out.update(_FIXED_ENVIRONMENT)
    return out


def git_config_environment() -> dict[str, str]:
    """:data:`HARDENED_CONFIG` as environment variables, for git run by programs we start
    (language servers): ``GIT_CONFIG_COUNT`` entries rank with ``-c`` above every file."""
    out = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": str(len(HARDENED_CONFIG))}
    for index, item in enumerate(HARDENED_CONFIG):
        key, _, value = item.partition("=")
        out[f"GIT_CONFIG_KEY_{index}"] = key
        out[f"GIT_CONFIG_VALUE_{index}"] = value
    return out


def hardened_args(extra_config: Sequence[str] = ()) -> list[str]:
    args: list[str] = []
    for item in (*HARDENED_CONFIG, *extra_config):
        args += ["-c", item]
    return args


def run_git(
    cwd: Path, *args: str, timeout: float = 60.0, input_bytes: bytes | None = None, extra_config: Sequence[str] = ()
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` with every defence above; never raises for git's own failure."""
    executable = git_executable()
    if executable is None:
        raise GitUnavailable("git is not installed")
    try:
        proc = subprocess.run(
            [executable, *hardened_args(extra_config), *args],
            cwd=cwd,
            input=input_bytes,
            capture_output=True,
            timeout=timeout,
            check=False,
            env=git_environment(),
            stdin=None if input_bytes is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitUnavailable(f"'git {' '.join(args[:2])}' took longer than {timeout:g} s") from exc
    except OSError as exc:
        raise GitUnavailable(f"git could not be run ({exc.strerror or type(exc).__name__})") from exc
    return GitResult(proc.returncode, proc.stdout, proc.stderr)


def filter_overrides(cwd: Path, extra_config: Sequence[str] = (), timeout: float = 60.0) -> tuple[str, ...]:
    """``-c`` items that disable every filter driver any configuration defines.

    A checkout runs ``filter.<name>.smudge`` / ``.process`` for paths whose attributes
    name the driver; driver names are open-ended, so each one configured is emptied
    (git skips a filter whose command is empty). Needed only by commands that write
    a work tree (the eval's scratch checkout).
    """
    result = run_git(cwd, "config", "-z", "--get-regexp", r"^filter\.", timeout=timeout, extra_config=extra_config)
    names: set[str] = set()
    for entry in result.stdout.split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if key.count(".") >= 2:
            names.add(key[len("filter.") : key.rindex(".")])
    out: list[str] = []
    for name in sorted(names):
        out += [
            f"filter.{name}.smudge=",
            f"filter.{name}.clean=",
            f"filter.{name}.process=",
            f"filter.{name}.required=false",
        ]
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Location:
    """Where a root sits in a git repository git may be asked about."""

    top: Path
    """The work tree's top directory (the root or one of its ancestors)."""
    git_dir: Path
    prefix: str
    """The root relative to ``top``, POSIX, '' at the top."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why git is not asked about a root (None-like for callers that just walk)."""

    reason: str
    expected: bool = False
    """True when there is simply no repository (nothing to tell the user)."""


def _points_back(git_dir: Path, top: Path) -> bool:
    """Whether a git directory outside the work tree belongs to it: a linked worktree's
    ``gitdir`` file names ``TOP/.git``; an absorbed submodule's ``core.worktree`` is TOP."""
    try:
        link = (git_dir / "gitdir").read_text(encoding="utf-8", errors="replace").strip()
        if link and Path(link if os.path.isabs(link) else git_dir / link).resolve() == top / ".git":
            return True
    except OSError:
        pass
    result = run_git(git_dir, "config", "--file", str(git_dir / "config"), "--get", "core.worktree")
    value = result.text().strip()
    if result.ok and value:
        target = Path(value) if os.path.isabs(value) else git_dir / value
        try:
            return target.resolve() == top
        except OSError:
            return False
    return False


def locate(root: Path, timeout: float = 60.0) -> Location | Refusal:
    """The repository git would use for ``root`` (already resolved), if it is safe to ask.

    Refused: no repository (``expected``), a bare or unusable one, a work tree that
    does not contain the root (``core.worktree`` pointing elsewhere), a git directory
    outside the work tree that does not point back at it (a ``.git`` file naming
    another repository), dubious ownership.
    """
    try:
        result = run_git(
            root, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel", timeout=timeout
        )
    except GitUnavailable as exc:
        return Refusal(str(exc), expected="not installed" in str(exc))
    if not result.ok:
        err = result.stderr
        if b"not a git repository" in err:
            return Refusal("not in a git repository", expected=True)
        if b"dubious ownership" in err:
            return Refusal("git refuses this repository because another user owns it ('dubious ownership')")
        if b"bare repository" in err:
            return Refusal(
                "the directory is inside an embedded bare repository, which git is told never "
                "to use (safe.bareRepository=explicit)"
            )
        return Refusal(f"git rev-parse failed (exit {result.returncode})")
    lines = result.text().splitlines()
    if len(lines) < 3 or lines[0] != "false":
        return Refusal("the directory is a bare repository or has no work tree")
    try:
        git_dir = Path(lines[1]).resolve()
        top = Path(lines[2]).resolve()
    except (OSError, RuntimeError):
        return Refusal("git reported a repository that cannot be resolved")
    if not inside(top, root):
        return Refusal("the repository's work tree (core.worktree) does not contain the root")
    if not inside(top, git_dir) and not _points_back(git_dir, top):
        return Refusal("the root's .git names a git directory elsewhere that is not its own")
    return Location(top, git_dir, root.relative_to(top).as_posix() if root != top else "")
