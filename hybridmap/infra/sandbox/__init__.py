"""The OS sandbox for every process hybridmap starts on a repository's behalf.

:mod:`.landlock` speaks to the kernel, :mod:`.policy` says what a process may do,
:mod:`.profiles` builds policies from ``policy.toml`` and the places we resolve, and
:mod:`.confine` starts a process inside one. ``docs/security.md`` ("The sandbox") has the policy
in words, what each server may read, write and run, and the measured cost.
"""

from .confine import MIN_ABI, Start, confined, support
from .policy import Policy
from .profiles import base_policy, expand, system_policy

__all__ = ["MIN_ABI", "Policy", "Start", "base_policy", "confined", "expand", "support", "system_policy"]
