"""The live side of one :class:`~hybridmap.api.repo.AsyncRepoMap`: when the repository is
re-read (the ``refresh`` policy and what it remembers between calls), the watch, the
listeners, the last result (reused while nothing moved) and the poller that says when the
sources' answers improved.

Its async methods are called under the API's lock (the watch's batches take it themselves).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable, Hashable
from pathlib import Path

from ..errors import RootError
from ..model import MapRequest, MapResult
from ..pipeline.build import BuildRequest, MapInputs
from ..settings import Settings
from ..workspace.live import EventHub, LiveEvent, Watcher
from ..workspace.state import Snapshot
from ..workspace.walk import directories_of
from .engine import MapEngine

log = logging.getLogger("hybridmap.live")

#: Seconds after a map before what its parse deadline left out is parsed in the background: a
#: one-shot call (the CLI) has closed its map by then, and starts no such work.
BACKGROUND_PARSE_DELAY = 1.0


class LiveState:
    """Decides when a call re-reads the repository, and follows it between calls."""

    def __init__(self, root: Path, settings: Settings, engine: MapEngine, lock: asyncio.Lock) -> None:
        self._root = root
        self._settings = settings
        self._engine = engine
        self._lock = lock
        """The API's lock: a watch batch re-reads under it, like a map."""
        self._closed = False
        self.hub = EventHub()
        self.dirty: set[str] = set()
        """Paths edited (events, watch) since the last read."""
        self.never_read = True
        self.refreshed = False
        """Whether the last map re-read the repository (its ``stats.map_refreshed``)."""
        self._last_chat: tuple[str, ...] | None = None
        self._last_result: tuple[Hashable, MapResult] | None = None
        self._watcher: Watcher | None = None
        self._poller: asyncio.Task[None] | None = None
        self._map_seen: tuple[tuple[str, int], ...] | None = None
        """The engine's :attr:`~MapEngine.mapped_versions` the poller last saw."""
        self._known: tuple[tuple[str, int], ...] = ()
        """The versions improvements are counted from."""
        self._parsing: asyncio.Task[None] | None = None
        """The background parse of what a parse deadline left out."""
        self._stop_parsing = threading.Event()
        self._parse_thread: asyncio.Future[int] | None = None

    # --- when to re-read ------------------------------------------------------------------

    async def refresh(self, named: frozenset[str] = frozenset()) -> Snapshot:
        """Re-read the repository now: only ``named`` (a watch's batch) when those are all that
        moved and the workspace can tell, else the whole tree."""
        self.dirty.clear()
        self.never_read = False
        snapshot = await self._engine.refresh(named)
        if self._engine.changes.added or self._engine.changes.removed:
            self._listing_moved()
        return snapshot

    async def synced(self) -> bool:
        """Called before the API's lock is taken (a sync's batch takes it): whether the watch has
        caught up with every file event made before this call (``watch_sync_ms``; its batch was
        re-read). With ``watch_sync_ms`` 0, a watch in place is trusted as it stands."""
        if self._watcher is None or not self.watching or self._settings.refresh in ("always", "manual"):
            return False
        if self._settings.watch_sync_ms == 0:
            return True
        return await self._watcher.sync(self._settings.watch_sync_ms / 1000)

    async def snapshot_for_map(self, chat: tuple[str, ...], synced: bool) -> Snapshot:
        """The snapshot a map is built on, re-read or not by the ``refresh`` policy; ``synced`` is
        :meth:`synced`'s answer for this call."""
        policy = self._settings.refresh
        # A watch that caught up has already re-read every saved edit: ``auto`` then reads nothing
        # (a watch that stopped, on an inotify limit say, or did not catch up in time is not trusted).
        trusted_watch = policy == "auto" and synced and self.watching and not self.dirty
        wanted = (
            self.never_read
            or policy == "always"
            or (policy == "auto" and not trusted_watch)
            or (policy == "files" and (bool(self.dirty) or chat != self._last_chat))
        )
        self._last_chat = chat
        self.refreshed = wanted
        return await self.refresh() if wanted else await self._engine.keep_snapshot()

    async def prepared(self, request: MapRequest, build: BuildRequest) -> MapInputs:
        """A map's inputs for a map over several roots: the snapshot as the refresh policy says,
        the sources told (:meth:`MapEngine.prepared`), under the map's lock."""
        synced = await self.synced()
        async with self._lock:
            snapshot = await self.snapshot_for_map(build.chat, synced)
            return await self._engine.prepared(request, build, snapshot)

    async def snapshot_for_lookup(self, synced: bool) -> Snapshot:
        """The snapshot a lookup answers from: re-read unless the ``refresh`` policy (``manual``, a
        watch that caught up: ``synced``) says the last one stands; running servers are told of
        what moved."""
        trusted_watch = synced and self.watching and not self.dirty
        if self.never_read or (self._settings.refresh != "manual" and not trusted_watch):
            await self._engine.tell_sources(await self.refresh())
        return self._engine.snapshot

    # --- the last result ------------------------------------------------------------------

    def last_result(self, key: Hashable) -> MapResult | None:
        """The last map, when it was kept under ``key`` (nothing it was built from moved since)."""
        if self._last_result is not None and self._last_result[0] == key:
            return self._last_result[1]
        return None

    def keep_result(self, key: Hashable, result: MapResult | None) -> None:
        """Remember ``result`` for reuse (None: forget the last one)."""
        self._last_result = None if result is None else (key, result)

    def after_map(self, key: Hashable, result: MapResult | None) -> None:
        """A map was built: keep it for reuse (None: not reusable), unless its parse deadline left
        files out (the next map has more of them), which are then parsed in the background."""
        if self._engine.parse_left:
            result = None
            self.parse_in_background()
        self.keep_result(key, result)

    # --- the watch ------------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        """A watch is in place (started and ready): only then may a map trust it over a re-read."""
        return self._watcher is not None and self._watcher.running and self._watcher.ready.is_set()

    async def watch(self) -> None:
        """Start watching the root (once) and return when the watch is in place; RootError when
        it stopped before (an inotify limit, say: maps then re-read the tree, as unwatched). A map
        that never read the tree reads it first, so that the watch starts on every directory
        instead of being set up again after the first map (maps list the tree meanwhile)."""
        if self.never_read:  # the watch covers the listed files' directories: list them first
            async with self._lock:
                if self.never_read:
                    await self.refresh()
        watcher = self._watcher
        started = watcher is None or not watcher.running
        if watcher is None or started:
            await self.unwatch()  # one that stopped by itself: its marker directory goes too
            debounce = self._settings.watch_debounce_ms
            watcher = self._watcher = Watcher(self._root, debounce, self._on_batch, self._watched_directories)
            watcher.start()
        if not await watcher.wait_in_place():
            raise RootError(f"cannot watch the repository: {watcher.error or 'the watch stopped'}")
        if started:
            # An edit made after the last read and before the watch was in place raised no event:
            # the tree is read once more now that it is, as after an empty batch (a listing and a
            # stat of each file; the daemon starts its watch between calls, so no call waits).
            await self._on_batch(frozenset())

    async def unwatch(self) -> None:
        if self._watcher is not None:
            await self._watcher.aclose()
            self._watcher = None

    async def _on_batch(self, paths: frozenset[str]) -> None:
        """The watch saw ``paths`` change: re-read now (unless ``manual``), tell the servers, and
        the listeners."""
        self.dirty |= paths
        moved: frozenset[str] = frozenset()
        if self._settings.refresh != "manual" and not self._closed:
            async with self._lock:
                # Only the batch's paths, unless something else is dirty too (an API event).
                snapshot = await self.refresh(paths if self.dirty <= paths else frozenset())
                moved = self._engine.changes.touched  # a new directory's files, not only what was watched
                await self._engine.tell_sources(snapshot)
        if paths or moved:  # an empty batch is the watcher's re-read after it moved: often nothing
            self.hub.publish(LiveEvent("files_changed", tuple(sorted(paths | moved))))

    def _listing_moved(self) -> None:
        """A re-read added or removed files: the watch re-checks which directories it covers."""
        if self._watcher is not None:
            self._watcher.listing_moved()

    def _watched_directories(self) -> frozenset[str]:
        """The directories of the listed files (and their parents): what the watch covers."""
        snapshot = self._engine.snapshot
        return frozenset(directories_of((*snapshot.files, *snapshot.special_files)))

    # --- what the parse deadline left -----------------------------------------------------

    def parse_in_background(self) -> None:
        """After a map whose parse deadline left files out: parse them in the background, so the
        next map has them, and tell listeners (``answers_improved`` from ``tree-sitter``). It
        starts after ``BACKGROUND_PARSE_DELAY`` seconds: a one-shot call has closed by then."""
        if self._closed or not self._engine.parse_left or (self._parsing is not None and not self._parsing.done()):
            return
        self._parsing = asyncio.get_running_loop().create_task(self._parse_left(), name="hybridmap-parse-left")

    async def _parse_left(self) -> None:
        await asyncio.sleep(BACKGROUND_PARSE_DELAY)
        self._parse_thread = asyncio.ensure_future(asyncio.to_thread(self._engine.parse_deferred, self._stop_parsing))
        try:
            stored = await asyncio.shield(self._parse_thread)
        except Exception:
            log.exception("the background parse failed")
            return
        if stored and not self._closed:
            self.hub.publish(LiveEvent("answers_improved", sources=("tree-sitter",)))

    async def _stop_parse(self) -> None:
        """Stop a background parse: cancelled while it waits to start; once its thread runs (a
        thread cannot be cancelled, and must not write to a closed cache), it is told to stop
        between files and waited for."""
        self._stop_parsing.set()
        if self._parsing is not None:
            self._parsing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._parsing
        if self._parse_thread is not None:
            with contextlib.suppress(Exception):  # said by _parse_left when it failed
                await self._parse_thread

    # --- listeners ------------------------------------------------------------------------

    def subscribe(self) -> AsyncIterator[LiveEvent]:
        self._start_polling()
        return self.hub.subscribe()

    def add_callback(self, callback: Callable[[LiveEvent], object]) -> Callable[[], None]:
        self._start_polling()
        return self.hub.add_callback(callback)

    def _start_polling(self) -> None:
        if self._poller is None or self._poller.done():
            every = self._settings.live_poll_ms / 1000
            self._poller = asyncio.get_running_loop().create_task(self._poll(every))

    async def _poll(self, every: float) -> None:
        # Sources count what they know in a version number (SourceView.version); one event per
        # improvement after a hybrid map, then quiet until the next map or the next improvement.
        while True:
            await asyncio.sleep(every)
            mapped = self._engine.mapped_versions
            if mapped is None or not self.hub.listened:
                continue
            if mapped is not self._map_seen:  # a map since: count from what it was built on
                self._map_seen = self._known = mapped
            now = self._engine.source_versions()
            if now != self._known:
                moved = tuple(name for (name, v), (_, old) in zip(now, self._known, strict=False) if v != old)
                self._known = now
                self.hub.publish(LiveEvent("answers_improved", sources=moved))

    async def aclose(self) -> None:
        self._closed = True
        await self._stop_parse()
        await self.unwatch()
        self.hub.close()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
