"""Linux Landlock, the three system calls, as the sandbox needs them.

Written here rather than taken from PyPI, on purpose: the Python bindings there (``landlock``
1.0.0.dev5, ``py-landlock`` 0.1, ``landlockpy`` 0.2) are pre-1.0 and restrict the *calling*
process, while we must build the ruleset in our own process and apply it in a child between
``fork`` and ``exec``, where only async-signal-safe work is sound: :meth:`Ruleset.restrictor`
returns a function that makes exactly two system calls (``prctl(PR_SET_NO_NEW_PRIVS)`` and
``landlock_restrict_self``) through ctypes objects bound before the fork. The kernel interface
is stable and small (landlock(7)): a ruleset file descriptor, rules added to it, one call to
enforce it. The policy is inherited by every process the child starts, and cannot be undone.

Rights the running kernel does not know are left out (best effort by ABI, as landlock(7)
advises), so what is enforced on an older kernel is said by :attr:`Ruleset.abi`; callers decide
whether that is enough (TCP rules need ABI 4).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntFlag

# System call numbers: Landlock was added after the syscall tables were unified, so they are
# the same on every architecture Linux supports.
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_PDEATHSIG = 1
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_SIGKILL = 9


class FsAccess(IntFlag):
    """Filesystem rights (landlock(7)); the ABI that introduced each is in :data:`_FS_BY_ABI`."""

    EXECUTE = 1 << 0
    WRITE_FILE = 1 << 1
    READ_FILE = 1 << 2
    READ_DIR = 1 << 3
    REMOVE_DIR = 1 << 4
    REMOVE_FILE = 1 << 5
    MAKE_CHAR = 1 << 6
    MAKE_DIR = 1 << 7
    MAKE_REG = 1 << 8
    MAKE_SOCK = 1 << 9
    MAKE_FIFO = 1 << 10
    MAKE_BLOCK = 1 << 11
    MAKE_SYM = 1 << 12
    REFER = 1 << 13
    TRUNCATE = 1 << 14
    IOCTL_DEV = 1 << 15


class NetAccess(IntFlag):
    BIND_TCP = 1 << 0
    CONNECT_TCP = 1 << 1


class Scope(IntFlag):
    ABSTRACT_UNIX_SOCKET = 1 << 0
    SIGNAL = 1 << 1


_ABI1_FS = FsAccess(0x1FFF)  # EXECUTE .. MAKE_SYM
_FS_BY_ABI = {
    1: _ABI1_FS,
    2: _ABI1_FS | FsAccess.REFER,
    3: _ABI1_FS | FsAccess.REFER | FsAccess.TRUNCATE,
}


def fs_rights(abi: int) -> FsAccess:
    """Every filesystem right the kernel of ``abi`` knows (all of them are handled: denied
    unless a rule grants them)."""
    if abi >= 5:
        return _FS_BY_ABI[3] | FsAccess.IOCTL_DEV
    return _FS_BY_ABI.get(abi, _FS_BY_ABI[3]) if abi > 0 else FsAccess(0)


def net_rights(abi: int) -> NetAccess:
    return NetAccess.BIND_TCP | NetAccess.CONNECT_TCP if abi >= 4 else NetAccess(0)


def scopes(abi: int) -> Scope:
    return Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL if abi >= 6 else Scope(0)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed))
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class LandlockError(OSError):
    """Landlock is missing, disabled, or refused a ruleset."""


@dataclass(frozen=True, slots=True)
class Support:
    """What the running kernel offers."""

    abi: int
    """Landlock ABI version; 0 when there is none."""
    reason: str = ""
    """Why there is none ('' when there is)."""


def _libc() -> ctypes.CDLL | None:
    if platform.system() != "Linux":
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def probe() -> Support:
    """The kernel's Landlock ABI, or why there is none (never raises)."""
    libc = _libc()
    if libc is None:
        return Support(0, f"Landlock is a Linux feature; this is {platform.system()}")
    abi = int(libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)))
    if abi > 0:
        return Support(abi)
    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        return Support(0, "the kernel was built without Landlock (CONFIG_SECURITY_LANDLOCK)")
    if err == errno.EOPNOTSUPP:
        return Support(0, "Landlock is built in but not enabled (add it to the kernel's lsm= list)")
    return Support(0, f"Landlock is unavailable ({os.strerror(err)})")


class Ruleset:
    """A ruleset being built in our process; :meth:`restrictor` enforces it in a child.

    Owns one file descriptor (closed by :meth:`close` or the context manager); the kernel
    keeps its own reference in every child that enforced it.
    """

    def __init__(self, abi: int) -> None:
        libc = _libc()
        if libc is None or abi <= 0:
            raise LandlockError(errno.ENOSYS, "Landlock is unavailable")
        self.abi = abi
        self.fs = fs_rights(abi)
        self.net = net_rights(abi)
        self.scoped = scopes(abi)
        attr = _RulesetAttr(int(self.fs), int(self.net), int(self.scoped))
        # The struct grew with the ABI: pass the size this kernel knows (E2BIG otherwise).
        size = 8 if abi < 4 else (16 if abi < 6 else ctypes.sizeof(_RulesetAttr))
        fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
        if fd < 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_create_ruleset: {os.strerror(err)}")
        self._libc = libc
        self.fd: int | None = fd

    def allow_path(self, path: str, access: FsAccess) -> None:
        """Grant ``access`` (clipped to what this ABI knows, and to file rights for a file) on
        ``path`` and everything beneath it. Raises OSError when the path cannot be opened."""
        if self.fd is None:
            raise LandlockError(errno.EBADF, "the ruleset is closed")
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            allowed = access & self.fs
            if not os.path.isdir(f"/proc/self/fd/{target}"):
                allowed &= _FILE_RIGHTS  # the kernel refuses directory rights on a file
            if not allowed:
                return
            attr = _PathBeneathAttr(int(allowed), target)
            kind, flags = ctypes.c_int(_RULE_PATH_BENEATH), ctypes.c_uint32(0)
            rc = self._libc.syscall(_SYS_ADD_RULE, ctypes.c_int(self.fd), kind, ctypes.byref(attr), flags)
            if rc != 0:
                err = ctypes.get_errno()
                raise LandlockError(err, f"landlock_add_rule({path}): {os.strerror(err)}")
        finally:
            os.close(target)

    def restrictor(self, *, die_with_parent: bool = False) -> Callable[[], None]:
        """A function for ``preexec_fn``: in the child, after fork and before exec, set
        no-new-privileges (required by the kernel for an unprivileged restrict, and it keeps a
        setuid program from shedding the policy) and enforce the ruleset; optionally
        ``PR_SET_PDEATHSIG``. Raises in the child when the kernel refuses, so the exec never
        happens unrestricted (subprocess reports the failure to the parent)."""
        if self.fd is None:
            raise LandlockError(errno.EBADF, "the ruleset is closed")
        prctl = self._libc.prctl
        syscall = self._libc.syscall
        fd = ctypes.c_int(self.fd)
        flags = ctypes.c_uint32(0)
        one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
        nr = ctypes.c_long(_SYS_RESTRICT_SELF)
        nnp_args = (ctypes.c_int(_PR_SET_NO_NEW_PRIVS), one, zero, zero, zero)
        die = dier(self._libc) if die_with_parent else None

        def restrict() -> None:  # in the child: two or three system calls, nothing else
            if die is not None:
                die()
            if prctl(*nnp_args) != 0 or syscall(nr, fd, flags) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

        return restrict

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Ruleset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dier(libc: ctypes.CDLL | None = None) -> Callable[[], None] | None:
    """A function for ``preexec_fn`` that makes the child die with its parent
    (``PR_SET_PDEATHSIG``), bound now so the child makes one system call and loads nothing;
    None off Linux."""
    libc = _libc() if libc is None else libc
    if libc is None:
        return None
    prctl = libc.prctl
    zero = ctypes.c_ulong(0)
    args = (ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(_SIGKILL), zero, zero, zero)

    def die_with_parent() -> None:
        prctl(*args)

    return die_with_parent


#: Rights that make sense on a file (not a directory): the kernel rejects the others there.
_FILE_RIGHTS = FsAccess.EXECUTE | FsAccess.WRITE_FILE | FsAccess.READ_FILE | FsAccess.TRUNCATE | FsAccess.IOCTL_DEV
