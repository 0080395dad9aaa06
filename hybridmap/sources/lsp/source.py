"""The language-server symbol source: what the servers know now, and work to learn more.

:class:`LspSource` implements :class:`~hybridmap.sources.base.SymbolSource`. It owns the
server pool, the work queue and everything asked of the servers, and it never makes a map
wait unless the map asks to (``server_wait``):

- :meth:`update` (before a map that waits) starts the servers of the languages present,
  tells live servers what changed on disk, and plans the work, most useful first: symbols of
  the focus files (chat files, the last map's files), then definitions at ambiguous
  references, then symbols of every other file; then it waits up to the map's wait;
- :meth:`after_map` (after a map that did not wait) starts all that in the background, a
  short delay later, so the map costs what a static one does and the next map uses what the
  servers found;
- :meth:`follow_up` asks for the symbols of the files a map showed and hovers for the
  symbols it left undescribed, while the map's wait lasts;
- :meth:`view` returns what is known *now*: server symbols per file, resolved pairs, hover
  details, for the merge.

A long-lived map keeps resolving between calls, so each later map uses more.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...languages.notebooks import is_notebook
from ...languages.registry import LanguageRegistry
from ...model import (
    NOT_STARTED_ONE_SHOT,
    Diagnostic,
    FileTags,
    HoverKey,
    Pair,
    RunningServer,
    ServerReport,
    ServerState,
)
from ...settings import Settings
from ...store.cache import Cache
from ..base import SourceRequest, SourceView
from .pool import ServerPool
from .work import Job, WorkQueue

if TYPE_CHECKING:  # imported when the first server starts: they import lsprotocol (~0.3 s)
    from ...workspace.state import ChangeSet, Snapshot
    from .documents import Documents
    from .outline import OutlineFetcher
    from .resolver import DefinitionResolver
    from .session import LspSession


class LspSource:
    name = "lsp"

    def __init__(
        self,
        registry: LanguageRegistry,
        root: Path,
        cache: Cache,
        settings: Settings,
        environ: Mapping[str, str] | None = None,
        start_servers: bool = True,
    ) -> None:
        self._settings = settings
        self._root = root
        self._cache = cache
        self._start_servers = start_servers
        """False for a one-shot call that does not wait: no server is started at all."""
        self.pool = ServerPool(registry, root, settings, environ)
        self._language_ids = registry.lsp_language_ids()
        self._engines: tuple[Documents, DefinitionResolver, OutlineFetcher] | None = None
        self._queue = WorkQueue(settings, self._session_for, self._run)
        self._plan_lock = asyncio.Lock()
        self._plan_key: object = None
        self._planned_languages: set[str] = set()
        """Languages whose server was usable at the last plan: only they get jobs."""
        self._pending_start: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    # --- the parts that speak to servers, built when first needed ---------------------------

    def _built(self) -> tuple[Documents, DefinitionResolver, OutlineFetcher]:
        if self._engines is None:
            from .documents import Documents
            from .outline import OutlineFetcher
            from .resolver import DefinitionResolver

            self._engines = (
                Documents(self._root, self._settings, self._language_ids),
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
        """Changes whenever the symbols or edges a view would return change."""
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

    def view(self, snapshot: Snapshot, base: SourceView) -> SourceView:
        """What the servers know now about ``base``'s files (nothing is waited for)."""
        if self._engines is None:  # nothing was ever asked: nothing is known
            return SourceView(self.name, stats=self._stats({}, {}))
        shas = snapshot.shas  # answers about this text only: a map that does not wait comes first
        symbols = {p: t for p, t in self.outline.snapshot(shas).items() if p in base.tags}
        resolved = self.resolver.snapshot(shas)
        return SourceView(
            self.name,
            symbols,
            resolved,
            self.outline.details(shas),
            diagnostics=resolved_nothing(self.resolver, self.pool.sessions(), snapshot.languages),
            stats=self._stats(symbols, resolved),
            version=self.version,
        )

    def _stats(self, symbols: Mapping[str, FileTags], resolved: Mapping[Any, Any]) -> dict[str, float]:
        return {
            "lsp_resolved_pairs": float(len(resolved)),
            "lsp_pending_jobs": float(self.pending),
            "lsp_symbol_files_known": float(len(symbols)),
            **{f"lsp_{k}": float(v) for k, v in self.stats.items()},
        }

    def languages_with_servers(self, languages: Iterable[str]) -> list[str]:
        return self.pool.languages_with_servers(set(languages))

    def report(self, language: str) -> ServerReport:
        return self.pool.reports.report(language)

    def reports(self, languages: Sequence[str]) -> dict[str, ServerReport]:
        """The state of the server of each of ``languages`` that has one configured."""
        with_servers = self.languages_with_servers(languages)
        if not self._start_servers and not self.sessions():
            return dict.fromkeys(with_servers, ServerReport(ServerState.DISABLED, None, None, NOT_STARTED_ONE_SHOT))
        reports = {}
        for language in with_servers:
            report = self.pool.reports.report(language)
            if report.state is ServerState.DISABLED and self._start_servers and report.detail == "not started":
                report = ServerReport(ServerState.STARTING, None, None, "starts after this map (server wait 0)")
            reports[language] = report
        return reports

    def health(self) -> list[Diagnostic]:
        """Servers alive but timing out, garbling, or never ready."""
        out = []
        for session in self.pool.sessions():
            if session.alive and (health := session.health()):
                out.append(Diagnostic(session.language, "server_degraded", f"{session.config.name}: {health}"))
        out.extend(self.pool.reports.root_diagnostics())  # project roots failed or held back by lsp_max_servers
        return out

    def sessions(self) -> list[LspSession]:
        return self.pool.sessions()

    # --- the map's calls --------------------------------------------------------------------

    async def update(self, snapshot: Snapshot, changes: ChangeSet, base: SourceView, request: SourceRequest) -> None:
        """Before a map that waits: start servers, plan, and wait up to ``request.wait``."""
        if request.wait > 0:
            await self.start(snapshot, base, request)

    async def follow_up(self, shown: Sequence[str], undescribed: Sequence[HoverKey], deadline: float) -> bool:
        """Symbols of the shown files, hovers of undescribed symbols, until ``deadline``."""
        if self._engines is None:
            return False
        version = self.version
        details = len(self.outline.details())
        asked = self.request_symbols(shown) + self.request_hovers(undescribed)
        if not asked or not await self._queue.wait_idle(deadline - time.monotonic()):
            return False
        return self.version != version or len(self.outline.details()) != details

    def after_map(
        self, snapshot: Snapshot, base: SourceView, request: SourceRequest, undescribed: Sequence[HoverKey] = ()
    ) -> None:
        """After a map that did not wait: servers start and work a short delay later (a sync
        caller takes its result before the loop spawns processes)."""
        if request.wait > 0 or not self._start_servers or self._closed:
            return
        if self._pending_start is not None:
            self._pending_start.cancel()

        async def later() -> None:
            await self.start(snapshot, base, request)
            self.request_hovers(undescribed)

        self._pending_start = asyncio.get_running_loop().call_later(
            self._settings.server_start_delay, lambda: self._background(later())
        )

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- work -----------------------------------------------------------------------------

    async def start(self, snapshot: Snapshot, base: SourceView, request: SourceRequest) -> None:
        """Start servers, plan work for ``base``; with ``request.wait`` > 0, wait for it up to that long."""
        deadline = time.monotonic() + request.wait
        # One server per (language, project root), the roots a map needs most first, at most
        # lsp_max_servers of them (pool.select); each job goes to its file's root (_session_for).
        found = self.pool.assign(snapshot.languages)
        languages = sorted({language for language, _ in found})
        for language, root in self.pool.select(found, request.focus):
            # tsserver loads the project, and reports progress, only once a file is open: the
            # root's file with most references.
            paths = [p for p in found[(language, root)] if p in base.tags]
            first = max(paths, key=lambda p: len(base.tags[p].ref_names), default=None)

            def warm(session: LspSession, first: str | None = first) -> None:
                self._warm(session, first)

            self.pool.ensure_started(language, warm, root)
        if request.wait > 0:
            # Work starts for each server as it gets ready: one that is slow or never answers
            # (a Solidity server waiting on initialize) must not hold the others' jobs back.
            waiting = self.pool.readiness(languages, request.wait)
            while waiting and deadline > time.monotonic():
                done, waiting = await asyncio.wait(
                    waiting, timeout=deadline - time.monotonic(), return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    break
                await self._plan_usable(snapshot, base, found, request)
            for task in waiting:
                task.cancel()
            await self._plan_usable(snapshot, base, found, request)  # no-op when nothing moved
            await self._queue.wait_idle(deadline - time.monotonic())
        else:
            await self.pool.wait_started(languages)
            await self._plan_usable(snapshot, base, found, request)

    async def _plan_usable(
        self, snapshot: Snapshot, base: SourceView, found: Mapping[tuple[str, str], Any], request: SourceRequest
    ) -> None:
        """Plan the jobs of the servers usable now (ready or indexing); re-plans only when they,
        the files or the focus changed since the last plan."""
        usable: dict[tuple[str, str], LspSession] = {}
        for where in found:
            session = self.pool.session(*where)
            if session is not None and session.state in (ServerState.READY, ServerState.INDEXING):
                usable[where] = session
        # A map that waits and the background start of the previous one may both get here:
        # the second must see the plan the first one made.
        async with self._plan_lock:
            alive = [s for s in self.pool.sessions() if s.alive]
            self.documents.refresh(snapshot.shas, snapshot.languages, alive)
            self.resolver.refresh(snapshot.shas, base.tags)
            self.outline.refresh(snapshot.shas)
            # Re-plan when the files, the sessions (a restart is a new session), their readiness
            # (incomplete answers are asked again once ready) or the focus changed.
            sessions = frozenset((where, id(s), s.is_ready) for where, s in usable.items())
            key = (request.generation, sessions, request.focus)
            self._planned_languages = {language for language, _ in usable}
            if usable and key != self._plan_key:
                jobs = await asyncio.to_thread(
                    plan_jobs,
                    snapshot,
                    base,
                    set(self._planned_languages),
                    request,
                    self.outline.settled(),
                    self.resolver.done(),
                    self._settings,
                )
                self._queue.replace(jobs)
                self._plan_key = key

    def _warm(self, session: LspSession, path: str | None) -> None:
        if path is not None:
            self.documents.ensure_open(session, path)

    def request_symbols(self, paths: Iterable[str]) -> int:
        """Queue symbols (at the front) for files that have none yet; returns how many."""
        fresh = [
            p
            for p in dict.fromkeys(paths)
            if self.documents.language(p) in self._planned_languages and self.outline.needs_symbols(p)
        ]
        self._queue.push_front([Job("symbols", path) for path in fresh])
        return len(fresh)

    def request_hovers(self, keys: Iterable[HoverKey]) -> int:
        """Queue hovers (at the front) for shown symbols that have no detail; returns how many."""
        if not self._settings.lsp_hover_per_map or self._engines is None:
            return 0
        fresh = [
            k
            for k in dict.fromkeys(keys)
            if self.documents.language(k[0]) in self._planned_languages and self.outline.needs_hover(k)
        ]
        fresh = fresh[: self._settings.lsp_hover_per_map]
        self._queue.push_front([Job("hover", key[0], sites=((key[1], key[2]),)) for key in fresh])
        return len(fresh)

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until every critical job is done, up to ``timeout`` seconds."""
        return await self._queue.wait_idle(timeout)

    def _session_for(self, path: str) -> LspSession | None:
        """The server of the file's language in its project root (None: none runs there now;
        the job is planned again at the next map)."""
        return self.pool.session_for(path, self.documents.language(path))

    async def _run(self, session: LspSession, job: Job) -> None:
        if job.kind == "definition":
            await self.resolver.resolve(session, self.documents, (job.path, job.name), job.sites)
        elif job.kind == "symbols":
            await self.outline.fetch_symbols(session, self.documents, job.path)
        elif job.kind == "hover":
            line, col = job.sites[0]
            await self.outline.fetch_hover(session, self.documents, (job.path, line, col))

    async def aclose(self) -> None:
        self._closed = True
        if self._pending_start is not None:
            self._pending_start.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._queue.aclose()
        await self.pool.aclose()


__all__ = ["LspSource"]


#: Answered (file, name) pairs, none reaching a repository file, before a language's hybrid
#: map is said to be its static map (one or two can honestly all be outside: stdlib names).
RESOLVED_NOTHING_MIN = 3


def resolved_nothing(
    resolver: DefinitionResolver, sessions: Iterable[LspSession], languages: Mapping[str, str]
) -> tuple[Diagnostic, ...]:
    """``hybrid_resolved_nothing`` for each language whose server answered at least
    :data:`RESOLVED_NOTHING_MIN` ambiguous names and resolved none to a repository file: its
    part of the hybrid map is the static map, and the user should know."""
    outcome = resolver.outcome(languages)
    servers: dict[str, set[str]] = {}
    for session in sessions:
        servers.setdefault(session.language, set()).add(session.config.name)
    out = []
    for language, (answered, found) in sorted(outcome.items()):
        if found or answered < RESOLVED_NOTHING_MIN:
            continue
        names = ", ".join(sorted(servers.get(language, ()))) or "its server"
        out.append(
            Diagnostic(
                language,
                "hybrid_resolved_nothing",
                f"{names} was asked {answered} ambiguous name(s) and resolved none to a file in the "
                f"repository: the {language} part of this hybrid map is the static map",
            )
        )
    return tuple(out)


def plan_jobs(
    snapshot: Snapshot,
    base: SourceView,
    languages: set[str],
    request: SourceRequest,
    outlined: frozenset[str],
    done: set[Pair],
    settings: Settings,
) -> list[Job]:
    """The jobs for these languages: symbols of the focus files (not in ``outlined``: files
    whose symbols the servers gave for their current text), definitions of the ambiguous uses
    (not in ``done``: pairs answered for it), then symbols of other files up to
    ``lsp_symbol_files``. Reads only what it is given, copies taken on the loop that writes the
    answers: it runs in a worker thread, and iterating the live answers there raced them."""
    langs = snapshot.languages
    in_scope = [p for p, lang in langs.items() if lang in languages and p in base.tags and not is_notebook(p)]
    focus = [
        p for p in dict.fromkeys(request.focus) if langs.get(p) in languages and p in base.tags and not is_notebook(p)
    ]
    from .resolver import candidate_pairs

    jobs = [Job("symbols", p) for p in focus if p not in outlined]
    pairs = candidate_pairs(base.tags, langs, request.definers, languages, done, settings)
    jobs.extend(Job("definition", path, name, sites) for (path, name), sites in pairs)
    focus_set = set(focus)
    rest = [p for p in in_scope if p not in focus_set and p not in outlined]
    limit = max(0, settings.lsp_symbol_files - len(focus))
    jobs.extend(Job("symbols", p, critical=False) for p in rest[:limit])
    return jobs


def running_servers(sessions: Iterable[LspSession], root: Path) -> tuple[RunningServer, ...]:
    """Those of ``sessions`` whose server process is alive now, by server and project root
    (relative to ``root``)."""
    out = []
    for session in sessions:
        if session.alive:
            where = session.root.relative_to(root).as_posix() if session.root != root else "."
            out.append(RunningServer(session.language, session.config.name, where, session.pid, session.state))
    return tuple(sorted(out, key=lambda s: (s.server, s.root, s.language)))
