"""The one place hybridmap touches its disk cache.

Entries are keyed by *content* (sha256 of the bytes parsed) plus everything else
the value depends on (schema version, grammar + query fingerprint, extraction
settings), never by path or mtime: a renamed file hits, an edited one misses, a
cache written by another version simply misses.

A cache must never stop a map. Opening a corrupt cache removes its database
files and starts afresh once; an unwritable or still-broken cache turns into an
in-memory dict for this process. Either way a :class:`Diagnostic` says so.
"""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .model import Diagnostic

#: Bump when the shape of cached values changes.
CACHE_SCHEMA = 1

_CACHE_ERRORS = (sqlite3.Error, OSError, pickle.UnpicklingError, EOFError, AttributeError,
                 ImportError, TypeError, ValueError)


class Cache:
    """diskcache with a safe fallback. Thread-safe for our use (diskcache is)."""

    def __init__(self, directory: Path | None, size_limit: int = 2**30) -> None:
        self.directory = directory
        self.diagnostics: list[Diagnostic] = []
        self._memory: dict[str, Any] = {}
        self._disk: Any = None
        if directory is not None:
            self._disk = self._open(directory, size_limit)

    @property
    def persistent(self) -> bool:
        return self._disk is not None

    def _note(self, kind: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(str(self.directory or "<cache>"), kind, message))

    def _open(self, directory: Path, size_limit: int) -> Any:
        import diskcache

        for attempt in (1, 2):
            try:
                directory.mkdir(parents=True, exist_ok=True)
                return diskcache.Cache(str(directory), size_limit=size_limit)
            except sqlite3.DatabaseError as exc:
                if attempt == 1 and "readonly" not in str(exc) and "unable to open" not in str(exc):
                    self._note("cache_corrupt", f"cache database unreadable ({exc}); rebuilding it")
                    self._remove_database(directory)
                    continue
                self._note("cache_unavailable", f"cannot use cache ({exc}); running without it")
                return None
            except OSError as exc:
                self._note("cache_unavailable", f"cannot use cache ({exc.strerror or exc}); running without it")
                return None
        return None

    @staticmethod
    def _remove_database(directory: Path) -> None:
        # Only our own database files: the directory may be shared with other things.
        for name in ("cache.db", "cache.db-wal", "cache.db-shm"):
            try:
                (directory / name).unlink()
            except OSError:
                pass

    def _disable(self, exc: BaseException) -> None:
        self._note("cache_unavailable", f"cache failed ({type(exc).__name__}: {exc}); continuing in memory")
        try:
            self._disk.close()
        except Exception:
            pass
        self._disk = None

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key in keys:
            value = self._memory.get(key)
            if value is None and self._disk is not None:
                try:
                    value = self._disk.get(key)
                except _CACHE_ERRORS as exc:
                    # One bad entry: drop it and go on; a broken database: stop using it.
                    if isinstance(exc, sqlite3.Error):
                        self._disable(exc)
                    else:
                        self._forget(key)
                    value = None
            if value is not None:
                found[key] = value
        return found

    def _forget(self, key: str) -> None:
        try:
            self._disk.delete(key)
        except _CACHE_ERRORS:
            pass

    def set_many(self, items: Mapping[str, Any]) -> None:
        if not items:
            return
        if self._disk is None:
            self._memory.update(items)
            return
        try:
            with self._disk.transact():  # one transaction: thousands of entries in one fsync
                for key, value in items.items():
                    self._disk.set(key, value)
        except _CACHE_ERRORS as exc:
            self._disable(exc)
            self._memory.update(items)

    def clear(self) -> int:
        self._memory.clear()
        if self._disk is None:
            return 0
        try:
            return int(self._disk.clear())
        except _CACHE_ERRORS as exc:
            self._disable(exc)
            return 0

    def close(self) -> None:
        if self._disk is not None:
            try:
                self._disk.close()
            except Exception:
                pass
            self._disk = None


def tags_key(language_fingerprint: str, sha256: str, extraction: str) -> str:
    return f"tags:{CACHE_SCHEMA}:{language_fingerprint}:{extraction}:{sha256}"
