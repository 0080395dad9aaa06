"""Questions a lookup asks the running servers: ``workspace/symbol`` and ``textDocument/references``.

The map's work (definitions, symbols, hovers) goes through :class:`~.source.LspSource`'s queue;
the lookups (``hybridmap search``, ``hybridmap dead``) ask once and need the answer now, so they
talk to the pool's sessions directly, each question bounded by the caller's time:

- :func:`ready_sessions`: the servers that are READY for the snapshot's languages; with a wait,
  they are started first (as a map that waits starts them) and waited for, each up to the wait;
- :func:`workspace_symbols` and :func:`references`: one request each, the answer read into plain
  tuples whatever shape the server used (lsprotocol objects, or the raw dicts it could not read).

Locations are the server's word about *where*, and the server reads a repository we do not
trust: :func:`location_path` keeps a ``file:`` URI only when it resolves (symbolic links
followed) to a regular file inside the root; anything else is dropped by the callers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from ...infra.boundaries import inside
from ...settings import Settings
from ...workspace.walk import PathFilter

if TYPE_CHECKING:
    from ...workspace.state import Snapshot
    from ..base import SourceView
    from .documents import Documents
    from .session import LspSession
    from .source import LspSource


@dataclass(frozen=True, slots=True)
class Located:
    """One location of an answer: where (``uri``, 0-based lines) and, for a symbol, what."""

    uri: str
    line: int
    end_line: int
    name: str = ""
    kind: int = 0
    """LSP ``SymbolKind`` number (0: not a symbol)."""
    container: str | None = None


async def ready_sessions(lsp: LspSource, snapshot: Snapshot, base: SourceView, wait: float) -> list[LspSession]:
    """The live, READY servers of the snapshot's languages, one per (server, project root).

    ``wait`` > 0 starts the servers the snapshot needs (within ``lsp_max_servers``, as a map
    does) and waits up to ``wait`` seconds for each to be ready; 0 takes what is ready now.
    Every live server is told what changed on disk since it last heard (didChangeWatchedFiles)."""
    pool = lsp.pool
    if wait <= 0 and not any(s.alive and s.is_ready for s in pool.sessions()):
        return []  # nothing to ask, and nothing to load (the documents' engine imports lsprotocol)
    found = pool.assign(snapshot.languages)
    documents = lsp.documents
    documents.refresh(snapshot.shas, snapshot.languages, [s for s in pool.sessions() if s.alive])
    if wait > 0:
        for language, root in pool.select(found):
            paths = [p for p in found[(language, root)] if p in base.tags]
            first = max(paths, key=lambda p: len(base.tags[p].ref_names), default=None)

            def warm(session: LspSession, first: str | None = first) -> None:
                # tsserver loads a project, and answers about it, only once one of its files is open.
                if first is not None:
                    documents.ensure_open(session, first)

            pool.ensure_started(language, warm, root)
        await pool.wait_ready(sorted({language for language, _ in found}), wait)
        documents.refresh(snapshot.shas, snapshot.languages, [s for s in pool.sessions() if s.alive])
    return [s for s in pool.sessions() if s.alive and s.is_ready]


def location_path(root: Path, uri: str) -> str | None:
    """The root-relative path of a ``file:`` URI that resolves to a regular file inside ``root``
    (an already-resolved directory); None for any other scheme, a path outside (``..``, a
    symbolic link leading out), a missing file or a directory."""
    try:
        parsed = urlparse(uri)
    except ValueError:
        return None
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    raw = unquote(parsed.path, errors="surrogateescape")
    if not raw.startswith("/") or "\x00" in raw:
        return None
    try:
        target = Path(raw).resolve()
        if not inside(root, target) or target == root or not target.is_file():
            return None
    except (OSError, RuntimeError, ValueError):
        return None
    return target.relative_to(root).as_posix()


class RepositoryFiles:
    """Which server locations are the repository's: a file inside the root (:func:`location_path`)
    that the listing holds, or, when ``max_files`` (or ``max_listed_paths``) cut the listing,
    would hold without the cut (not excluded, not in ``walk_exclude_dirs``, not untracked build
    output). An unlisted file of a listing that was not cut is one it leaves out on purpose
    (ignored, excluded): a server reading a virtualenv or build output inside the root cannot
    fill an answer with it."""

    def __init__(self, root: Path, settings: Settings, snapshot: Snapshot) -> None:
        self.root = root
        self.listed = snapshot.files
        self.cut = any(d.kind == "too_many_files" for d in snapshot.diagnostics)
        self.excluded_dirs = frozenset(settings.walk_exclude_dirs)
        self.filter = PathFilter(settings)

    def project_root(self, session: LspSession) -> str:
        """The session's project root relative to the root (``.``: the root itself)."""
        try:
            rel = Path(session.root).relative_to(self.root).as_posix()
        except ValueError:
            return "."
        return rel or "."

    def path(self, uri: str) -> str | None:
        """The root-relative path of a repository file ``uri`` names, else None."""
        rel = location_path(self.root, uri)
        if rel is None or rel in self.listed:
            return rel
        if not self.cut or any(part in self.excluded_dirs for part in rel.split("/")[:-1]):
            return None
        return rel if self.filter.keep(rel, tracked=False) else None


async def workspace_symbols(session: LspSession, query: str, timeout: float) -> list[Located]:
    """``workspace/symbol`` for ``query``: the answer's symbols (raises ServerError or TimeoutError)."""
    from lsprotocol import types as T

    result = await asyncio.wait_for(
        session.request(T.WORKSPACE_SYMBOL, T.WorkspaceSymbolParams(query=query), timeout=timeout),
        timeout,
    )
    return [found for item in (result or []) if (found := _symbol(item)) is not None]


async def references(
    session: LspSession, documents: Documents, path: str, line: int, col: int, timeout: float
) -> list[Located] | None:
    """``textDocument/references`` (declaration included) at 0-based ``line`` and UTF-8 byte
    ``col`` of ``path``; None when the file cannot be sent. Raises ServerError or TimeoutError."""
    from lsprotocol import types as T

    from .symbols import utf16_col

    lines = documents.ensure_open(session, path)
    if lines is None or line >= len(lines):
        return None
    character = col if session.position_encoding == "utf-8" else utf16_col(lines[line], col)
    params = T.ReferenceParams(
        text_document=T.TextDocumentIdentifier(uri=documents.uri(path)),
        position=T.Position(line=line, character=character),
        context=T.ReferenceContext(include_declaration=True),
    )
    result = await asyncio.wait_for(session.request(T.TEXT_DOCUMENT_REFERENCES, params, timeout=timeout), timeout)
    items: Sequence[Any] = result if isinstance(result, list) else []
    return [found for item in items if (found := _location(item)) is not None]


def _field(item: Any, *names: str) -> Any:
    """The first of ``names`` present on an lsprotocol object or a raw dict (camelCase there)."""
    for name in names:
        if isinstance(item, dict):
            camel = "".join(w if i == 0 else w.capitalize() for i, w in enumerate(name.split("_")))
            if camel in item:
                return item[camel]
        elif getattr(item, name, None) is not None:
            return getattr(item, name)
    return None


def _lines(rng: Any) -> tuple[int, int] | None:
    start, end = _field(rng, "start"), _field(rng, "end")
    first, last = _field(start, "line"), _field(end, "line")
    if not isinstance(first, int) or isinstance(first, bool) or first < 0:
        return None
    if not isinstance(last, int) or isinstance(last, bool) or last < first:
        last = first
    return first, last


def _location(item: Any) -> Located | None:
    uri = _field(item, "uri")
    lines = _lines(_field(item, "range"))
    if not isinstance(uri, str) or lines is None:
        return None
    return Located(uri, *lines)


def _symbol(item: Any) -> Located | None:
    """A ``SymbolInformation`` or ``WorkspaceSymbol``; None without a name or a range (a
    ``WorkspaceSymbol`` may carry only its URI until resolved: it is not asked again)."""
    where = _location(_field(item, "location"))
    name, kind, container = _field(item, "name"), _field(item, "kind"), _field(item, "container_name")
    if where is None or not isinstance(name, str) or not name:
        return None
    number = int(kind) if isinstance(kind, int) else 0
    within = container if isinstance(container, str) else None
    return Located(where.uri, where.line, where.end_line, name, number, within)


__all__ = ["Located", "RepositoryFiles", "location_path", "ready_sessions", "references", "workspace_symbols"]
