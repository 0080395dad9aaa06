"""The language-server symbol source: what the servers know now, and work to learn more.

:class:`LspSource` owns the server pool and everything asked of it. It never
makes a map wait unless the map asks to (``server_wait``):

- :meth:`start` starts the servers of the languages present (lazily, in the
  background), tells live servers what changed on disk, and plans the work,
  most useful first: symbols of the files the last map showed, then
  definitions at ambiguous references, then symbols of every other file;
- a background worker runs that plan against each ready (or indexing) server,
  ``lsp_concurrency`` requests at a time per server;
- :meth:`snapshot` returns what is known *now* (a :class:`SourceResult`:
  server symbols per file, resolved pairs, hover details), for the merge.

A long-lived map keeps resolving between calls, so each later map uses more.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...cache import Cache
from ...languages import LanguageRegistry
from ...merge import HoverKey
from ...model import ServerReport, ServerState
from ...settings import Settings
from ..base import SourceResult
from .pool import ServerPool

if TYPE_CHECKING:  # imported when the first server starts: they import lsprotocol (~0.3 s)
    from .documents import Documents
    from .outline import OutlineFetcher
    from .resolver import DefinitionResolver, Sites
    from .session import LspSession


@dataclass(frozen=True, slots=True)
class _Job:
    kind: str  # "symbols" | "definition" | "hover"
    path: str
    name: str = ""
    sites: Sites = ()
    critical: bool = True
    """A map that waits for servers waits for critical jobs only."""


class LspSource:
    name = "lsp"

    def __init__(
        self,
        registry: LanguageRegistry,
        root: Path,
        cache: Cache,
        settings: Settings,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._settings = settings
        self._root = root
        self._cache = cache
        self.pool = ServerPool(registry, root, settings, environ)
        self._engines: tuple[Documents, DefinitionResolver, OutlineFetcher] | None = None
        self._queue: deque[_Job] = deque()
        self._queued_critical = 0
        self._running_critical = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        self._plan_lock = asyncio.Lock()
        self._plan_key: object = None
        self._planned_languages: set[str] = set()
        """Languages whose server was usable at the last plan: only they get jobs."""
        self._closed = False

    # --- the parts that speak to servers, built when first needed ---------------------------

    def _built(self) -> tuple[Documents, DefinitionResolver, OutlineFetcher]:
        if self._engines is None:
            from .documents import Documents
            from .outline import OutlineFetcher
            from .resolver import DefinitionResolver

            self._engines = (
                Documents(self._root, self._settings),
                DefinitionResolver(self._root, self._cache, self._settings),
                OutlineFetcher(self._root, self._cache, self._settings),
            )
        return self._engines

    @property
    def documents(self) -> Documents:
        return self._built()[0]

    @property
    def resolver(self) -> DefinitionResolver:
        return self._built()[1]

    @property
    def outline(self) -> OutlineFetcher:
        return self._built()[2]

    # --- what the map reads -------------------------------------------------------------

    @property
    def version(self) -> int:
        """Changes whenever the symbols or edges a snapshot would return change."""
        if self._engines is None:
            return 0
        return self.resolver.version * 1_000_003 + self.outline.version

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def stats(self) -> dict[str, int]:
        if self._engines is None:
            return {}
        return {**self.resolver.stats, **self.outline.stats}

    def snapshot(self, base: SourceResult) -> SourceResult:
        """What the servers know now about ``base``'s files (nothing is waited for)."""
        if self._engines is None:  # nothing was ever asked: nothing is known
            return SourceResult(tags={}, languages=base.languages, shas=base.shas, resolved={}, details={})
        symbols = {p: t for p, t in self.outline.snapshot().items() if p in base.tags}
        return SourceResult(
            tags=symbols,
            languages=base.languages,
            shas=base.shas,
            resolved=self.resolver.snapshot(),
            details=self.outline.details(),
        )

    def languages_with_servers(self, languages: Iterable[str]) -> list[str]:
        return self.pool.languages_with_servers(set(languages))

    def report(self, language: str) -> ServerReport:
        return self.pool.report(language)

    def sessions(self) -> list[LspSession]:
        return self.pool.sessions()

    # --- work -----------------------------------------------------------------------------

    async def start(
        self,
        base: SourceResult,
        languages: Sequence[str],
        definers: Mapping[str, int],
        generation: int,
        focus: Sequence[str],
        wait: float,
        warm_file: Callable[[str], str | None],
    ) -> None:
        """Start servers, plan work for ``base``; with ``wait`` > 0, wait for it up to that long.

        ``focus``: files whose symbols matter first (those the last map showed, chat files).
        ``warm_file(language)``: a path to open once the language's server is up (tsserver only
        loads the project, and reports progress, after a file is opened).
        """
        deadline = time.monotonic() + wait
        for language in languages:

            def warm(session: LspSession, language: str = language) -> None:
                self._warm(session, warm_file(language))

            self.pool.ensure_started(language, warm)
        if wait > 0:
            await self.pool.wait_ready(list(languages), wait)
        else:
            await self.pool.wait_started(list(languages))
        usable: dict[str, LspSession] = {}
        for language in languages:
            session = self.pool.session(language)
            if session is not None and session.state in (ServerState.READY, ServerState.INDEXING):
                usable[language] = session
        # A map that waits and the background start of the previous one may both get here:
        # the second must see the plan the first one made.
        async with self._plan_lock:
            alive = [s for s in self.pool.sessions() if s.alive]
            self.documents.refresh(base.shas, base.languages, alive)
            self.resolver.refresh(base.shas, base.tags)
            self.outline.refresh(base.shas)
            # Re-plan when the files, the sessions (a restart is a new session), their readiness
            # (incomplete answers are asked again once ready) or the focus changed.
            key = (generation, frozenset((lang, id(s), s.is_ready) for lang, s in usable.items()), tuple(focus))
            self._planned_languages = set(usable)
            if usable and key != self._plan_key:
                jobs = await asyncio.to_thread(self._plan, base, set(usable), definers, focus)
                self._replace_queue(jobs)
                self._plan_key = key
        if wait > 0:
            await self.wait_idle(deadline - time.monotonic())

    def _warm(self, session: LspSession, path: str | None) -> None:
        if path is not None:
            self.documents.ensure_open(session, path)

    def _plan(
        self, base: SourceResult, languages: set[str], definers: Mapping[str, int], focus: Sequence[str]
    ) -> list[_Job]:
        in_scope = [p for p, lang in base.languages.items() if lang in languages and p in base.tags]
        focus_set = [p for p in dict.fromkeys(focus) if base.languages.get(p) in languages and p in base.tags]
        from .resolver import candidate_pairs

        jobs = [_Job("symbols", p) for p in focus_set if self.outline.needs_symbols(p)]
        pairs = candidate_pairs(base.tags, base.languages, definers, languages, self.resolver.done(), self._settings)
        jobs.extend(_Job("definition", path, name, sites) for (path, name), sites in pairs)
        rest = [p for p in in_scope if p not in set(focus_set) and self.outline.needs_symbols(p)]
        limit = max(0, self._settings.lsp_symbol_files - len(focus_set))
        jobs.extend(_Job("symbols", p, critical=False) for p in rest[:limit])
        return jobs

    def request_symbols(self, paths: Iterable[str]) -> int:
        """Queue symbols (at the front) for files that have none yet; returns how many."""
        fresh = [
            p
            for p in dict.fromkeys(paths)
            if self.documents.language(p) in self._planned_languages and self.outline.needs_symbols(p)
        ]
        for path in reversed(fresh):
            self._queue.appendleft(_Job("symbols", path))
            self._queued_critical += 1
        self._kick()
        return len(fresh)

    def request_hovers(self, keys: Iterable[HoverKey]) -> int:
        """Queue hovers (at the front) for shown symbols that have no detail; returns how many."""
        if not self._settings.lsp_hover_per_map:
            return 0
        fresh = [
            k
            for k in dict.fromkeys(keys)
            if self.documents.language(k[0]) in self._planned_languages and self.outline.needs_hover(k)
        ]
        fresh = fresh[: self._settings.lsp_hover_per_map]
        for key in reversed(fresh):
            self._queue.appendleft(_Job("hover", key[0], sites=((key[1], key[2]),)))
            self._queued_critical += 1
        self._kick()
        return len(fresh)

    def _replace_queue(self, jobs: list[_Job]) -> None:
        hovers = [job for job in self._queue if job.kind == "hover"]
        self._queue = deque(hovers + jobs)
        self._queued_critical = sum(1 for job in self._queue if job.critical)
        self._kick()

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

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until every critical job is done, up to ``timeout`` seconds."""
        if timeout > 0 and not self._idle.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout)
        return self._idle.is_set()

    async def _work(self) -> None:
        semaphores: dict[int, asyncio.Semaphore] = {}
        try:
            while self._queue:
                batch: list[_Job] = []
                while self._queue and len(batch) < self._settings.lsp_batch:
                    job = self._queue.popleft()
                    if job.critical:
                        self._queued_critical -= 1
                        self._running_critical += 1
                    batch.append(job)

                async def run(job: _Job) -> None:
                    try:
                        session = self.pool.session(self.documents.language(job.path))
                        if session is None or session.state not in (ServerState.READY, ServerState.INDEXING):
                            return  # planned again at the next map
                        semaphore = semaphores.setdefault(
                            id(session), asyncio.Semaphore(self._settings.lsp_concurrency)
                        )
                        async with semaphore:
                            await self._run(session, job)
                    finally:
                        if job.critical:
                            self._running_critical -= 1
                            self._update_idle()

                await asyncio.gather(*(run(job) for job in batch))
        finally:
            self._update_idle()

    async def _run(self, session: LspSession, job: _Job) -> None:
        if job.kind == "definition":
            await self.resolver.resolve(session, self.documents, (job.path, job.name), job.sites)
        elif job.kind == "symbols":
            await self.outline.fetch_symbols(session, self.documents, job.path)
        elif job.kind == "hover":
            line, col = job.sites[0]
            await self.outline.fetch_hover(session, self.documents, (job.path, line, col))

    async def aclose(self) -> None:
        self._closed = True
        self._queue.clear()
        self._queued_critical = 0
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            with contextlib.suppress(BaseException):
                await self._worker
        await self.pool.aclose()


__all__ = ["LspSource"]
