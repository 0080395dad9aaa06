"""The work of :class:`~hybridmap.api.repo.AsyncRepoMap`'s lookup calls, and what they keep
between calls.

The API's methods (``search_symbols``, ``find_files``, ``dead_code``, ``clones``) check their
arguments and bring the snapshot up to date (under the map's lock), then hand it here: the
computation runs in a worker thread, the servers' part on the map's event loop. This object
owns the symbol index (:mod:`hybridmap.features.search`), updated from the tags of changed
files only.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..features.clones import CloneGroup, find_clones, function_shapes
from ..features.dead_code import DeadCode, find_dead
from ..features.dead_servers import confirm_with_servers
from ..features.file_search import FileSearch, listing_chunks, stream_matches
from ..features.search import SymbolIndex, SymbolSearch
from ..features.search_servers import search_with_servers
from ..languages.registry import LanguageRegistry
from ..model import FileTags, Mode
from ..settings import Settings
from ..workspace.state import Progress, Snapshot
from .engine import MapEngine


class Lookups:
    def __init__(self, root: Path, settings: Settings, registry: LanguageRegistry, engine: MapEngine) -> None:
        self.root = root
        self.settings = settings
        self._registry = registry
        self._engine = engine
        self._index: SymbolIndex | None = None
        self._lock = threading.Lock()

    @property
    def index(self) -> SymbolIndex:
        with self._lock:
            if self._index is None:
                self._index = SymbolIndex()
            return self._index

    async def search_symbols(
        self,
        snapshot: Snapshot,
        query: str,
        limit: int,
        kind: str | None,
        path: str | None,
        mode: Mode,
        server_wait: float,
    ) -> SymbolSearch:
        base = self._engine.view(snapshot)
        search = functools.partial(self._search, snapshot, base.tags, query, limit, kind, path)
        lsp = self._engine.lsp
        if mode == "static" or lsp is None or self.settings.search_server_timeout <= 0:
            return await asyncio.to_thread(search)
        return await search_with_servers(
            lsp,
            snapshot,
            base,
            self.index,
            search,
            query,
            limit=limit,
            kind=kind,
            path=path,
            wait=server_wait,
            settings=self.settings,
        )

    def _search(
        self,
        snapshot: Snapshot,
        tags: Mapping[str, FileTags],
        query: str,
        limit: int,
        kind: str | None,
        path: str | None,
    ) -> SymbolSearch:
        index = self.index
        indexed = index.update(tags, snapshot.shas)
        return replace(index.search(query, limit=limit, kind=kind, path=path), files_indexed=indexed)

    async def find_files(self, query: str, limit: int) -> FileSearch:
        def run() -> FileSearch:
            *_, last = stream_matches(query, listing_chunks(self.root, self.settings), limit)
            return last  # the stream always ends with the done result

        return await asyncio.to_thread(run)

    async def dead_code(
        self, snapshot: Snapshot, mode: Mode, server_wait: float, progress: Progress | None
    ) -> DeadCode:
        base = self._engine.view(snapshot)
        exported = self._registry.exported_conventions()
        found = await asyncio.to_thread(find_dead, base.tags, snapshot.languages, exported)
        lsp = self._engine.lsp
        if mode == "static" or lsp is None or not found.definitions:
            return found
        return await confirm_with_servers(found, base.tags, lsp, snapshot, base, server_wait, self.settings, progress)

    async def clones(
        self, snapshot: Snapshot, threshold: float | None, progress: Progress | None
    ) -> tuple[CloneGroup, ...]:
        tags, languages = self._engine.view(snapshot).tags, snapshot.languages

        def run() -> tuple[CloneGroup, ...]:
            shapes = function_shapes(self.root, tags, languages, self._registry, self.settings, progress)
            return find_clones(shapes, self.settings.clone_similarity if threshold is None else threshold)

        return await asyncio.to_thread(run)

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
