"""A live map's moving parts: what it tells listeners, and the watcher that wakes it.

- :class:`LiveEvent` / :class:`EventHub`: a long-lived map says when the repository changed
  on disk (``files_changed``, after watch mode re-read it) and when its sources' answers
  improved since the last map (``answers_improved``: a language server became ready or
  resolved more), so an agent knows when asking again is worth it. Each listener has its own
  bounded queue; a listener that does not keep up loses the oldest events, never blocks the map.
- :class:`Watcher`: watchfiles (inotify through its Rust core) on the root, our own debounce
  (``watch_debounce_ms`` of quiet after the last event: a save is often several writes), then
  one callback with the relative paths that moved. ``.git`` internals and paths that leave
  the root are dropped here; what is a source file is the workspace's decision.
  :meth:`Watcher.sync` is watchman's cookie, kept out of the repository: a marker file in a
  private directory watched by the same inotify instance, whose event comes after every event
  queued before it (the kernel keeps one instance's events in order).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger("hybridmap.live")

LiveEventKind = Literal["files_changed", "answers_improved"]

#: How often an idle watch wakes (ms): the first wake-up also says the watch is in place, and
#: until then every map re-reads the tree (a session's first maps, and after each re-watch). At
#: 1,000 an MCP session's maps in its first second each re-read; a wake-up is one empty batch
#: from watchfiles' thread, nothing else.
WATCH_IDLE_MS = 250

#: Events kept per listener that has not read them yet (older ones are dropped first).
LISTENER_QUEUE = 64


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """Something a listener of a long-lived map may want to act on."""

    kind: LiveEventKind
    paths: tuple[str, ...] = ()
    """``files_changed``: the files that moved (relative to the root), as the watcher saw them."""
    sources: tuple[str, ...] = ()
    """``answers_improved``: the sources whose answers changed since the last map."""


class EventHub:
    """Fan-out of :class:`LiveEvent` to any number of listeners (async iterators, callbacks)."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[LiveEvent | None]] = set()
        self._callbacks: list[Callable[[LiveEvent], object]] = []

    @property
    def listened(self) -> bool:
        return bool(self._queues or self._callbacks)

    def add_callback(self, callback: Callable[[LiveEvent], object]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event (on the map's loop); returns the remover."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def subscribe(self) -> AsyncIterator[LiveEvent]:
        """A new listener's events, from now on (registered at once, not at the first read);
        the iteration ends when the map closes."""
        queue: asyncio.Queue[LiveEvent | None] = asyncio.Queue(LISTENER_QUEUE)
        self._queues.add(queue)

        async def events() -> AsyncIterator[LiveEvent]:
            try:
                while (event := await queue.get()) is not None:
                    yield event
            finally:
                self._queues.discard(queue)

        return events()

    def close(self) -> None:
        """End every listener's iteration (the map is closing)."""
        for queue in list(self._queues):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(None)
        self._queues.clear()
        self._callbacks.clear()

    def publish(self, event: LiveEvent) -> None:
        for queue in self._queues:
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(event)
        for callback in list(self._callbacks):
            try:
                callback(event)
            except Exception:  # a listener's bug must not stop the map or other listeners
                log.exception("a live-event callback failed")


class Watcher:
    """Watches the repository's own directories; after ``debounce_ms`` of quiet, awaits
    ``on_batch(paths)``.

    Never recursively: ``directories()`` names the directories to watch (those of the listed
    files, none reached through a symlink), each watched alone. A recursive watch follows
    symlinked directories, and one symlink to ``/`` in a repository made it walk the whole file
    system in the event loop (measured: the process hung). When the listing's directories move
    (a batch brings new ones, or the map re-read the tree for its own reasons: its first map,
    say, after a watch started on an empty listing) the watch is set up again with them, and once
    that watch is in place ``on_batch(frozenset())`` asks for one re-read, so what was written
    while no watch covered its directory is seen too.
    """

    def __init__(
        self,
        root: Path,
        debounce_ms: int,
        on_batch: Callable[[frozenset[str]], Awaitable[None]],
        directories: Callable[[], frozenset[str]],
    ) -> None:
        self._root = root
        self._debounce = debounce_ms / 1000
        self._on_batch = on_batch
        self._directories = directories
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._listing_moved = asyncio.Event()
        self.ready = asyncio.Event()
        """Set once the watch is in place (an edit before it may be missed)."""
        self.error: str | None = None
        """Why watching stopped, when it did by itself."""
        self._watching = asyncio.Event()
        """Set while one watch is in place (cleared while it is set up again)."""
        self._marks: dict[int, asyncio.Future[bool]] = {}
        """Sync markers written and not yet seen, by number (:meth:`sync`)."""
        self._marked = 0
        self._mark_dir: str | None = None
        """Our private directory for sync markers (None: no sync, e.g. it would be in the root)."""

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self._task is None:
            self._mark_dir = self._make_mark_dir()
            self._task = asyncio.create_task(self._run(), name="hybridmap-watch")

    def _make_mark_dir(self) -> str | None:
        """A directory of our own (mode 0700) for sync markers; None when the temporary
        directory is inside the repository (nothing is ever written there) or cannot be made."""
        try:
            made = tempfile.mkdtemp(prefix="hybridmap-watch-")
        except OSError as exc:
            log.info("watch sync is off: no private directory for its markers (%s)", exc)
            return None
        real = os.path.realpath(made)
        root = os.path.realpath(self._root)
        if real == root or real.startswith(os.path.join(root, "")):
            os.rmdir(made)
            log.info("watch sync is off: the temporary directory is inside the repository")
            return None
        return made

    async def sync(self, timeout: float) -> bool:
        """Return True once every file event made before this call has been handed to
        ``on_batch`` (at once: a sync does not wait for the debounce); False when no watch is in
        place, it has no marker directory, or ``timeout`` seconds pass first (the caller then reads
        the tree itself). Writes one marker file in the private directory, never in the root."""
        # While a watch is set up again (new directories), the caller reads the tree itself: that
        # takes a listing, where waiting for the new watch took its first quiet wake-up and re-read.
        if not (self.running and self._watching.is_set()) or self._mark_dir is None:
            return False
        try:
            return await self._mark_and_wait(self._mark_dir, timeout)
        except (OSError, TimeoutError):
            return False  # the marker could not be written, or was not seen in time

    async def _mark_and_wait(self, mark_dir: str, timeout: float) -> bool:
        """Write the next marker and wait for it: True seen, False dropped by an ending watch
        (the next one starts with a re-read of the gap, so the caller reads the tree itself)."""
        self._marked += 1
        number = self._marked
        seen: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._marks[number] = seen
        marker = os.path.join(mark_dir, f"sync-{number}")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            os.close(os.open(marker, flags, 0o600))
            return await asyncio.wait_for(asyncio.shield(seen), timeout)
        finally:
            self._marks.pop(number, None)
            seen.cancel()
            with contextlib.suppress(OSError):
                os.unlink(marker)

    def _marks_seen(self, upto: int, ok: bool) -> None:
        """Markers up to ``upto`` were seen (or, with ``ok`` False, never will be)."""
        for number, seen in list(self._marks.items()):
            if number <= upto and not seen.done():
                seen.set_result(ok)

    def _mark_number(self, path: str) -> int | None:
        """The number of our marker at ``path``; None for any other path."""
        if self._mark_dir is None or os.path.dirname(path) != self._mark_dir:
            return None
        name = os.path.basename(path)
        return int(name[5:]) if name.startswith("sync-") and name[5:].isdigit() else 0

    async def wait_in_place(self) -> bool:
        """Wait until the watch is in place (True) or has stopped by itself (False; ``error`` says
        why: an inotify limit, the root removed)."""
        if self._task is None:
            return False
        ready = asyncio.ensure_future(self.ready.wait())
        try:
            await asyncio.wait({ready, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        return self.ready.is_set() and not self._task.done()

    def listing_moved(self) -> None:
        """The map re-read the tree and files came or went: re-check the watched directories."""
        self._listing_moved.set()

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._marks_seen(self._marked, ok=False)
        if self._mark_dir is not None:
            shutil.rmtree(self._mark_dir, ignore_errors=True)
            self._mark_dir = None

    def _real_directories(self) -> list[str]:
        """The directories to watch, as absolute paths: real directories (not symlinks) only."""
        out = []
        for rel in sorted(self._directories() | {""}):
            path = self._root / rel if rel else self._root
            try:
                if stat.S_ISDIR(os.lstat(path).st_mode):
                    out.append(str(path))
            except OSError:
                continue  # gone since the listing: the next batch's refresh says so
        return out

    async def _run(self) -> None:
        try:
            rewatch = False
            while not self._stop.is_set():
                self._listing_moved.clear()
                watched = self._directories()
                await self._watch(self._real_directories(), watched, rescan=rewatch)
                rewatch = True
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - inotify limits, a root removed: said by the map, watch stops
            self.error = f"watching stopped: {type(exc).__name__}: {exc}"
            log.warning("%s", self.error)

    async def _watch(self, paths: list[str], watched: frozenset[str], *, rescan: bool) -> None:
        """One watch of ``paths`` until the listing has directories not in ``watched``; with
        ``rescan``, one re-read once it is in place (the gap since the last watch)."""
        pending: set[str] = set()
        batches: asyncio.Queue[tuple[set[str], int]] = asyncio.Queue()
        done_watching = asyncio.Event()
        in_place = asyncio.Event()
        reader = asyncio.create_task(self._read_events(paths, done_watching, in_place, batches))
        get: asyncio.Future[tuple[set[str], int]] | None = None
        moved: asyncio.Future[Literal[True]] | None = None
        try:
            await self._until(in_place, reader)
            self.ready.set()
            self._watching.set()
            if rescan:
                await self._on_batch(frozenset())
            while not reader.done():
                if self._listing_moved.is_set():
                    self._listing_moved.clear()
                    if self._directories() != watched:
                        return  # new directories: watch again with them
                get = asyncio.ensure_future(batches.get())
                moved = asyncio.ensure_future(self._listing_moved.wait())
                done, _ = await asyncio.wait(
                    {get, reader, moved},
                    timeout=None if not pending else self._debounce,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                moved.cancel()
                marked = 0
                if get.done():
                    paths_moved, marked = get.result()
                    pending |= paths_moved
                    if not marked:
                        continue  # a sync marker hands over at once, not after the debounce
                else:
                    get.cancel()
                    if moved in done:
                        continue  # the directories are compared at the top
                if not pending:  # a sync marker alone: nothing moved before it
                    self._marks_seen(marked, ok=True)
                    continue
                ready, pending = frozenset(pending), set()  # the debounce ran out, or a sync marker came
                await self._on_batch(ready)
                self._marks_seen(marked, ok=True)
                # Files that came or went set _listing_moved (listing_moved): the directories are
                # compared at the top then, not after every batch (at 100,000 files, listing every
                # file's directories took 31 ms of each edit).
            reader.result()  # re-raise what stopped it
        finally:
            # Markers not seen by this watch never will be (the next one starts after them).
            self._watching.clear()
            self._marks_seen(self._marked, ok=False)
            done_watching.set()
            for future in (get, moved):
                if future is not None:
                    future.cancel()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader

    async def _read_events(
        self,
        paths: list[str],
        done_watching: asyncio.Event,
        in_place: asyncio.Event,
        batches: asyncio.Queue[tuple[set[str], int]],
    ) -> None:
        """watchfiles' batches, as (paths in the root that moved, the last sync marker seen)."""
        from watchfiles import awatch  # imported here: one-shot maps never load it

        # step: watchfiles' own wait for a burst's next event (ms); our debounce comes after. The
        # watch is in place once awatch first returns; a timeout (empty batch) says so when the
        # tree is quiet, hence the short rust_timeout (one idle wake-up a second).
        async for changes in awatch(
            *paths,
            *([self._mark_dir] if self._mark_dir is not None else []),
            stop_event=done_watching,
            step=5,
            debounce=1_600,
            rust_timeout=WATCH_IDLE_MS,
            yield_on_timeout=True,
            recursive=False,
        ):
            in_place.set()
            batch: set[str] = set()
            marked = 0
            for _, path in changes:
                number = self._mark_number(path)
                if number is not None:
                    marked = max(marked, number)
                elif (rel := self._relative(path)) is not None:
                    batch.add(rel)
            if batch or marked:
                batches.put_nowait((batch, marked))

    @staticmethod
    async def _until(in_place: asyncio.Event, reader: asyncio.Task[None]) -> None:
        # awatch yields on its first timeout (yield_on_timeout) or change, after the watch is set up.
        ready = asyncio.ensure_future(in_place.wait())
        await asyncio.wait({ready, reader}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()

    def _relative(self, path: str) -> str | None:
        try:
            rel = Path(path).relative_to(self._root).as_posix()
        except ValueError:
            return None
        if rel == "." or rel == ".git" or rel.startswith(".git/"):
            return None
        return rel if os.sep == "/" else rel.replace(os.sep, "/")
