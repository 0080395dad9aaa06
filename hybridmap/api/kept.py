"""What one process keeps for the next on the same root: the files' states, the lexical models,
a one-shot process's static graph and its files' tags keys.

A one-shot map (the CLI without its daemon) starts with nothing; what the last process on the
root knew is kept in the cache directory, only when that directory is the user's alone
(``Cache.persistent``): the files' trusted stat signatures (:mod:`hybridmap.workspace.persisted`:
a file whose signature did not move is not read) and the text-similarity signal's models
(:mod:`hybridmap.store.lexicon`: only changed files' words are counted), the graph
(:mod:`hybridmap.store.kept_graph`: a one-shot map of unchanged files adopts it) and each file's
tags key (:mod:`hybridmap.store.kept_keys`: an unchanged file's cache record is read only when its
tags are). Each is read once, at first need, and written when the process ends, if it learned
something new.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from ..settings import Settings
from ..store.cache import Cache
from ..store.kept_graph import KeptGraph, kept_graph_path, load_graph, save_graph
from ..store.kept_keys import KeptKeys, kept_keys_path, load_keys, save_keys
from ..store.lexicon import KeptLexicon, lexicon_path, load_lexicon, save_lexicon
from ..workspace.persisted import load_states, save_states, states_path
from ..workspace.state import FileState


class KeptForNextProcess:
    """The paths of one root's kept states and models, their first read and their last write."""

    def __init__(self, root: Path, settings: Settings, cache: Cache) -> None:
        self._root = root
        self._cache = cache
        self._max_files = settings.max_files
        directory = cache.directory if settings.use_cache else None
        self._states = states_path(directory, root) if directory is not None and settings.persist_snapshot else None
        self._lexicon = (
            lexicon_path(directory, str(root)) if directory is not None and settings.persist_lexicon else None
        )
        self._graph = (
            kept_graph_path(directory, str(root)) if directory is not None and settings.persist_graph else None
        )
        self._keys = kept_keys_path(directory, str(root)) if directory is not None and settings.persist_graph else None
        self.files_read = 0
        """Files this process's refreshes read: when none, the kept states are still right."""

    def _usable(self, path: Path | None) -> Path | None:
        return path if path is not None and self._cache.persistent else None  # a directory only the user can write

    def states(self) -> dict[str, FileState]:
        """The files' states the last process kept (empty: none, off, or not ours)."""
        path = self._usable(self._states)
        return load_states(path, self._root, self._max_files) if path is not None else {}

    def lexicon_reader(self) -> Callable[[], KeptLexicon | None] | None:
        """How the map builder reads the kept lexical models when it first needs them (None: off)."""
        path = self._usable(self._lexicon)
        return partial(load_lexicon, path, str(self._root), self._max_files) if path is not None else None

    def graph_reader(self) -> Callable[[str], KeptGraph | None] | None:
        """How the map builder reads the kept graph built from a digest (None: off)."""
        path = self._usable(self._graph)
        return partial(load_graph, path, str(self._root), max_files=self._max_files) if path is not None else None

    def keys_reader(self) -> Callable[[], KeptKeys | None] | None:
        """How the tree-sitter source reads the kept tags keys at its first index (None: off)."""
        path = self._usable(self._keys)
        return partial(load_keys, path, str(self._root), self._max_files) if path is not None else None

    async def save(
        self,
        files: Mapping[str, FileState],
        lexicon: Callable[[], KeptLexicon | None],
        graph: Callable[[], KeptGraph | None] = lambda: None,
        keys: Callable[[], KeptKeys | None] = lambda: None,
    ) -> None:
        """Keep ``files``' states when this process read any, the models ``lexicon`` gives (None
        when this process counted no words of its own), the graph ``graph`` gives (None when it
        built none to keep) and the tags keys ``keys`` gives (None when it learned none), each in
        a worker thread."""
        states = self._usable(self._states)
        if states is not None and files and self.files_read:
            await asyncio.to_thread(save_states, states, self._root, files)
        path = self._usable(self._lexicon)
        if path is not None:
            kept = await asyncio.to_thread(lexicon)
            if kept is not None:
                await asyncio.to_thread(save_lexicon, path, str(self._root), kept)
        path = self._usable(self._graph)
        if path is not None:
            held = await asyncio.to_thread(graph)
            if held is not None:
                await asyncio.to_thread(save_graph, path, str(self._root), held)
        path = self._usable(self._keys)
        if path is not None:
            tags_keys = await asyncio.to_thread(keys)
            if tags_keys is not None:
                await asyncio.to_thread(save_keys, path, str(self._root), tags_keys)
