"""``ScipSource``: a SCIP index as a refining source (see ``docs/scip.md``).

The index is read lazily and kept while the file's (size, mtime) stay the same. Per map,
:meth:`ScipSource.view` answers for the documents whose content is still what was indexed:

* **fresh**: the sidecar written by ``hybridmap index`` (``<index>.files.json``) names the same
  sha256 as the snapshot; without a sidecar, the file is not newer than the index (mtime; a
  diagnostic says staleness was judged that way). The bytes read to convert columns must hash
  to the snapshot's sha256 too, or the file changed under us and counts as stale;
* a **stale** document falls back to the other sources: it is left out of ``tags``, is no
  pair's source, and a pair whose symbol it defines is left unresolved (name matching decides);
* ``resolved[(S, ident)]``: the files defining what the uses of ``ident`` in fresh ``S`` refer
  to, for identifiers tree-sitter saw referenced in ``S``; an empty set when every such use is
  of a symbol from outside the repository (another package). A use of a symbol of the
  repository's own packages that no document defines leaves the pair unresolved.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...model import Diagnostic, FileTags, HoverKey, Pair, Provenance
from ...settings import Settings
from ...workspace.walk import read_source
from ..base import PassiveSource, SourceRequest, SourceView
from .facts import FileFacts, SymbolNames, file_facts
from .loaded import LoadedIndex, index_key, load_index
from .wire import WireError

if TYPE_CHECKING:
    from ...workspace.state import ChangeSet


class SnapshotLike(Protocol):
    """What :meth:`ScipSource.view` reads of a snapshot (``workspace.Snapshot`` has it)."""

    @property
    def root(self) -> Path: ...

    @property
    def languages(self) -> Mapping[str, str]: ...

    @property
    def shas(self) -> Mapping[str, str]: ...


class ScipSource(PassiveSource):
    """Symbols and resolved uses from the SCIP index at ``index_path`` (see module docstring)."""

    name = Provenance.SCIP.value

    def __init__(self, root: Path, settings: Settings, index_path: Path | str) -> None:
        self._root = root
        self._settings = settings
        self._index_path = Path(index_path).expanduser()
        self._loaded: LoadedIndex | None = None
        self._load_error: tuple[tuple[int, int] | None, str] | None = None
        self._names = SymbolNames()
        self._facts: dict[str, tuple[str, FileFacts]] = {}
        """path -> (sha256 the facts were made from, facts): reused while the file is unchanged."""
        self._last: tuple[dict[str, FileTags], dict[Pair, frozenset[str]]] | None = None
        self._version = 0
        self._health: list[Diagnostic] = []

    async def update(self, snapshot: object, changes: ChangeSet, base: SourceView, request: SourceRequest) -> None:
        # Decoding a large index takes seconds: off the event loop, before the map needs it.
        await asyncio.to_thread(self._load)

    def health(self) -> list[Diagnostic]:
        return list(self._health)

    def _load(self) -> LoadedIndex | None:
        """The index, read again only when its (size, mtime) changed; None when unusable."""
        key = index_key(self._index_path)
        if self._loaded is not None and self._loaded.key == key:
            return self._loaded
        if self._load_error is not None and self._load_error[0] == key:
            return None
        if key is None:
            self._fail(None, f"{self._index_path}: no such index (build it with: hybridmap index ROOT)")
            return None
        try:
            loaded = load_index(self._root, self._index_path)
        except (OSError, WireError) as exc:
            self._fail(key, f"{self._index_path}: not a usable SCIP index ({exc})")
            return None
        self._loaded, self._load_error = loaded, None
        self._facts.clear()
        self._names = SymbolNames()
        return loaded

    def _fail(self, key: tuple[int, int] | None, message: str) -> None:
        self._loaded, self._load_error = None, (key, message)
        self._facts.clear()

    def view(self, snapshot: SnapshotLike, base: SourceView) -> SourceView:
        loaded = self._load()
        if loaded is None:
            message = self._load_error[1] if self._load_error else "no index"
            self._health = [Diagnostic("", "scip_index", message)]
            return self._finish({}, {}, {}, {"scip_fresh": 0.0})
        shas = snapshot.shas
        fresh, stale = self._fresh(loaded, shas)
        tags: dict[str, FileTags] = {}
        details: dict[HoverKey, str] = {}
        for path, facts in fresh.items():
            tags[path] = facts.tags
            details.update(facts.details)
        resolved = self._resolve(loaded, fresh, base)
        self._health = [*loaded.diagnostics, *self._staleness(loaded, stale)]
        stats = {
            **loaded.stats,
            "scip_fresh": float(len(fresh)),
            "scip_stale": float(len(stale)),
            "scip_resolved_pairs": float(len(resolved)),
        }
        return self._finish(tags, resolved, details, stats)

    def _finish(
        self,
        tags: dict[str, FileTags],
        resolved: dict[Pair, frozenset[str]],
        details: dict[HoverKey, str],
        stats: dict[str, float],
    ) -> SourceView:
        if self._last is None or self._last != (tags, resolved):
            self._last = (tags, resolved)
            self._version += 1
        return SourceView(self.name, tags, resolved, details, tuple(self._health), stats, self._version)

    def _fresh(self, loaded: LoadedIndex, shas: Mapping[str, str]) -> tuple[dict[str, FileFacts], list[str]]:
        """Facts of every document still describing its file; the paths of the stale ones."""
        fresh: dict[str, FileFacts] = {}
        stale: list[str] = []
        for path, documents in loaded.documents.items():
            sha = shas.get(path)
            if sha is None:
                continue  # not in this map (deleted, ignored, unreadable): nothing to describe
            if not self._unchanged(loaded, path, sha):
                stale.append(path)
                continue
            cached = self._facts.get(path)
            if cached is not None and cached[0] == sha:
                fresh[path] = cached[1]
                continue
            result = read_source(self._root, path, self._settings)
            if result.sha256 != sha:  # changed since the snapshot was taken: stale for now
                stale.append(path)
                continue
            facts = file_facts(path, documents, result.data, self._names, self._settings.lsp_detail_max_chars)
            self._facts[path] = (sha, facts)
            fresh[path] = facts
        for path in [p for p in self._facts if p not in fresh]:
            del self._facts[path]
        return fresh, stale

    def _unchanged(self, loaded: LoadedIndex, path: str, sha: str) -> bool:
        if loaded.sidecar is not None:
            return loaded.sidecar.get(path) == sha
        try:
            # The snapshot listed this path (the walk checked it is inside the root): stat only.
            return os.stat(self._root / path).st_mtime_ns <= loaded.mtime_ns
        except OSError:
            return False

    def _resolve(
        self, loaded: LoadedIndex, fresh: Mapping[str, FileFacts], base: SourceView
    ) -> dict[Pair, frozenset[str]]:
        resolved: dict[Pair, frozenset[str]] = {}
        for path, facts in fresh.items():
            static = base.tags.get(path)
            if static is None or not facts.uses:
                continue
            referenced = set(static.ref_names)
            targets: dict[str, set[str]] = {}
            unknown: set[str] = set()
            for ident, symbol in facts.uses:
                if ident not in referenced or ident in unknown:
                    continue
                defined = loaded.definitions.get(symbol)
                if defined is None:
                    parsed = self._names.get(symbol)
                    if parsed is not None and parsed.package in loaded.packages:
                        unknown.add(ident)  # ours, yet no document defines it: do not guess
                    else:
                        targets.setdefault(ident, set())  # another package: outside the repository
                elif all(target in fresh for target in defined):
                    targets.setdefault(ident, set()).update(defined)
                else:
                    unknown.add(ident)  # defined in a stale or unmapped file: name matching decides
            for ident, files in targets.items():
                if ident not in unknown:
                    resolved[(path, ident)] = frozenset(files)
        return resolved

    def _staleness(self, loaded: LoadedIndex, stale: Sequence[str]) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        if loaded.sidecar is None:
            out.append(
                Diagnostic(
                    "",
                    "scip_mtime",
                    f"{self._index_path.name} has no {self._index_path.name}.files.json: staleness judged by "
                    "modification time (a file newer than the index is stale)",
                )
            )
        if stale:
            shown = ", ".join(sorted(stale)[:3])
            out.append(
                Diagnostic(
                    "",
                    "scip_stale",
                    f"{len(stale)} indexed files changed since the index was built ({shown}); they use the "
                    "other sources (rebuild with: hybridmap index ROOT)",
                )
            )
        return out
