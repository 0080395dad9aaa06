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
files from elsewhere. :func:`locate_submodule` applies the same rules, more strictly, to a
checked-out submodule, which the walk lists as a repository of its own (``ls-files`` never
recurses: ``--recurse-submodules`` cannot list untracked files). ``docs/security.md`` lists each
defence with its test.

:func:`log_name_only` reads history for ranking signals (files changed together) the same way:
asked only about a root :func:`locate` accepts, paths relative to it, output bounded
(:func:`run_git_bounded`).
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .boundaries import absolute_path_entries, inside
from .sandbox import Policy, confined, system_policy

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

#: ``-c`` items for reading history whose output we parse: renames detected whatever the
#: user's configuration says (the eval's diffs and file lists).
STABLE_HISTORY_CONFIG: tuple[str, ...] = ("diff.renames=true",)
#: ``-c`` items that let git use a bare repository: only ever for a git directory the user named
#: as ROOT (the eval), never for one discovered inside a work tree (see ``safe.bareRepository``).
EXPLICIT_BARE_CONFIG: tuple[str, ...] = ("safe.bareRepository=all",)
#: Seconds a command reading history (log, diff-tree, cat-file, show) may take: longer than a
#: listing, since a large repository's history is slow to walk on a cold page cache.
HISTORY_TIMEOUT = 120.0

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


def git_sandbox(executable: str, cwd: Path, writable: Sequence[Path] = ()) -> Policy:
    """The sandbox every git call runs in: it may read anything (discovery walks up from the
    root; the user's git configuration is read), run only the system's programs and its own,
    write only ``writable`` (nothing, but for the eval's scratch worktree), and connect nowhere.
    So a hook, fsmonitor, filter, pager or transport the overrides above missed cannot run a
    program the repository ships, write into it, or reach the network."""
    real = Path(os.path.realpath(executable))
    return system_policy().extended(
        execute=[str(real), str(real.parent.parent / "libexec" / "git-core")],
        read=["/"],
        write=[str(p) for p in writable],
        # The repository is never written, unless it is one of our own scratch checkouts.
        protected=[] if any(inside(p.resolve(), cwd.resolve()) for p in writable) else [str(cwd)],
    )


def hardened_args(extra_config: Sequence[str] = ()) -> list[str]:
    args: list[str] = []
    for item in (*HARDENED_CONFIG, *extra_config):
        args += ["-c", item]
    return args


def run_git(
    cwd: Path,
    *args: str,
    timeout: float = 60.0,
    input_bytes: bytes | None = None,
    extra_config: Sequence[str] = (),
    writable: Sequence[Path] = (),
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` with every defence above, in :func:`git_sandbox` (writing
    only ``writable``); never raises for git's own failure."""
    executable = git_executable()
    if executable is None:
        raise GitUnavailable("git is not installed")
    try:
        with confined(git_sandbox(executable, cwd, writable)) as start:
            proc = subprocess.run(
                [executable, *hardened_args(extra_config), *args],
                cwd=cwd,
                input=input_bytes,
                capture_output=True,
                timeout=timeout,
                check=False,
                env=git_environment(),
                stdin=None if input_bytes is not None else subprocess.DEVNULL,
                preexec_fn=start.preexec,
            )
    except subprocess.TimeoutExpired as exc:
        raise GitUnavailable(f"'git {' '.join(args[:2])}' took longer than {timeout:g} s") from exc
    except (OSError, subprocess.SubprocessError) as exc:  # SubprocessError: the sandbox was refused
        raise GitUnavailable(f"git could not be run ({getattr(exc, 'strerror', None) or exc})") from exc
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
    return _located(root, result.text().splitlines())


def _located(root: Path, lines: list[str]) -> Location | Refusal:
    """:func:`locate`'s checks of what ``rev-parse --is-bare-repository --absolute-git-dir
    --show-toplevel`` printed (its first three lines)."""
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


def locate_submodule(work_tree: Path, superproject: Location, timeout: float = 60.0) -> Location | Refusal:
    """The repository of a checked-out submodule at ``work_tree`` (resolved, a directory the
    superproject's index holds as a gitlink), if it is safe to ask git about it.

    :func:`locate`'s rules, and stricter, since a submodule's ``.git`` comes with the repository:
    the work tree git reports must be ``work_tree`` itself (not the superproject's, which discovery
    finds when the ``.git`` names no repository, nor one that ``core.worktree`` moves), and the git
    directory must lie inside it (a nested clone) or under the superproject's own ``modules/``
    (where ``git submodule`` keeps it, its ``core.worktree`` pointing back). A ``.git`` file naming
    any other directory is refused, even one that points back; so is a ``modules/`` that is a
    symbolic link (``modules`` is compared unresolved).
    """
    where = locate(work_tree, timeout)
    if isinstance(where, Refusal):
        return Refusal(where.reason)
    if where.top != work_tree:
        return Refusal("git does not take the directory for the submodule's own work tree")
    if not inside(work_tree, where.git_dir) and superproject.git_dir / "modules" not in where.git_dir.parents:
        return Refusal("its .git names a git directory outside the superproject's .git/modules")
    return where


def run_git_bounded(
    cwd: Path,
    *args: str,
    max_output: int,
    timeout: float = 60.0,
    extra_config: Sequence[str] = (),
    max_records: int | None = None,
) -> tuple[GitResult, bool]:
    """:func:`run_git` reading at most ``max_output`` bytes of stdout, and at most ``max_records``
    NUL-terminated records when given: (the result, whether git had more to say). Git is killed
    once a bound is passed (a history can be gigabytes, a listing millions of paths), so a
    truncated result has a negative return code; cut by bytes, stdout ends anywhere and callers
    keep only the records they can tell are whole; cut by records, it ends after the last whole one."""
    executable = git_executable()
    if executable is None:
        raise GitUnavailable("git is not installed")
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a full pipe would stall git
        try:
            with confined(git_sandbox(executable, cwd)) as start:
                proc = subprocess.Popen(  # our git, hardened arguments and environment, no shell
                    [executable, *hardened_args(extra_config), *args],
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    env=git_environment(),
                    preexec_fn=start.preexec,
                )
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitUnavailable(f"git could not be run ({getattr(exc, 'strerror', None) or exc})") from exc
        try:
            stdout, truncated = _read_bounded(proc, max_output, deadline, max_records)
        except TimeoutError as exc:
            raise GitUnavailable(f"'git {' '.join(args[:2])}' took longer than {timeout:g} s") from exc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        errors.seek(0)
        stderr = errors.read(64 * 1024)
    return GitResult(proc.returncode, stdout, stderr), truncated


def _read_bounded(
    proc: subprocess.Popen[bytes], max_output: int, deadline: float, max_records: int | None = None
) -> tuple[bytes, bool]:
    """Up to ``max_output`` bytes (and ``max_records`` NUL-terminated records) of ``proc``'s stdout
    before ``deadline``, and whether there were more."""
    assert proc.stdout is not None  # noqa: S101  # Popen(stdout=PIPE) above
    fd = proc.stdout.fileno()
    chunks: list[bytes] = []
    size = 0
    records = 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not selector.select(left):
                continue
            data = os.read(fd, 64 * 1024)
            if not data:
                return b"".join(chunks), False
            if max_records is not None and records + data.count(b"\0") >= max_records:
                end = -1
                for _ in range(max_records - records):
                    end = data.index(b"\0", end + 1)
                data = data[: end + 1]
                if size + len(data) <= max_output:
                    chunks.append(data)
                    return b"".join(chunks), True
            room = max_output - size
            if len(data) > room:
                chunks.append(data[:room])
                return b"".join(chunks), True
            chunks.append(data)
            size += len(data)
            if max_records is not None:
                records += data.count(b"\0")


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    paths: tuple[str, ...]
    """The files the commit changed under the root, relative to it (POSIX), as git spells them
    (bytes that are not UTF-8 kept reversibly); a rename is its old and its new path."""
    parentless: bool = False
    """No parent in this clone: the first commit, or the edge of a shallow clone (whose listed
    changes are then its whole tree, not what it changed)."""


@dataclass(frozen=True, slots=True)
class CommitLog:
    """Commits of a history as one clone read them, newest first, from ``head``: what an index
    artifact carries to a shallow clone elsewhere (:mod:`hybridmap.pipeline.inputs.cochange`)."""

    head: str
    commits: tuple[Commit, ...]


@dataclass(frozen=True, slots=True)
class History:
    """The newest commits that changed files under a root, newest first."""

    commits: tuple[Commit, ...]
    complete: bool
    """False when ``max_bytes`` cut the log short (the commits kept are whole) or git refused."""
    problem: str = ""
    """Why there are fewer commits than asked: git's refusal or complaint; '' otherwise."""


def log_name_only(
    root: Path,
    max_commits: int,
    timeout: float = HISTORY_TIMEOUT,
    max_bytes: int = 8 << 20,
    head: str = "HEAD",
    since: str | None = None,
) -> History:
    """The files each of the last ``max_commits`` non-merge commits changed under ``root``
    (of ``head``'s history, newer than ``since`` when given: an update after HEAD moved).

    For history signals (files changed together). Hardened like every call here, asked only
    about a root :func:`locate` accepts, paths relative to the root with changes outside it left
    out (``--relative``), at most ``max_bytes`` of output read. Raises :class:`GitUnavailable`
    when git cannot run or takes longer than ``timeout``.
    """
    root = root.resolve()
    where = locate(root, timeout)
    if isinstance(where, Refusal):
        return History((), False, where.reason)
    result, truncated = run_git_bounded(
        root,
        *("log", "-z", "--name-only", "--no-renames", "--no-merges", "--relative", "--format=%x00%H %P"),
        *(f"--max-count={max(0, max_commits)}", _revisions(head, since), "--", "."),
        max_output=max_bytes,
        timeout=timeout,
    )
    if not truncated and not result.ok:
        return History((), False, result.reason())
    return History(_parse_log(result.stdout, truncated), not truncated)


#: A full object name (SHA-1 or SHA-256), as git prints it.
FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _revisions(head: str, since: str | None) -> str:
    """``head`` or ``since..head``; only full object names or ``HEAD`` (never an option-like string)."""
    for rev in (head, since):
        if rev is not None and rev != "HEAD" and not FULL_SHA.fullmatch(rev):
            raise ValueError(f"not a full object name: {rev!r}")
    return head if since is None else f"{since}..{head}"


def head_commit(root: Path, timeout: float = 60.0) -> str | None:
    """The full sha of ``root``'s HEAD; None without a repository git may be asked about, or
    without a commit."""
    located = located_head(root, timeout)
    return located[0] if located is not None else None


def located_head(root: Path, timeout: float = 60.0) -> tuple[str, Path] | None:
    """(:func:`head_commit`, the repository's git directory); None as :func:`head_commit`."""
    root = root.resolve()
    # One git process for both questions (a map's refresh asks this every time): where the
    # repository is, then HEAD, whose answer counts only when the location passes locate's checks.
    try:
        result = run_git(
            root,
            *("rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel"),
            *("--verify", "--quiet", "HEAD^{commit}"),
            timeout=timeout,
        )
    except GitUnavailable:
        return None
    lines = result.text().splitlines()
    location = _located(root, lines[:3]) if result.ok and len(lines) == 4 else None
    if not isinstance(location, Location):
        return None  # no repository we may ask about, or no commit yet
    sha = lines[3].strip()
    return (sha, location.git_dir) if FULL_SHA.fullmatch(sha) else None


def is_shallow(root: Path, timeout: float = 60.0) -> bool:
    """Whether ``root``'s repository is a shallow clone (its history cut at some depth)."""
    root = root.resolve()
    if isinstance(locate(root, timeout), Refusal):
        return False
    result = run_git(root, "rev-parse", "--is-shallow-repository", timeout=timeout)
    return result.ok and result.stdout.strip() == b"true"


def is_ancestor(root: Path, older: str, newer: str, timeout: float = 60.0) -> bool:
    """Whether commit ``older`` is in ``newer``'s history (both full shas)."""
    _revisions(newer, older)
    return run_git(root.resolve(), "merge-base", "--is-ancestor", older, newer, timeout=timeout).ok


def _parse_log(raw: bytes, truncated: bool) -> tuple[Commit, ...]:
    """Commits from ``log -z --name-only --format=%x00%H %P``: each header is an empty field (no
    path is empty) then the sha and its parents; the first path after a header has git's newline
    before it."""
    fields = raw.split(b"\0")
    commits: list[Commit] = []
    sha: str | None = None
    parentless = False
    paths: list[str] = []
    i = 0
    while i < len(fields):
        field = fields[i]
        if field == b"" and i + 1 < len(fields) and fields[i + 1]:
            if sha is not None:
                commits.append(Commit(sha, tuple(paths), parentless))
            header = fields[i + 1].decode("ascii", "replace").split()
            sha, parentless, paths = header[0], len(header) == 1, []
            i += 2
            continue
        if sha is not None and field:
            name = field[1:] if not paths and field.startswith(b"\n") else field
            paths.append(name.decode("utf-8", "surrogateescape"))
        i += 1
    if sha is not None and not truncated:  # a cut log's last commit may be missing paths
        commits.append(Commit(sha, tuple(paths), parentless))
    return tuple(commits)
