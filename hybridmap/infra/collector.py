"""Python's cycle collector held off while a map builds what it keeps.

An index of a large repository is millions of small, long-lived, acyclic objects (each file's
tags, symbols, word counts). While they are made, the collector runs every few hundred
allocations and, as the heap grows, passes over everything allocated so far again and again: at
100,000 files it was a fifth of a warm one-shot map's CPU (``docs/benchmarks.md``, "The cycle
collector and the end of a one-shot process"). What a build keeps is acyclic data (tags, tuples,
arrays) and what it drops is freed by reference counting, as it always was: holding the collector
off frees nothing later but the few cycles made meanwhile (a caught exception's frames, the host's
own in other threads), which wait until the last build ends and the collector runs again (the
peak memory of that map did not move).

The collector is the process's, so its pause has one owner per process: builds of several maps
in several threads share it, and it resumes when the last of them ends. A host that had switched
the collector off keeps it off. ``pause_cycle_collector = false`` leaves the collector alone.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class _CollectorPause:
    """Counts the builds under way; the collector is off while there is one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._builds = 0
        self._resume = False
        """Whether the collector was on when the first build began (it is switched on again)."""

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            if self._builds == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._builds += 1
        try:
            yield
        finally:
            with self._lock:
                self._builds -= 1
                if self._builds == 0 and self._resume:
                    gc.enable()


_PAUSE = _CollectorPause()
"""The one owner of the collector's pause: the collector is the process's, not a map's."""


@contextmanager
def collector_paused(enabled: bool = True) -> Iterator[None]:
    """No cycle collection while the block runs (``enabled`` false: nothing is changed)."""
    if not enabled:
        yield
        return
    with _PAUSE.held():
        yield


def without_collector(enabled: bool, func: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """``func(*args, **kwargs)`` under :func:`collector_paused` (for ``asyncio.to_thread``)."""
    with collector_paused(enabled):
        return func(*args, **kwargs)
