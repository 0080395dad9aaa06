"""The language servers' work queue: jobs most useful first, run in the background.

A :class:`Job` asks one server one thing about one file (its symbols, where the uses of a
name point, a hover). :class:`WorkQueue` holds the plan, runs it ``lsp_batch`` jobs at a
time with ``lsp_concurrency`` requests in flight per server, and tells a waiting map when
every *critical* job is done (:meth:`WorkQueue.wait_idle`). Which server answers a job is the
caller's choice (``session_for``): the queue knows nothing of languages or project roots.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...model import ServerState
from ...settings import Settings

if TYPE_CHECKING:
    from .resolver import Sites
    from .session import LspSession


@dataclass(frozen=True, slots=True)
class Job:
    kind: str  # "symbols" | "definition" | "hover"
    path: str
    name: str = ""
    sites: Sites = ()
    critical: bool = True
    """A map that waits for servers waits for critical jobs only."""


class WorkQueue:
    def __init__(
        self,
        settings: Settings,
        session_for: Callable[[str], LspSession | None],
        run: Callable[[LspSession, Job], Awaitable[None]],
    ) -> None:
        self._settings = settings
        self._session_for = session_for
        self._run = run
        self._queue: deque[Job] = deque()
        self._queued_critical = 0
        self._running_critical = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        self._closed = False

    def __len__(self) -> int:
        return len(self._queue)

    def replace(self, jobs: list[Job]) -> None:
        """A new plan; queued hovers (asked for shown symbols) stay in front."""
        hovers = [job for job in self._queue if job.kind == "hover"]
        self._queue = deque(hovers + jobs)
        self._queued_critical = sum(1 for job in self._queue if job.critical)
        self._kick()

    def push_front(self, jobs: list[Job]) -> None:
        """Critical jobs ahead of the plan, in the given order."""
        for job in reversed(jobs):
            self._queue.appendleft(job)
            if job.critical:
                self._queued_critical += 1
        self._kick()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until every critical job is done, up to ``timeout`` seconds."""
        if timeout > 0 and not self._idle.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout)
        return self._idle.is_set()

    def _update_idle(self) -> None:
        if self._queued_critical or self._running_critical:
            self._idle.clear()
        else:
            self._idle.set()

    def _kick(self) -> None:
        if self._closed:
            return
        self._update_idle()
        if self._queue and (self._worker is None or self._worker.done()):
            self._worker = asyncio.get_running_loop().create_task(self._work())

    async def _work(self) -> None:
        semaphores: dict[int, asyncio.Semaphore] = {}
        try:
            while self._queue:
                batch: list[Job] = []
                while self._queue and len(batch) < self._settings.lsp_batch:
                    job = self._queue.popleft()
                    if job.critical:
                        self._queued_critical -= 1
                        self._running_critical += 1
                    batch.append(job)
                await asyncio.gather(*(self._one(job, semaphores) for job in batch))
        finally:
            self._update_idle()

    async def _one(self, job: Job, semaphores: dict[int, asyncio.Semaphore]) -> None:
        try:
            session = self._session_for(job.path)
            if session is None or session.state not in (ServerState.READY, ServerState.INDEXING):
                return  # planned again at the next map
            semaphore = semaphores.setdefault(id(session), asyncio.Semaphore(self._settings.lsp_concurrency))
            async with semaphore:
                await self._run(session, job)
        finally:
            if job.critical:
                self._running_critical -= 1
                self._update_idle()

    async def aclose(self) -> None:
        self._closed = True
        self._queue.clear()
        self._queued_critical = 0
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            with contextlib.suppress(BaseException):
                await self._worker
