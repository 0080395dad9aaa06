"""The map engine: what one repository's maps are made from, and one map's passes.

:class:`MapEngine` is the composition root under :class:`~hybridmap.api.repo.AsyncRepoMap`:
one :class:`~hybridmap.workspace.state.Workspace` owns the files, the tree-sitter source is the
base, the refining sources come from ``source_precedence`` (:mod:`hybridmap.sources.registry`),
and a :class:`~hybridmap.pipeline.build.MapBuilder` turns their views into a map. It knows
nothing of requests' policies (when to re-read, when to reuse the last map), the agent's
session or watch mode: those are the API's. Its async methods run on the map's event loop and
are called under the API's lock.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from ..infra.collector import without_collector
from ..languages.registry import LanguageRegistry
from ..model import Diagnostic, FileTags, HoverKey, MapRequest, MapResult, RunningServer, ServerReport
from ..pipeline.build import TIMED_PHASES, BuildRequest, MapBuilder, MapInputs, index_timings, with_details
from ..pipeline.graph.repo_graph import RepoGraph, definer_counts
from ..pipeline.inputs.cochange import CoChangeIndex, imported_history
from ..pipeline.merge import merge_views
from ..pipeline.render.summaries import Summarizer, SummarySource
from ..settings import Settings
from ..sources.base import SourceRequest, SourceView, SymbolSource
from ..sources.lsp.source import LspSource, running_servers
from ..sources.registry import SourceContext, build_sources
from ..sources.static_index import TreeSitterSource
from ..store.cache import Cache
from ..store.shared import open_shared_store
from ..workspace.diff import read_change
from ..workspace.state import ChangeSet, Notice, Progress, Snapshot, Workspace
from .kept import KeptForNextProcess


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """How an engine is put together, besides the root and its settings (the API's constructor
    arguments, passed through)."""

    progress: Progress | None = None
    start_servers: bool = True
    environ: Mapping[str, str] | None = None
    token_counter: Callable[[str], int] | None = None
    summarizer: Summarizer | None = None
    notice: Notice | None = None
    one_shot: bool = False
    """The map is opened for one request and closed (the CLI without its daemon): tags are
    decoded when read, and a static graph is taken from and left for the next such process
    (``persist_graph``)."""


class MapEngine:
    """Owns the cache, the workspace, the sources, the token counter, the builder and the
    co-change history of one root; builds maps of a snapshot."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        registry: LanguageRegistry,
        notes: Sequence[Diagnostic],
        options: EngineOptions,
    ) -> None:
        self.root = root
        self.settings = settings
        self._notes = list(notes)
        """Said on every map: the repository's settings file had keys we left out, sources that
        could not be built."""
        self.cache = _open_cache(settings, options.environ, self._notes)
        self._progress = options.progress
        self._workspace = Workspace(root, settings, registry, options.notice)
        self._kept = KeptForNextProcess(root, settings, self.cache)
        self._states_loaded = False
        """Whether the first refresh has loaded the kept states (there, in its worker thread: a
        large repository's take half a second, not for the caller's event loop)."""
        kept_keys = self._kept.keys_reader() if options.one_shot else None
        self._base = TreeSitterSource(registry, self.cache, settings, lazy_tags=options.one_shot, kept_keys=kept_keys)
        context = SourceContext(root, settings, registry, self.cache, options.environ, options.start_servers)
        self._sources, problems = build_sources(context)
        self._notes.extend(problems)
        # Counts of lines already seen are in the cache (pack.py); the encoding itself (~0.24 s of
        # CPU) loads in the background for a long-lived map or a cold cache (while the first index
        # is built), and on first need only for a one-shot call on a warm cache.
        from ..pipeline.pack.tokens import make_counter

        try:
            self.counter = make_counter(settings.encoding, self.cache, options.token_counter)
        except BaseException:
            self.cache.close()  # nothing else holds a resource yet
            raise
        if options.start_servers or not self.counter.has_stored_counts():
            _Background(self.counter.preload)
        summaries = SummarySource(options.summarizer, self.cache, self._workspace.read)
        kept_lexicon, kept_graph = self._kept.lexicon_reader(), self._kept.graph_reader() if options.one_shot else None
        conventions = registry.visibility_conventions()
        # A one-shot process that starts no server builds its map once; with servers, a follow-up
        # (their answers for the shown files) builds it again, patching what the first build kept.
        one_build = options.one_shot and not options.start_servers
        self.builder = MapBuilder(settings, self.counter, conventions, summaries, kept_lexicon, kept_graph, one_build)
        self._history = (
            CoChangeIndex(root, settings, partial(imported_history, self.cache, root))
            if _co_change_on(settings)
            else None
        )
        self._focus: tuple[str, ...] = ()
        """Files whose answers matter first: the last map's files and chat files."""
        self.changes = ChangeSet()
        """What the last refresh changed, until the sources are told of it."""
        self._definer_key: tuple[int, int] = (0, -1)
        self._definer_counts: dict[str, int] = {}
        self._releasing: asyncio.Future[None] | None = None
        """The last build's replaced graphs being let go of in a worker thread (kept: a future
        nobody holds may be collected before it runs)."""
        self.hybrid_used = False
        """A hybrid map has run: only then do file events reach the sources (and start servers)."""
        self.mapped_versions: tuple[tuple[str, int], ...] | None = None
        """The sources' versions the last hybrid map was built on (a new tuple per map)."""

    @property
    def snapshot(self) -> Snapshot:
        """The workspace's last snapshot (empty before the first refresh)."""
        return self._workspace.snapshot

    @property
    def lsp(self) -> LspSource | None:
        """The language-server source, when ``source_precedence`` has it."""
        return next((s for s in self._sources if isinstance(s, LspSource)), None)

    def view(self, snapshot: Snapshot) -> SourceView:
        """The base (tree-sitter) view of ``snapshot``."""
        return self._base.view(snapshot)

    async def aclose(self) -> None:
        """Shut every source down (servers: whole process trees), keep the files' states for the
        next process, then close the cache."""
        for source in self._sources:
            await source.aclose()
        builder = self.builder
        await self._kept.save(
            self._workspace.snapshot.files, builder.lexicon_to_keep, builder.graph_to_keep, self._base.keys_to_keep
        )
        self.cache.close()

    async def refresh(self, named: frozenset[str] = frozenset()) -> Snapshot:
        """The new snapshot, parsed by the base source (in a worker thread); what changed is kept in
        :attr:`changes` without the bytes read (only the parse reads them; held, 313 MB at 100k files).
        ``named`` (a watch's batch): only those paths looked at when the workspace can tell."""

        def index() -> Snapshot:
            if not self._states_loaded:
                self._states_loaded = True
                self._workspace.known = self._kept.states()
            by_path = self._workspace.refresh_paths(named) if named else None
            snapshot, changes = by_path if by_path is not None else self._workspace.refresh(self._progress)
            self._kept.files_read += int(snapshot.stats.get("files_read", 0))
            self._base.index(snapshot, changes, self._progress)
            self.changes = replace(changes, contents={})
            if self._history is not None:
                self._history.refresh()  # reads git only when HEAD moved
            return snapshot

        # The collector held off: a large index is millions of objects (infra/collector.py).
        return await asyncio.to_thread(without_collector, self.settings.pause_cycle_collector, index)

    async def keep_snapshot(self) -> Snapshot:
        """The last snapshot stands (the refresh policy said so): nothing changed to tell. When
        the last index left files out (its parse deadline), it runs again on the same snapshot:
        what a background parse stored comes from the cache, and the deadline settles more."""
        self.changes = ChangeSet()
        snapshot = self._workspace.snapshot
        if self._base.deferred:
            paused = self.settings.pause_cycle_collector
            await asyncio.to_thread(without_collector, paused, self._base.index, snapshot, ChangeSet(), self._progress)
        return snapshot

    @property
    def parse_left(self) -> int:
        """Files the last index's parse deadline left out."""
        return len(self._base.deferred)

    def parse_deferred(self, stop: threading.Event) -> int:
        """In a worker thread: parse what the last index left out, into the cache only
        (:meth:`TreeSitterSource.parse_deferred`); how many were stored."""
        return self._base.parse_deferred(self._workspace.snapshot, stop)

    async def tell_sources(self, snapshot: Snapshot) -> None:
        """Hand a refresh's changes to sources already in use (servers hear of them now, not at
        the next map); sources no hybrid map has used yet are not started by a file event."""
        if not self.hybrid_used:
            return
        base = self._base.view(snapshot)
        wanted = SourceRequest(0.0, self._focus, self._definers(base), base.version)
        for source in self._sources:
            await source.update(snapshot, self.changes, base, wanted)
        self.changes = ChangeSet()

    def source_versions(self) -> tuple[tuple[str, int], ...]:
        """Each refining source's version: what it knows, counted (a map is reused while none moves)."""
        snapshot = self._workspace.snapshot
        out = []
        for source in self._sources:
            version = getattr(source, "version", None)
            if version is None:
                version = source.view(snapshot, self._base.view(snapshot)).version
            out.append((source.name, int(version)))
        return tuple(out)

    def reused(self, result: MapResult, snapshot: Snapshot, build: BuildRequest, started: float) -> MapResult:
        """The last map again (nothing it was built from moved), with this call's counters."""
        base = self._base.view(snapshot)
        stats = dict(result.stats)
        for source in (snapshot.stats, base.stats):
            stats.update({k: float(v) for k, v in source.items() if k not in TIMED_PHASES})
        stats["map_reused"] = 1.0
        stats["graph_rebuilt"] = stats["graph_patched"] = stats["graph_adopted"] = 0.0  # no graph made for this call
        timings = index_timings(snapshot, base)
        timings["total"] = time.perf_counter() - started
        # What went wrong since (the cache's words: say, a shared store that failed under
        # background lookups) is said on this map, not lost with the one it repeats.
        return self._with_cache_words(replace(result, changes=build.changes, stats=stats, timings=timings))

    def _with_cache_words(self, result: MapResult) -> MapResult:
        """``result`` saying what went wrong in the cache since the last map: events (a shared
        store that failed, entries dropped), said once, taken by the engine alone at the end of a
        map (a view may be replaced by a later index, a build by a rebuild after a wait)."""
        news = [d for d in self.cache.take_diagnostics() if d not in result.diagnostics]
        return replace(result, diagnostics=(*result.diagnostics, *news)) if news else result

    async def with_change(self, build: BuildRequest, revision: str | None) -> BuildRequest:
        """``build`` with the working tree's change since ``revision`` for a map of a change (read
        at every map, in a worker thread: a commit moves it without a file event)."""
        if revision is None:
            return build
        return replace(build, change=await asyncio.to_thread(read_change, self.root, revision, self.settings))

    async def prepared(self, request: MapRequest, build: BuildRequest, snapshot: Snapshot) -> MapInputs:
        """What a map of ``snapshot`` would be built from, its sources told and waited for as
        :meth:`map` does, without building it (a map over several roots joins these); the
        sources then work on in the background for the next."""
        base = self._base.view(snapshot)
        sources = self._sources if request.mode == "hybrid" else []
        self.hybrid_used |= bool(sources)
        wanted = SourceRequest(
            request.server_wait, build.chat + self._focus, self._definers(base, bool(sources)), base.version
        )
        for source in sources:
            await source.update(snapshot, self.changes, base, wanted)
        inputs = self._inputs(snapshot, base, sources)
        for source in sources:
            source.after_map(snapshot, base, wanted, [])
        return replace(inputs, notes=(*inputs.notes, *self.cache.take_diagnostics()))

    async def map(
        self, request: MapRequest, build: BuildRequest, snapshot: Snapshot, started: float
    ) -> tuple[MapResult, RepoGraph]:
        """One map of ``snapshot`` and the graph it was ranked on."""
        base = self._base.view(snapshot)
        hybrid = request.mode == "hybrid"
        sources = self._sources if hybrid else []
        self.hybrid_used |= hybrid
        deadline = time.monotonic() + request.server_wait
        wanted = SourceRequest(
            request.server_wait, build.chat + self._focus, self._definers(base, bool(sources)), base.version
        )
        t = time.perf_counter()
        for source in sources:
            await source.update(snapshot, self.changes, base, wanted)
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
        result = self._with_cache_words(result)
        result.timings.update(index_timings(snapshot, base))
        result.timings["servers"] = waited
        result.timings["total"] = time.perf_counter() - started
        if hybrid:
            self.mapped_versions = self.source_versions()
        graph = self.builder.graph
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
        built = await asyncio.to_thread(
            without_collector, self.settings.pause_cycle_collector, self.builder.build, inputs, build
        )
        retired = self.builder.take_retired()
        if retired:  # let go of the replaced graphs in a worker thread, after this map
            self._releasing = asyncio.get_running_loop().run_in_executor(None, retired.clear)
        return built

    def _inputs(self, snapshot: Snapshot, base: SourceView, sources: Sequence[SymbolSource]) -> MapInputs:
        servers: dict[str, ServerReport] = {}
        notes: list[Diagnostic] = []
        languages = sorted(set(snapshot.languages.values())) if sources else []
        for source in sources:
            for language, report in source.reports(languages).items():
                servers.setdefault(language, report)
            notes.extend(source.health())
        said = any(d.kind == "cache_unavailable" for d in self.cache.diagnostics)  # the cache's own words
        if self.settings.use_cache and not self.cache.persistent and not said:
            where = str(self.settings.resolved_cache_dir())
            notes.append(Diagnostic(where, "cache_unavailable", "running without a disk cache"))
        notes.extend(self._notes)
        views = tuple(source.view(snapshot, base) for source in sources)
        history = self._history.current if self._history is not None else None
        if history is not None and history.problem:
            notes.append(Diagnostic(".", "co_change_off", history.problem))
        return MapInputs(snapshot, base, views, servers, tuple(notes), history)

    def _definers(self, base: SourceView, asked: bool = True) -> dict[str, int]:
        """identifier -> files defining it, for the sources; none when no source is ``asked``
        (a static map: the pass over every symbol was 1.2 s of a one-shot map at 100,000 files)."""
        if not asked:
            return {}
        if self._definer_key != (id(base.tags), base.version):
            self._definer_counts = definer_counts(base.tags)
            self._definer_key = (id(base.tags), base.version)
        return self._definer_counts

    def running_servers(self) -> tuple[RunningServer, ...]:
        """The language-server processes alive now, by server and root."""
        return running_servers(self.lsp.sessions(), self.root) if self.lsp is not None else ()

    def tags(self) -> Mapping[str, FileTags]:
        """The tree-sitter tags of the last index, by path."""
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


def _open_cache(settings: Settings, environ: Mapping[str, str] | None, notes: list[Diagnostic]) -> Cache:
    """The disk cache (none when ``use_cache`` is off) with the shared store the settings name;
    what went wrong opening the store is added to ``notes``."""
    shared, problems = (
        open_shared_store(settings, os.environ if environ is None else environ) if settings.use_cache else (None, [])
    )
    notes.extend(problems)
    return Cache(
        settings.resolved_cache_dir() if settings.use_cache else None,
        settings.cache_size_limit,
        settings.cache_timeout_seconds,
        settings.memory_cache_entries,
        shared,
    )


def _co_change_on(settings: Settings) -> bool:
    return settings.co_change_personalization > 0 or settings.co_change_boost > 0
