"""Whether a repository's HEAD can have moved since it was last read, from the files git keeps it
in, without starting git.

A map asks for HEAD on every refresh (co-change is kept per HEAD), and a git process is a fork of
the mapping process: at 100,000 files about 25-50 ms of an edit's map. Git moves HEAD only by
writing files in its directory, each through a lock file renamed into place: ``HEAD`` itself (a
checkout, a commit on a detached HEAD), the branch's loose ref, ``packed-refs`` (after ``gc`` or
``pack-refs``, a branch may live only there), or a reftable stack's ``tables.list``. A
:func:`head_stamp` of those files (each one's inode, size, modification and change times, and
the text of ``HEAD`` and of the loose ref) that is equal to the one taken before git last
answered means HEAD still resolves to that answer.

Refused (None: ask git), as the workspace refuses a racy stat: any of those files changed within
``racy_seconds`` of the stamp (a timestamp is coarser than two quick updates, and a freed inode
is reused), any of them not a regular file (a symbolic ``HEAD``), a symbolic ref to another
symbolic ref, a ``commondir`` that cannot be read. Nothing here writes or follows a link.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

#: Bytes read of ``HEAD``, a loose ref or ``commondir`` (a symbolic ref is ``ref: refs/heads/NAME``).
MAX_READ = 4096

Stamp = tuple[object, ...]
Signature = tuple[int, int, int, int] | tuple[str]
"""(inode, size, modification and change times in ns), or ``("absent",)``."""


def head_stamp(git_dir: Path, racy_seconds: float) -> Stamp | None:
    """What HEAD is read from in ``git_dir`` now (see the module docstring); None: ask git."""
    racy_from = time.time_ns() - int(racy_seconds * 1e9)
    head = _read(git_dir / "HEAD", racy_from)
    if head is None:
        return None
    common = git_dir
    if os.path.lexists(git_dir / "commondir"):  # a linked work tree: its refs are the main one's
        pointer = _read(git_dir / "commondir", racy_from)
        if pointer is None:
            return None
        common = git_dir / pointer[1].decode("utf-8", "replace").strip()
    parts: list[object] = [head]
    text = head[1]
    if text.startswith(b"ref: "):
        name = text[5:].strip().decode("utf-8", "replace")
        if not name.startswith("refs/") or ".." in name.split("/"):
            return None
        loose = common / name if not name.startswith("refs/worktree/") else git_dir / name
        if not os.path.lexists(loose):
            parts.append(("absent",))  # packed only, or an unborn branch
        else:
            ref = _read(loose, racy_from)
            if ref is None or ref[1].startswith(b"ref: "):
                return None
            parts.append(ref)
    for shared in (common / "packed-refs", common / "reftable" / "tables.list"):
        signature = _signature(shared, racy_from)
        if signature is None:
            return None
        parts.append(signature)
    return tuple(parts)


def _read(path: Path, racy_from: int) -> tuple[Signature, bytes] | None:
    """(signature, text) of the regular file at ``path``; None when it is anything else, racy
    or unreadable."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        signature = _settled(os.fstat(fd), racy_from)
        if signature is None:
            return None
        text = os.read(fd, MAX_READ)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (signature, text)


def _signature(path: Path, racy_from: int) -> Signature | None:
    """A shared file's signature, ``("absent",)`` when there is none; None when racy or not a
    regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent",)
    except OSError:
        return None
    return _settled(st, racy_from)


def _settled(st: os.stat_result, racy_from: int) -> tuple[int, int, int, int] | None:
    """A regular file's signature, unless it changed at or after ``racy_from``."""
    if not stat.S_ISREG(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) >= racy_from:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
