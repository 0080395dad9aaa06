"""Hybrid symbol search: the index and every ready server's ``workspace/symbol``, side by side.

``search_symbols`` in hybrid mode (the default) asks each READY language server whose
``initialize`` answer offers ``workspaceSymbolProvider`` for the query while the index answers,
each bounded by ``search_server_timeout``: a server that errors, or has not answered by then,
is left out of this answer (its :class:`~.search.ServerAnswer` says ``timeout`` or ``error``
and why) and the index's matches stand. Servers are not started for a search unless the caller
gives a ``server_wait`` (a long-lived map's servers, started by its hybrid maps, are used as
they are).

A server's answer is untrusted like the repository it read: each location must be a ``file:``
URI resolving (symbolic links followed) to a regular file inside the root, and one the listing
holds (or would hold, where ``max_files`` cut it: not in ``walk_exclude_dirs``, not excluded,
not untracked build output; :class:`~.sources.lsp.lookup.RepositoryFiles`), so a server reading
a virtualenv or ignored output inside the root cannot fill the answer with site-packages. Names
and kinds are read as the outline reads them (:mod:`.sources.lsp.symbols`); what is kept is
merged with the index's matches by :mod:`.search_merge`, every string made safe on output.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ServerError
from ..model import FileStatus
from ..settings import Settings
from ..sources.lsp.lookup import RepositoryFiles
from ..workspace.walk import read_source
from .search import ServerAnswer, SymbolIndex, SymbolSearch, normalized
from .search_merge import ServerSymbol, merge_hits

if TYPE_CHECKING:
    from ..sources.base import SourceView
    from ..sources.lsp.lookup import Located
    from ..sources.lsp.session import LspSession
    from ..sources.lsp.source import LspSource
    from ..workspace.state import Snapshot


async def search_with_servers(
    lsp: LspSource,
    snapshot: Snapshot,
    base: SourceView,
    index: SymbolIndex,
    index_search: Callable[[], SymbolSearch],
    query: str,
    *,
    limit: int,
    kind: str | None,
    path: str | None,
    wait: float,
    settings: Settings,
) -> SymbolSearch:
    """``index_search()`` (run in a worker thread) merged with the ready servers' hits for
    ``query``; ``wait`` > 0 starts the servers and waits up to that long for them first."""
    from ..sources.lsp.lookup import ready_sessions

    searching = asyncio.ensure_future(asyncio.to_thread(index_search))
    try:
        sessions = await ready_sessions(lsp, snapshot, base, wait) if normalized(query) else []
        asking = [s for s in sessions if s.supports("workspace_symbol_provider")]
        root = snapshot.root
        keep = _Keep(root, settings, snapshot)
        # Servers match one word fuzzily (ty finds nothing for "unique helper"): words run together.
        asked = await asyncio.gather(*(_ask(s, "".join(query.split()), keep, settings) for s in asking))
    finally:
        found = await searching  # the index's answer stands whatever the servers did
    if not asked:
        return found
    hits = [hit for symbols, _ in asked for hit in symbols]
    answered = replace(found, servers=tuple(answer for _, answer in asked))
    from ..sources.lsp.symbols import is_import_line

    lines = _SourceLines(root, settings)

    def merge() -> SymbolSearch:
        return merge_hits(
            answered,
            hits,
            index,
            limit=limit,
            kind=kind,
            path=path,
            read_line=lines.line,
            defines=lambda text: not is_import_line(text.encode("utf-8", "surrogateescape")),
        )

    return await asyncio.to_thread(merge)


async def _ask(
    session: LspSession, query: str, keep: _Keep, settings: Settings
) -> tuple[list[ServerSymbol], ServerAnswer]:
    from ..sources.lsp.lookup import workspace_symbols

    source = f"lsp:{session.config.name}"
    where = keep.project_root(session)
    timeout = settings.search_server_timeout
    started = time.monotonic()
    try:
        located = await workspace_symbols(session, query, timeout)
    except (TimeoutError, ServerError) as exc:
        seconds = time.monotonic() - started
        if isinstance(exc, TimeoutError) or "timed out" in str(exc) or seconds >= timeout:
            detail = f"no workspace/symbol answer within search_server_timeout = {timeout:g}s: index matches only"
            return [], ServerAnswer(source, where, "timeout", seconds=seconds, detail=detail)
        return [], ServerAnswer(source, where, "error", seconds=seconds, detail=f"{str(exc)[:300]}: index matches only")
    seconds = time.monotonic() - started
    symbols, dropped = await asyncio.to_thread(keep.symbols, located, source, settings.search_server_max_hits)
    return symbols, ServerAnswer(source, where, "answered", len(located), len(symbols), dropped, seconds)


class _Keep(RepositoryFiles):
    """What a search keeps of a server's answer: definitions in the repository's files."""

    def symbols(self, located: Sequence[Located], source: str, max_hits: int) -> tuple[list[ServerSymbol], int]:
        """The definitions of an answer kept, and how many of its symbols were dropped."""
        from lsprotocol import types as T

        from ..sources.lsp.symbols import KIND_NAMES, plain_name

        out: list[ServerSymbol] = []
        for item in located[:max_hits]:
            try:
                kind = KIND_NAMES.get(T.SymbolKind(item.kind))
            except ValueError:
                kind = None
            name = plain_name(item.name)
            rel = self.path(item.uri) if kind is not None and name else None
            if rel is not None and kind is not None:
                out.append(ServerSymbol(source, name, kind, rel, item.line + 1, item.end_line + 1, item.container))
        return out, len(located) - len(out)


class _SourceLines:
    """The source line at a 1-based line of a file inside the root (read safely, each file once)."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root, self.settings = root, settings
        self._files: dict[str, list[bytes]] = {}

    def line(self, path: str, line: int) -> str:
        lines = self._files.get(path)
        if lines is None:
            read = read_source(self.root, path, self.settings)
            lines = read.data.split(b"\n") if read.status is FileStatus.OK else []
            self._files[path] = lines
        if not 1 <= line <= len(lines):
            return ""
        return lines[line - 1].decode("utf-8", "replace").strip()
