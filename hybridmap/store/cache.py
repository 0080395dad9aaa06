"""The one place hybridmap touches its disk cache.

The cache stores only data we decode ourselves (:mod:`hybridmap.store.codec`), never pickle:
diskcache's own ``Disk`` unpickles what it reads, so anyone able to write the cache directory
could run code in every later map (CVE-2025-69872). Here :class:`SafeDisk` stores bytes only,
refuses an entry in pickle (or any other) mode, a pickled key, and a value file path that is not
of diskcache's own shape; directories are created owner-only (0o700) and files 0o600, and a
directory that others could write (group/world-writable, or another user's) is not used at all
(``cache_unavailable``, in memory). The codec format is part of every key on disk: entries of
another format, such as the pickles of earlier versions, simply miss.

Entries are keyed by *content* (sha256 of the bytes parsed) plus everything else
the value depends on (schema version, the shape of the cached records, grammar +
query fingerprint, extraction settings), never by path or mtime: a renamed file
hits, an edited one misses, a cache written by another version simply misses.

A cache must never stop a map, nor hold it up for long:

* a damaged database (garbage, truncated, "malformed") is removed and rebuilt
  once, at open or whenever a read or write finds the damage (``cache_corrupt``);
* an entry that does not decode (damaged, of a format we do not write, or pickled:
  refused unread), or that its reader finds unusable, is dropped and its file parsed
  again (``cache_corrupt``, with the count);
* a database whose settings table holds keys or values hybridmap does not write (diskcache
  turns them into PRAGMA statements and attributes) is treated as damaged: rebuilt;
* another process holding the database lock longer than ``cache_timeout_seconds``
  makes this map run on without storing (``cache_unavailable``), and a busy
  database is never mistaken for a damaged one;
* an unwritable or unopenable cache turns into an in-memory dict for this
  process (``cache_unavailable``).

Beneath it may be a store shared by many machines (:mod:`hybridmap.store.shared`): what memory
and disk miss is asked of it in one batch, and what it gives is kept on disk; writes go to it too
when this machine is a writer. It follows the same rule: it never stops a map.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import sqlite3
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeGuard

import diskcache

from ..model import Diagnostic, FileTags, Span, Symbol
from . import codec
from .shared import SharedStore

#: Bump when the *meaning* of cached values changes. Their shape is covered by
#: :data:`VALUE_SHAPE`: adding a field to a cached record changes every key by itself.
#: 3: values in hybridmap's own encoding (:mod:`hybridmap.store.codec`), never pickled;
#: 2: values became ``ParseOutcome`` (tags + problems); 1 stored bare ``FileTags``.
CACHE_SCHEMA = 3

_DATABASE_FILES = ("cache.db", "cache.db-wal", "cache.db-shm")
#: Storing a value outside the database itself: a value file (disk full, unwritable), encoding.
_STORE_ERRORS = (OSError, codec.CodecError, TypeError, AttributeError)
#: Prefix of every key on disk: the encoding's format. Entries of any other format miss.
DISK_KEY_PREFIX = codec.KEY_PREFIX
#: A value file name as diskcache's ``Disk.filename`` makes them: anything else in a row (an
#: absolute path, ``..``) is never opened nor deleted.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{28}\.val")
#: The settings diskcache may find in its table (diskcache turns ``sqlite_*`` ones into PRAGMA
#: statements and ``disk_*`` ones into attributes of the Disk); all are passed explicitly.
_SETTINGS: dict[str, Any] = {
    **diskcache.DEFAULT_SETTINGS,
    "eviction_policy": "least-recently-stored",
    "statistics": 0,
    "tag_index": 0,
    # diskcache culls inside every set (a query for expired rows and the database's volume): a
    # third of the time of storing 20,000 entries. We cull once per write instead (Cache._cull).
    "cull_limit": 0,
    # diskcache maps up to 64 MB of the database into memory, and a warm map reading every entry
    # touches all of it: 56 MB of the 100,000-file one-shot map's peak RSS. Reads through the
    # page cache instead cost the same CPU (100,000 entries in batches of 512: 0.82-0.88 s both).
    "sqlite_mmap_size": 0,
    # SQLite's page cache: diskcache's 2**13 pages are 32 MB held once a warm map has read every
    # entry, 30 MB of the 100,000-file one-shot map's peak RSS. At 2**10 pages (4 MB), writing
    # 100,000 entries costs ~15 % more (~0.4 % of a cold map of them) and reading them the same
    # (benchmarks/bench_cache_pages.py; docs/benchmarks.md, "Peak memory of a one-shot map at
    # 100,000 files").
    "sqlite_cache_size": 2**10,
}
#: Keys per query when reading or writing many entries (:func:`_read_batch`, :func:`_write`);
#: SQLite takes 32,766 parameters.
_READ_BATCH = 512
_SETTING_KEYS = frozenset(_SETTINGS) | frozenset(("count", "size", "hits", "misses"))
_SETTING_VALUE = re.compile(r"[A-Za-z0-9_-]{1,40}")


def disk_key(key: str) -> str:
    """The key ``key`` is stored under on disk."""
    return codec.format_key(key)


class RefusedEntry(ValueError):
    """An entry stored in a form hybridmap never reads (pickle, text, a foreign file path)."""


class SafeDisk(diskcache.Disk):  # type: ignore[misc]  # diskcache ships no types
    """diskcache's serializer, restricted to bytes in and bytes out: nothing is ever unpickled.

    Values are our codec's bytes, kept in the row or, when large, in an owner-only value file;
    keys are str. Every row diskcache reads passes through :meth:`fetch` (values) or :meth:`get`
    (keys, when listing), and every value file it deletes through :meth:`remove`.
    """

    def put(self, key: Any) -> tuple[Any, bool]:  # pyright: ignore[reportIncompatibleMethodOverride]
        if type(key) is not str:  # diskcache would pickle it
            raise TypeError(f"cache keys are str, not {type(key).__name__}")
        return key, True

    def get(self, key: Any, raw: bool) -> Any:
        if not raw or type(key) is not str:
            raise RefusedEntry("a pickled cache key (refused unread)")
        return key

    def store(
        self,
        value: Any,
        read: bool,  # pyright: ignore[reportIncompatibleMethodOverride]
        key: Any = diskcache.UNKNOWN,
    ) -> tuple[int, int, str | None, Any]:
        if type(value) is not bytes or read:
            raise TypeError(f"the disk cache stores bytes, not {type(value).__name__}")
        if len(value) < self.min_file_size:
            return 0, diskcache.core.MODE_RAW, None, sqlite3.Binary(value)
        filename, full_path = self.filename()  # random names: key and value are not used
        with open(self._create(full_path), "wb") as fh:
            fh.write(value)
        return len(value), diskcache.core.MODE_BINARY, filename, None

    @staticmethod
    def _create(full_path: str) -> int:
        """A new value file, 0o600, in 0o700 directories (os.makedirs would give the upper one the
        umask's mode). Retried like diskcache: another process may remove an emptied directory."""
        sub = os.path.dirname(full_path)
        for attempt in range(10):
            for directory in (os.path.dirname(sub), sub):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(directory, 0o700)
            try:
                return os.open(full_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileNotFoundError:
                if attempt == 9:
                    raise
        raise AssertionError("unreachable")

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> bytes:
        if read:
            raise RefusedEntry("file handles are not read from the cache")
        if mode == diskcache.core.MODE_RAW and type(value) is bytes:
            return value
        if mode == diskcache.core.MODE_BINARY and value is None and self._ours(filename):
            fd = os.open(os.path.join(self._directory, filename), os.O_RDONLY | os.O_NOFOLLOW)
            with open(fd, "rb") as fh:
                return fh.read()
        if mode == diskcache.core.MODE_PICKLE:
            raise RefusedEntry("a pickled cache entry (refused unread)")
        raise RefusedEntry(f"a cache entry in a form hybridmap does not write (mode {mode})")

    def remove(self, file_path: str) -> None:
        if self._ours(file_path):
            super().remove(file_path)

    @staticmethod
    def _ours(filename: object) -> TypeGuard[str]:
        return isinstance(filename, str) and _VALUE_FILE.fullmatch(filename) is not None


def _read_batch(
    disk: Any,
    keys: list[str],
    refused: list[str],
    undecodable: list[str],
    damaged: Callable[[str], object] | None = None,
) -> dict[str, Any]:
    """Those of ``keys`` on ``disk`` (a diskcache with :class:`SafeDisk`), decoded; unusable ones
    noted in the lists. Database errors are the caller's. ``damaged``: parse outcomes' tags are
    decoded when first read, and ``damaged(key)`` is called for one that does not decode then
    (:func:`codec.decode`).

    One query for the batch, where diskcache's ``get`` is one per key with its Python around it.
    The query is ``get``'s own fast path (no statistics, and this eviction policy updates nothing
    on read), for many keys; each row still goes through :meth:`SafeDisk.get` and
    :meth:`SafeDisk.fetch`, as ``get`` sends it."""
    marks = ",".join("?" * len(keys))  # placeholders only: the keys are parameters
    query = (
        "SELECT key, raw, mode, filename, value FROM Cache"  # noqa: S608
        f" WHERE key IN ({marks}) AND raw = 1 AND (expire_time IS NULL OR expire_time > ?)"
    )
    rows = disk._sql(query, (*map(disk_key, keys), time.time())).fetchall()
    found: dict[str, Any] = {}
    for stored, raw, mode, filename, data in rows:
        try:
            key = disk._disk.get(stored, raw)[len(DISK_KEY_PREFIX) :]
            data = disk._disk.fetch(mode, filename, data, False)
            value = codec.decode(data, damaged is not None, partial(damaged, key) if damaged is not None else None)
        except RefusedEntry:
            refused.append(stored[len(DISK_KEY_PREFIX) :])
        except OSError:  # a value file removed meanwhile (diskcache's get: a miss)
            continue
        except Exception:  # noqa: BLE001 - any row we cannot read: dropped, never stops a map
            undecodable.append(stored[len(DISK_KEY_PREFIX) :])
        else:
            found[key] = value
    return found


def _write(disk: Any, encoded: Mapping[str, bytes]) -> None:
    """Set ``encoded`` (codec bytes) on ``disk`` (a diskcache with :class:`SafeDisk`), inside the
    caller's transaction. The common case, a new entry small enough for a row, goes in one
    ``executemany`` of the very ``INSERT`` diskcache's ``set`` makes (:meth:`SafeDisk.store`'s
    row form; diskcache's triggers keep its count and size); an entry already there or large
    enough for a value file goes through ``set``. One ``set`` per entry, each its own nested
    transaction and two queries, was 11.5 % of the first map of a new machine from a shared store
    at 100,000 files (py-spy)."""
    limit = disk._disk.min_file_size
    small = [disk_key(key) for key, data in encoded.items() if len(data) < limit]
    present: set[str] = set()
    for start in range(0, len(small), _READ_BATCH):
        chunk = small[start : start + _READ_BATCH]
        marks = ",".join("?" * len(chunk))  # placeholders only: the keys are parameters
        query = f"SELECT key FROM Cache WHERE key IN ({marks}) AND raw = 1"  # noqa: S608
        present.update(row[0] for row in disk._sql(query, chunk))
    now = time.time()
    fresh = [key for key in small if key not in present]
    prefix = len(DISK_KEY_PREFIX)
    disk._con.executemany(
        "INSERT INTO Cache(key, raw, store_time, expire_time, access_time, access_count, tag, size, mode,"
        " filename, value) VALUES (?, 1, ?, NULL, ?, 0, NULL, 0, ?, NULL, ?)",
        [(key, now, now, diskcache.core.MODE_RAW, sqlite3.Binary(encoded[key[prefix:]])) for key in fresh],
    )
    done = set(fresh)
    for key, data in encoded.items():
        if (stored := disk_key(key)) not in done:
            disk.set(stored, data)


def unsafe_directory(directory: Path) -> str | None:
    """Why others could plant entries in ``directory`` (None when only its owner, we, can)."""
    st = directory.stat()
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a directory"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"it is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"others can write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


class ForeignSettings(sqlite3.DatabaseError):
    """The database's settings table was written by something else: treated as damage."""


def _check_settings(con: sqlite3.Connection) -> None:
    """Raise :class:`ForeignSettings` for a settings row hybridmap never writes."""
    try:
        rows = con.execute("SELECT key, value FROM Settings").fetchall()
    except sqlite3.OperationalError:  # no table yet: a new database
        return
    for key, value in rows:
        if key not in _SETTING_KEYS or not (
            type(value) in (int, float) or (type(value) is str and _SETTING_VALUE.fullmatch(value))
        ):
            raise ForeignSettings(f"settings table holds an entry hybridmap does not write ({key!r})")


def record_shape(*records: type) -> str:
    """A short hash of the field names of dataclass records, in order."""
    text = ";".join(f"{cls.__qualname__}({','.join(f.name for f in dataclasses.fields(cls))})" for cls in records)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


#: Changes by itself when a field is added to, removed from or renamed in a cached model record.
VALUE_SHAPE = record_shape(FileTags, Symbol, Span)


def failure_kind(exc: BaseException) -> str:
    """ "corrupt", "busy" or "unavailable": what a database error means for the cache."""
    if type(exc).__name__ == "Timeout":  # diskcache.Timeout: a lock held past our timeout
        return "busy"
    if isinstance(exc, ForeignSettings):
        return "corrupt"
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return "corrupt"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return "busy"
    if name:
        return "unavailable"
    text = str(exc).lower()  # errors raised without a code (or an older sqlite3 module)
    if "malformed" in text or "not a database" in text:
        return "corrupt"
    if "locked" in text or "busy" in text:
        return "busy"
    return "unavailable"


def _probe(directory: Path, timeout: float) -> None:
    """Raise what opening would meet, within our timeout: diskcache itself retries
    a locked database for 60 s, reports damage only on the first query, and acts on
    its settings table before we can look."""
    path = directory / "cache.db"
    if not path.exists():
        # Created empty (SQLite's new database) so that it and its -wal/-shm, which SQLite
        # creates with the database's mode, are 0o600 whatever the umask.
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            return
        except FileExistsError:  # another process created it first: probe theirs
            pass
    con = sqlite3.connect(str(path), timeout=timeout, isolation_level=None)
    try:
        con.execute("PRAGMA schema_version").fetchone()  # reads the header: NOTADB on garbage
        con.execute("BEGIN IMMEDIATE")  # the write lock diskcache takes on open
        _check_settings(con)
        con.execute("ROLLBACK")
    finally:
        con.close()


def _unavailable_why(kind: str, exc: BaseException, timeout: float) -> str:
    if kind == "busy":
        return f"cache locked by another process for more than cache_timeout_seconds={timeout:g}; running without it"
    return f"cannot use cache ({type(exc).__name__}: {exc}); running without it"


def _remove_database(directory: Path) -> None:
    # Only our own database files: the directory may be shared with other things.
    for name in _DATABASE_FILES:
        with contextlib.suppress(OSError):
            (directory / name).unlink()


class _Said:
    """The cache's diagnostics until a map takes them, each once: written by maps and by the
    background parse of deferred files (two threads), so behind a lock."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._pending: list[Diagnostic] = []

    def note(self, kind: str, message: str) -> None:
        self._add((Diagnostic(self._path, kind, message),))

    def _add(self, diagnostics: Iterable[Diagnostic]) -> None:
        with self._lock:
            self._pending.extend(d for d in diagnostics if d not in self._pending)

    def peek(self, more: Iterable[Diagnostic] = ()) -> list[Diagnostic]:
        self._add(more)
        with self._lock:
            return list(self._pending)

    def take(self, more: Iterable[Diagnostic] = ()) -> list[Diagnostic]:
        self._add(more)
        with self._lock:
            taken, self._pending = self._pending, []
        return taken


class Cache:
    """diskcache with a safe fallback. Thread-safe for our use (diskcache is)."""

    def __init__(
        self,
        directory: Path | None,
        size_limit: int = 2**30,
        timeout: float = 5.0,
        memory_entries: int = 20_000,
        shared: SharedStore | None = None,
    ) -> None:
        self.directory = directory
        self.shared = shared
        self._said = _Said(str(directory or "<cache>"))
        # Without a usable disk cache, entries live here, oldest first out beyond memory_entries:
        # a long-lived map that edits files every turn must not grow without bound.
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self._memory_entries = max(1, memory_entries)
        self._disk: Any = None
        self._size_limit = size_limit
        self._timeout = timeout
        self._rebuilt = False
        if directory is not None:
            self._disk = self._open(directory)

    @property
    def persistent(self) -> bool:
        return self._disk is not None

    @property
    def remote(self) -> bool:
        """Whether a lookup may wait on the network (a shared store): then callers on an event
        loop look up in a worker thread."""
        return self.shared is not None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What went wrong since the last :meth:`take_diagnostics`, the shared store's included."""
        return self._said.peek(self.shared.take_diagnostics() if self.shared is not None else ())

    def take_diagnostics(self) -> list[Diagnostic]:
        """:attr:`diagnostics`, emptied: each is said on one map."""
        return self._said.take(self.shared.take_diagnostics() if self.shared is not None else ())

    def shared_counts(self) -> dict[str, int]:
        """The shared store's running counts (``asked``, ``found``, ``refused``, ``written``);
        empty without one."""
        return dict(self.shared.stats) if self.shared is not None else {}

    def _open(self, directory: Path) -> Any:
        for attempt in (1, 2):
            try:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
                unsafe = unsafe_directory(directory)
                if unsafe is not None:
                    self._said.note(
                        "cache_unavailable",
                        f"cache directory not used: {unsafe}, so anyone who "
                        "can write it could plant entries; running without it "
                        f"(use a directory only you can write: chmod 700 {directory})",
                    )
                    return None
                _probe(directory, self._timeout)
                return diskcache.Cache(
                    str(directory),
                    timeout=self._timeout,
                    disk=SafeDisk,
                    **{**_SETTINGS, "size_limit": self._size_limit},
                )
            except (sqlite3.Error, diskcache.Timeout) as exc:
                kind = failure_kind(exc)
                if kind == "corrupt" and attempt == 1:
                    self._rebuilt = True
                    self._said.note("cache_corrupt", f"cache database unreadable ({exc}); rebuilding it")
                    _remove_database(directory)
                    continue
                self._said.note("cache_unavailable", _unavailable_why(kind, exc, self._timeout))
                return None
            except OSError as exc:
                self._said.note("cache_unavailable", f"cannot use cache ({exc.strerror or exc}); running without it")
                return None
        return None

    def _close_disk(self) -> None:
        with contextlib.suppress(Exception):
            self._disk.close()
        self._disk = None

    def _database_failed(self, exc: BaseException) -> None:
        """A read or write met a database error: rebuild once if damaged, else stop using it."""
        kind = failure_kind(exc)
        if kind == "busy":
            # Not ours to fix and not damage: keep the database, skip this operation.
            self._said.note(
                "cache_unavailable",
                f"cache locked by another process for more than "
                f"cache_timeout_seconds={self._timeout:g}; results kept "
                "in memory for this process",
            )
            return
        self._close_disk()
        if kind == "corrupt" and not self._rebuilt and self.directory is not None:
            self._rebuilt = True
            self._said.note("cache_corrupt", f"cache database damaged ({exc}); rebuilt empty")
            _remove_database(self.directory)
            self._disk = self._open(self.directory)
            return
        self._said.note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")

    def get_many(self, keys: Iterable[str], *, shared: bool = True, lazy_tags: bool = False) -> dict[str, Any]:
        """The values of those ``keys`` held in memory, on disk or (``shared``) in the shared store.
        Entries cheaper to compute than a round trip (token counts) pass ``shared=False``.
        ``lazy_tags``: parse outcomes read from disk decode their tags when first read
        (:class:`~hybridmap.store.codec.LazyFileTags`)."""
        found: dict[str, Any] = {}
        unseen: list[str] = []
        for key in keys:
            value = self._memory.get(key)
            if value is not None:
                found[key] = value
            else:
                unseen.append(key)
        refused: list[str] = []
        undecodable: list[str] = []
        for start in range(0, len(unseen), _READ_BATCH):
            if self._disk is None:
                break
            try:
                batch = unseen[start : start + _READ_BATCH]
                damaged = self._damaged_when_read if lazy_tags else None
                found.update(_read_batch(self._disk, batch, refused, undecodable, damaged))
            except (sqlite3.Error, diskcache.Timeout) as exc:
                self._database_failed(exc)
        if refused:
            self.drop(refused, "pickled or foreign, refused unread")
        if undecodable:
            self.drop(undecodable, "not in hybridmap's cache encoding")
        missed = [key for key in unseen if key not in found]
        if missed and shared and self.shared is not None:
            found.update(self._from_shared(missed))
        return found

    def _from_shared(self, keys: list[str]) -> dict[str, Any]:
        """What the shared store holds of ``keys``, decoded, and kept locally (unread again)."""
        payloads = self.shared.get_many(keys).payloads if self.shared is not None else {}
        decoded: dict[str, Any] = {}
        for key, data in payloads.items():
            try:
                decoded[key] = codec.decode(data)
            except codec.CodecError:
                continue  # verified but not decodable: written by another version; parsed here
        if len(decoded) < len(payloads):
            self._said.note(
                "shared_cache_refused",
                f"{len(payloads) - len(decoded)} entries of the shared cache do not decode "
                "(written by another hybridmap version); those files were parsed here",
            )
        if decoded:
            self._store_local({key: payloads[key] for key in decoded}, decoded)
        return decoded

    def _damaged_when_read(self, key: str) -> None:
        """A lazily decoded entry's tags did not decode (``get_many(lazy_tags=True)``)."""
        self.drop([key], "damaged, found when its tags were read")

    def drop(self, keys: Iterable[str], why: str) -> None:
        """Delete entries a reader could not use, and say so."""
        count = 0
        for key in keys:
            count += 1
            self._memory.pop(key, None)
            if self._disk is not None:
                try:
                    self._disk.delete(disk_key(key))
                except (sqlite3.Error, diskcache.Timeout) as exc:
                    self._database_failed(exc)
                except Exception:  # noqa: BLE001, S110 - dropping a bad entry is best effort; it is reported below
                    pass
        if count:
            self._said.note(
                "cache_corrupt",
                f"{count} cached entr{'y' if count == 1 else 'ies'} unusable ({why}); dropped and parsed again",
            )

    def set_many(self, items: Mapping[str, Any], *, shared: bool = True) -> None:
        """Store values on disk (in memory without it) and, ``shared`` on a writer, in the shared store."""
        if not items:
            return
        writer = self.shared if shared and self.shared is not None and self.shared.config.write else None
        if self._disk is None and writer is None:
            self._remember(items)
            return
        try:
            encoded = {key: codec.encode(value) for key, value in items.items()}
        except _STORE_ERRORS as exc:
            self._remember(items)
            self._close_disk()
            self._said.note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")
            return
        if writer is not None:
            writer.put_many(encoded)
        self._store_local(encoded, items)

    def _store_local(self, encoded: Mapping[str, bytes], items: Mapping[str, Any]) -> None:
        """Keep entries on disk (their codec bytes), or in memory without it."""
        if not self._stored_on_disk(encoded):
            self._remember(items)

    def _stored_on_disk(self, encoded: Mapping[str, bytes]) -> bool:
        """Write codec bytes in one transaction (thousands of entries, one fsync), then cull down to
        cache_size_limit (the least recently stored first); False when there is no usable disk."""
        if self._disk is None:
            return False
        try:
            with self._disk.transact():
                _write(self._disk, encoded)
            self._disk.cull()
            return True
        except (sqlite3.Error, diskcache.Timeout) as exc:
            self._database_failed(exc)
            # Into the rebuilt database, when the damage was found and mended.
            return self._disk is not None and failure_kind(exc) == "corrupt" and self._stored_on_disk(encoded)
        except _STORE_ERRORS as exc:
            self._close_disk()
            self._said.note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")
            return False

    def raw_items(self) -> Iterator[tuple[str, bytes]]:
        """Every entry as stored: (key, our codec's bytes), nothing decoded (an index artifact's
        export). Entries held in memory are encoded; a row in a form we never write is skipped."""
        if self._disk is None:
            for key, value in list(self._memory.items()):
                with contextlib.suppress(*_STORE_ERRORS):
                    yield key, codec.encode(value)
            return
        try:
            stored_keys = list(self._disk.iterkeys())
        except (sqlite3.Error, diskcache.Timeout) as exc:
            self._database_failed(exc)
            return
        for stored in stored_keys:
            if type(stored) is not str or not stored.startswith(DISK_KEY_PREFIX):
                continue
            try:
                data = self._disk.get(stored)
            except (sqlite3.Error, diskcache.Timeout) as exc:
                self._database_failed(exc)
                return
            except Exception:  # noqa: BLE001, S112 - a row diskcache cannot read is not exported
                continue
            if type(data) is bytes:
                yield stored[len(DISK_KEY_PREFIX) :], data

    def set_raw_many(self, items: Mapping[str, bytes]) -> None:
        """Store values already in our codec's bytes (an index artifact's import), unread: like
        every entry, each is decoded when a map reads it, and dropped there if it does not decode.
        Without a usable disk cache they are decoded now and held in memory (bad ones skipped)."""
        if not items or self._stored_on_disk(items):
            return
        decoded = {}
        for key, data in items.items():
            with contextlib.suppress(codec.CodecError):
                decoded[key] = codec.decode(data)
        self._remember(decoded)

    def _remember(self, items: Mapping[str, Any]) -> None:
        for key, value in items.items():
            self._memory[key] = value
            self._memory.move_to_end(key)
        while len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)

    def clear(self) -> int:
        self._memory.clear()
        if self._disk is None:
            return 0
        try:
            return int(self._disk.clear())
        except (sqlite3.Error, diskcache.Timeout, OSError) as exc:
            self._close_disk()
            self._said.note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc})")
            return 0

    def close(self) -> None:
        if self._disk is not None:
            self._close_disk()
        if self.shared is not None:
            self.shared.close()


def tags_key(language_fingerprint: str, sha256: str, extraction: str) -> str:
    return f"tags:{CACHE_SCHEMA}.{VALUE_SHAPE}:{language_fingerprint}:{extraction}:{sha256}"
