"""What a sandboxed process may do, as plain data, and how it becomes a Landlock ruleset.

A :class:`Policy` names directories (or files) by what may be done there: ``execute`` (read and
run programs), ``read``, ``write`` (read, write, create, remove; never run) and ``devices``
(character devices opened for reading and writing: ``/dev/null``). Everything else is denied:
every filesystem right the kernel knows is handled, no TCP port may be bound or connected to,
and (ABI 6) no abstract Unix socket or signal reaches a process outside the sandbox.

``protected`` directories (the repository) are carved out of ``execute`` and ``write`` roots
that contain them: mapping a checkout under ``/usr/src`` must not let a server run its
programs because ``/usr`` is a system directory. Landlock rules only ever grant, so the carving
grants each sibling along the way instead of the parent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..boundaries import inside
from .landlock import FsAccess, Ruleset

_READ = FsAccess.READ_FILE | FsAccess.READ_DIR
_EXECUTE = _READ | FsAccess.EXECUTE
_WRITE = (
    _READ
    | FsAccess.WRITE_FILE
    | FsAccess.TRUNCATE
    | FsAccess.REMOVE_DIR
    | FsAccess.REMOVE_FILE
    | FsAccess.MAKE_DIR
    | FsAccess.MAKE_REG
    | FsAccess.MAKE_SYM
    | FsAccess.MAKE_FIFO
    | FsAccess.MAKE_SOCK
    | FsAccess.REFER
)
_DEVICE = FsAccess.READ_FILE | FsAccess.WRITE_FILE | FsAccess.TRUNCATE | FsAccess.IOCTL_DEV

#: How many rules carving may add for one root before it gives the root up instead (a
#: repository under a directory of a hundred thousand entries loses that root, not the map).
MAX_CARVED_RULES = 4096


@dataclass(frozen=True, slots=True)
class Policy:
    """Absolute paths by what a sandboxed process may do there. Paths that do not exist are
    skipped when the ruleset is built (a system directory one distribution lacks)."""

    execute: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    """Never executed from or written to, even inside an ``execute`` or ``write`` root."""
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What was left out while building the policy (for ``hybridmap servers``)."""

    def extended(
        self,
        *,
        execute: Iterable[str] = (),
        read: Iterable[str] = (),
        write: Iterable[str] = (),
        devices: Iterable[str] = (),
        protected: Iterable[str] = (),
    ) -> Policy:
        return Policy(
            _unique(self.execute, execute),
            _unique(self.read, read),
            _unique(self.write, write),
            _unique(self.devices, devices),
            _unique(self.protected, protected),
            self.notes,
        )

    def grants(self) -> Iterator[tuple[str, FsAccess]]:
        """(path, rights) rules, real paths, with the protected directories carved out."""
        protected = [p for p in (_real(p) for p in self.protected) if p is not None]
        for paths, access in ((self.execute, _EXECUTE), (self.write, _WRITE)):
            for path in paths:
                real = _real(path)
                if real is None:
                    continue
                inner = [p for p in protected if _inside(p, real)]
                if not inner:
                    yield real, access
                    continue
                # A protected directory under this root: grant around it, and read inside it.
                yield from _carve(real, inner, access)
        for paths, access in ((self.read, _READ), (self.devices, _DEVICE)):
            for path in paths:
                real = _real(path)
                if real is not None:
                    yield real, access

    def apply_to(self, ruleset: Ruleset) -> None:
        for path, access in self.grants():
            try:
                ruleset.allow_path(path, access)
            except (FileNotFoundError, PermissionError, NotADirectoryError):
                continue  # gone since _real() saw it, or not ours to open: not granted


def _unique(first: Iterable[str], more: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*first, *more]))


def _real(path: str) -> str | None:
    if not os.path.isabs(path):
        return None  # a relative path would depend on the child's working directory
    try:
        real = os.path.realpath(path, strict=True)
    except (OSError, ValueError):
        return None
    return real


def _inside(path: str, root: str) -> bool:
    return inside(Path(root), Path(path))  # both resolved by the callers


def _carve(root: str, protected: list[str], access: FsAccess) -> Iterator[tuple[str, FsAccess]]:
    """``access`` on everything under ``root`` except ``protected`` paths, which (and whose
    ancestors up to ``root``) keep read access only: one rule per sibling along each path."""
    yield root, _READ  # listing the ancestors and reading inside the protected directory
    if root in protected:
        return
    try:
        entries = os.listdir(root)
    except OSError:
        return
    if len(entries) > MAX_CARVED_RULES:
        return  # too wide to carve: read only
    for name in entries:
        child = os.path.join(root, name)
        inner = [p for p in protected if _inside(p, child)]
        if inner:
            yield from _carve(child, inner, access)
        elif not os.path.islink(child):  # a link is granted where it points, if anywhere
            yield child, access
