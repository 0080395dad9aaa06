"""What :class:`~hybridmap.api.repo.AsyncRepoMap`'s lookup calls keep between calls, and their work.

The API's methods (``search_symbols``, ``find_files``, ``agent_notes``, ``dead_code``,
``clones``, ``stats``) are a few lines each: they bring the snapshot up to date (under the map's
lock) and hand it here, where the work runs in a worker thread. This object owns the symbol
index (:mod:`.search`), updated from the tags of changed files only.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from ..features.clones import CloneGroup, find_clones, function_shapes
from ..features.file_search import FileSearch, listing_chunks, stream_matches
from ..features.search import SymbolIndex, SymbolSearch
from ..languages.registry import LanguageRegistry
from ..model import FileTags
from ..settings import Settings
from ..workspace.state import Progress, Snapshot


class Lookups:
    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self._index: SymbolIndex | None = None
        self._lock = threading.Lock()

    @property
    def index(self) -> SymbolIndex:
        with self._lock:
            if self._index is None:
                self._index = SymbolIndex()
            return self._index

    def search_symbols(
        self,
        snapshot: Snapshot,
        tags: Mapping[str, FileTags],
        query: str,
        limit: int,
        kind: str | None,
        path: str | None,
    ) -> SymbolSearch:
        index = self.index
        index.update(tags, snapshot.shas)
        return index.search(query, limit=limit, kind=kind, path=path)

    def find_files(self, query: str, limit: int) -> FileSearch:
        *_, last = stream_matches(query, listing_chunks(self.root, self.settings), limit)
        return last  # the stream always ends with the done result

    def clones(
        self,
        tags: Mapping[str, FileTags],
        languages: Mapping[str, str],
        registry: LanguageRegistry,
        threshold: float | None,
        progress: Progress | None = None,
    ) -> tuple[CloneGroup, ...]:
        shapes = function_shapes(self.root, tags, languages, registry, self.settings, progress)
        return find_clones(shapes, self.settings.clone_similarity if threshold is None else threshold)

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
