"""Starting a process inside a :class:`~.policy.Policy`.

``with confined(policy) as start: subprocess.Popen(..., preexec_fn=start.preexec)``: the
ruleset is built in our process (a few dozen system calls, well under a millisecond), enforced
in the child just before ``exec`` and so inherited by everything the child starts, and closed
here once the child exists. Where the kernel has no Landlock, ``start.enforced`` is False and
``start.reason`` says why: callers decide whether the process may run anyway (git and our parse
workers do, hardened as before; a language server does only when marked safe or allowed by the
user) and say so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .landlock import LandlockError, Ruleset, Support, dier, probe
from .policy import Policy

#: The lowest ABI we call a sandbox: TCP connect/bind rules came with ABI 4 (Linux 6.7). An
#: older kernel still confines files, but a server could reach the network: not enough.
MIN_ABI = 4


@dataclass(frozen=True, slots=True)
class Start:
    """How to start one process: the ``preexec_fn`` to pass, and what it enforces."""

    preexec: Callable[[], None] | None
    enforced: bool
    label: str
    """``landlock ABI N`` when enforced, else why not."""

    @property
    def reason(self) -> str:
        return "" if self.enforced else self.label


def support() -> Support:
    """Landlock on this kernel, with the ABI floor applied."""
    found = probe()
    if found.abi and found.abi < MIN_ABI:
        needed = f"ABI {MIN_ABI} or later needed: Linux 6.7"
        return Support(0, f"Landlock ABI {found.abi} cannot deny network connections ({needed})")
    return found


@contextlib.contextmanager
def confined(policy: Policy, *, die_with_parent: bool = False, kernel: Support | None = None) -> Iterator[Start]:
    """A :class:`Start` for one child; the ruleset lives until the block ends (spawn inside it)."""
    found = support() if kernel is None else kernel
    if not found.abi:
        yield Start(dier() if die_with_parent else None, False, found.reason)
        return
    try:
        ruleset = Ruleset(found.abi)
    except LandlockError as exc:
        yield Start(dier() if die_with_parent else None, False, f"Landlock refused a ruleset: {exc.strerror}")
        return
    with ruleset:
        policy.apply_to(ruleset)
        yield Start(ruleset.restrictor(die_with_parent=die_with_parent), True, f"landlock ABI {found.abi}")
