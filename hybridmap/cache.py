"""The one place hybridmap touches its disk cache.

Entries are keyed by *content* (sha256 of the bytes parsed) plus everything else
the value depends on (schema version, the shape of the cached records, grammar +
query fingerprint, extraction settings), never by path or mtime: a renamed file
hits, an edited one misses, a cache written by another version simply misses.

A cache must never stop a map, nor hold it up for long:

* a damaged database (garbage, truncated, "malformed") is removed and rebuilt
  once, at open or whenever a read or write finds the damage (``cache_corrupt``);
* an entry that no longer unpickles, or that its reader finds unusable, is
  dropped and its file parsed again (``cache_corrupt``, with the count);
* another process holding the database lock longer than ``cache_timeout_seconds``
  makes this map run on without storing (``cache_unavailable``), and a busy
  database is never mistaken for a damaged one;
* an unwritable or unopenable cache turns into an in-memory dict for this
  process (``cache_unavailable``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .model import Diagnostic, FileTags, Span, Symbol

#: Bump when the *meaning* of cached values changes. Their shape is covered by
#: :data:`VALUE_SHAPE`: adding a field to a cached record changes every key by itself.
#: 2: values became ``ParseOutcome`` (tags + problems); 1 stored bare ``FileTags``.
CACHE_SCHEMA = 2

_DATABASE_FILES = ("cache.db", "cache.db-wal", "cache.db-shm")
#: Storing a value outside the database itself: a value file (disk full, unwritable), pickling.
_STORE_ERRORS = (OSError, pickle.PicklingError, TypeError, AttributeError)


def record_shape(*records: type) -> str:
    """A short hash of the field names of dataclass records, in order."""
    text = ";".join(f"{cls.__qualname__}({','.join(f.name for f in dataclasses.fields(cls))})"
                    for cls in records)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


#: Changes by itself when a field is added to, removed from or renamed in a cached model record.
VALUE_SHAPE = record_shape(FileTags, Symbol, Span)


def failure_kind(exc: BaseException) -> str:
    """"corrupt", "busy" or "unavailable": what a database error means for the cache."""
    if type(exc).__name__ == "Timeout":  # diskcache.Timeout: a lock held past our timeout
        return "busy"
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


class Cache:
    """diskcache with a safe fallback. Thread-safe for our use (diskcache is)."""

    def __init__(self, directory: Path | None, size_limit: int = 2**30, timeout: float = 5.0,
                 memory_entries: int = 20_000) -> None:
        self.directory = directory
        self.diagnostics: list[Diagnostic] = []
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

    def _note(self, kind: str, message: str) -> None:
        diag = Diagnostic(str(self.directory or "<cache>"), kind, message)
        if diag not in self.diagnostics:
            self.diagnostics.append(diag)

    def _probe(self, directory: Path) -> None:
        """Raise what opening would meet, within our timeout: diskcache itself retries
        a locked database for 60 s, and reports damage only on the first query."""
        path = directory / "cache.db"
        if not path.exists():
            return
        con = sqlite3.connect(str(path), timeout=self._timeout, isolation_level=None)
        try:
            con.execute("PRAGMA schema_version").fetchone()  # reads the header: NOTADB on garbage
            con.execute("BEGIN IMMEDIATE")  # the write lock diskcache takes on open
            con.execute("ROLLBACK")
        finally:
            con.close()

    def _open(self, directory: Path) -> Any:
        import diskcache

        for attempt in (1, 2):
            try:
                directory.mkdir(parents=True, exist_ok=True)
                self._probe(directory)
                return diskcache.Cache(str(directory), size_limit=self._size_limit, timeout=self._timeout)
            except (sqlite3.Error, diskcache.Timeout) as exc:
                kind = failure_kind(exc)
                if kind == "corrupt" and attempt == 1:
                    self._rebuilt = True
                    self._note("cache_corrupt", f"cache database unreadable ({exc}); rebuilding it")
                    self._remove_database(directory)
                    continue
                self._note("cache_unavailable", self._why(kind, exc))
                return None
            except OSError as exc:
                self._note("cache_unavailable", f"cannot use cache ({exc.strerror or exc}); running without it")
                return None
        return None

    def _why(self, kind: str, exc: BaseException) -> str:
        if kind == "busy":
            return (f"cache locked by another process for more than cache_timeout_seconds="
                    f"{self._timeout:g}; running without it")
        return f"cannot use cache ({type(exc).__name__}: {exc}); running without it"

    @staticmethod
    def _remove_database(directory: Path) -> None:
        # Only our own database files: the directory may be shared with other things.
        for name in _DATABASE_FILES:
            try:
                (directory / name).unlink()
            except OSError:
                pass

    def _close_disk(self) -> None:
        try:
            self._disk.close()
        except Exception:
            pass
        self._disk = None

    def _database_failed(self, exc: BaseException) -> None:
        """A read or write met a database error: rebuild once if damaged, else stop using it."""
        kind = failure_kind(exc)
        if kind == "busy":
            # Not ours to fix and not damage: keep the database, skip this operation.
            self._note("cache_unavailable", f"cache locked by another process for more than "
                                            f"cache_timeout_seconds={self._timeout:g}; results kept "
                                            "in memory for this process")
            return
        self._close_disk()
        if kind == "corrupt" and not self._rebuilt and self.directory is not None:
            self._rebuilt = True
            self._note("cache_corrupt", f"cache database damaged ({exc}); rebuilt empty")
            self._remove_database(self.directory)
            self._disk = self._open(self.directory)
            return
        self._note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        import diskcache

        found: dict[str, Any] = {}
        unreadable: list[str] = []
        for key in keys:
            value = self._memory.get(key)
            if value is None and self._disk is not None:
                try:
                    value = self._disk.get(key)
                except (sqlite3.Error, diskcache.Timeout) as exc:
                    self._database_failed(exc)
                    value = None
                except Exception:  # one entry that no longer unpickles: drop it, go on
                    unreadable.append(key)
                    value = None
            if value is not None:
                found[key] = value
        if unreadable:
            self.drop(unreadable, "do not unpickle")
        return found

    def drop(self, keys: Iterable[str], why: str) -> None:
        """Delete entries a reader could not use, and say so."""
        import diskcache

        count = 0
        for key in keys:
            count += 1
            self._memory.pop(key, None)
            if self._disk is not None:
                try:
                    self._disk.delete(key)
                except (sqlite3.Error, diskcache.Timeout) as exc:
                    self._database_failed(exc)
                except Exception:
                    pass
        if count:
            self._note("cache_corrupt", f"{count} cached entr{'y' if count == 1 else 'ies'} unusable "
                                        f"({why}); dropped and parsed again")

    def set_many(self, items: Mapping[str, Any]) -> None:
        import diskcache

        if not items:
            return
        if self._disk is None:
            self._remember(items)
            return
        try:
            with self._disk.transact():  # one transaction: thousands of entries in one fsync
                for key, value in items.items():
                    self._disk.set(key, value)
        except (sqlite3.Error, diskcache.Timeout) as exc:
            self._remember(items)
            self._database_failed(exc)
            if self._disk is not None and failure_kind(exc) == "corrupt":
                self.set_many(items)  # into the rebuilt database
        except _STORE_ERRORS as exc:
            self._remember(items)
            self._close_disk()
            self._note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")

    def _remember(self, items: Mapping[str, Any]) -> None:
        for key, value in items.items():
            self._memory[key] = value
            self._memory.move_to_end(key)
        while len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)

    def clear(self) -> int:
        import diskcache

        self._memory.clear()
        if self._disk is None:
            return 0
        try:
            return int(self._disk.clear())
        except (sqlite3.Error, diskcache.Timeout, OSError) as exc:
            self._close_disk()
            self._note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc})")
            return 0

    def close(self) -> None:
        if self._disk is not None:
            self._close_disk()


def tags_key(language_fingerprint: str, sha256: str, extraction: str) -> str:
    return f"tags:{CACHE_SCHEMA}.{VALUE_SHAPE}:{language_fingerprint}:{extraction}:{sha256}"
