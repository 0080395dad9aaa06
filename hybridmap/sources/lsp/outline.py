"""Ask servers for each file's symbols (``documentSymbol``) and, bounded, for hovers.

Answers are kept per file together with the content hash they describe and
cached on disk by (server, version, config, content) when the server was ready
both before and after answering. An answer from a server still indexing is
kept in memory (document symbols are syntactic for most servers) but never
cached, and the file is asked again once the server is ready.

Hover is the fallback for ``detail`` (ty, basedpyright and tsserver leave it
empty): asked only for symbols a map actually shows, at most
``lsp_hover_per_map`` per map.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as T

from ...errors import ServerError
from ...model import FileTags, HoverKey
from ...settings import Settings
from ...store.cache import Cache
from .answers import cached_answer
from .documents import Documents
from .resolver import server_key
from .session import LspSession
from .symbols import detail_from_hover, shows_outside_content, symbols_from_answer, utf16_col


@dataclass(frozen=True, slots=True)
class _Outline:
    sha: str
    tags: FileTags
    complete: bool


class OutlineFetcher:
    def __init__(self, root: Path, cache: Cache, settings: Settings) -> None:
        self._root = root
        self._cache = cache
        self._settings = settings
        self._outlines: dict[str, _Outline] = {}
        self._hovers: dict[HoverKey, tuple[str, str]] = {}  # key → (sha, detail)
        self._shas: Mapping[str, str] = {}
        self.stats = {
            "symbol_files": 0,
            "symbol_errors": 0,
            "symbol_cache_hits": 0,
            "hovers": 0,
            "hover_errors": 0,
            "hovers_dropped": 0,
        }
        self.version = 0

    def refresh(self, shas: Mapping[str, str]) -> None:
        self._shas = shas
        for path in [p for p, o in self._outlines.items() if shas.get(p) != o.sha]:
            del self._outlines[path]
            self.version += 1
        for key in [k for k, (sha, _) in self._hovers.items() if shas.get(k[0]) != sha]:
            del self._hovers[key]

    def settled(self) -> frozenset[str]:
        """The files whose symbols the servers gave completely for their current text (those
        :meth:`needs_symbols` says no to), as a copy another thread may read."""
        return frozenset(p for p, o in self._outlines.items() if o.complete and o.sha == self._shas.get(p))

    def needs_symbols(self, path: str) -> bool:
        outline = self._outlines.get(path)
        return outline is None or not outline.complete or outline.sha != self._shas.get(path)

    def needs_hover(self, key: HoverKey) -> bool:
        known = self._hovers.get(key)
        return known is None or known[0] != self._shas.get(key[0])

    def snapshot(self, shas: Mapping[str, str] | None = None) -> dict[str, FileTags]:
        """The answers that describe the files as ``shas`` has them (default: as last refreshed).
        A map may be built on a newer snapshot than the work was planned on (one that does
        not wait: the servers hear of its edits after it): answers about older text are left
        out, never shown as the file's."""
        current = self._shas if shas is None else shas
        return {path: o.tags for path, o in self._outlines.items() if o.sha == current.get(path)}

    def details(self, shas: Mapping[str, str] | None = None) -> dict[HoverKey, str]:
        """Hover details that describe the files as ``shas`` has them (see :meth:`snapshot`)."""
        current = self._shas if shas is None else shas
        return {key: text for key, (sha, text) in self._hovers.items() if text and sha == current.get(key[0])}

    async def fetch_symbols(self, session: LspSession, documents: Documents, path: str) -> None:
        if not self.needs_symbols(path) or not session.supports("document_symbol_provider"):
            return
        sha = self._shas.get(path, "")

        async def ask() -> FileTags | None:
            lines = documents.ensure_open(session, path, sha)
            if lines is None:
                return None
            result = await session.request(
                T.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                T.DocumentSymbolParams(text_document=T.TextDocumentIdentifier(uri=documents.uri(path))),
            )
            return symbols_from_answer(
                result,
                lines,
                session.position_encoding,
                max_signature_lines=self._settings.max_signature_lines,
                detail_chars=self._settings.lsp_detail_max_chars,
            )

        key = f"lsp-sym:3:{server_key(session)}:{self._settings.max_signature_lines}:{sha}"
        try:
            answer = await cached_answer(self._cache, key, ask, lambda: session.is_ready, _file_tags)
        except ServerError:
            self.stats["symbol_errors"] += 1
            return
        if answer is not None:
            self.stats["symbol_cache_hits" if answer.cached else "symbol_files"] += 1
            self._store(path, _Outline(sha, answer.value, answer.complete))

    def _store(self, path: str, outline: _Outline) -> None:
        self._outlines[path] = outline
        self.version += 1

    async def fetch_hover(self, session: LspSession, documents: Documents, key: HoverKey) -> None:
        path, line, col = key
        if not self.needs_hover(key) or not session.supports("hover_provider"):
            return
        sha = self._shas.get(path, "")

        async def ask() -> str | None:
            lines = documents.ensure_open(session, path, sha)
            if lines is None or line >= len(lines):
                return None
            character = col if session.position_encoding == "utf-8" else utf16_col(lines[line], col)
            result = await session.request(
                T.TEXT_DOCUMENT_HOVER,
                T.HoverParams(
                    text_document=T.TextDocumentIdentifier(uri=documents.uri(path)),
                    position=T.Position(line=line, character=character),
                ),
            )
            self.stats["hovers"] += 1
            text = detail_from_hover(result, self._settings.lsp_detail_max_chars)
            if text and shows_outside_content(text, b"\n".join(lines)):
                self.stats["hovers_dropped"] += 1  # it would show content from outside the file
                return ""
            return text

        # A hover shows types resolved through the file's imports: its path and project root count.
        cache_key = f"lsp-hover:3:{server_key(session, self._root)}:{path}:{sha}:{line}:{col}"
        try:  # cached after the outside-content check
            answer = await cached_answer(self._cache, cache_key, ask, lambda: session.is_ready, _text)
        except ServerError:
            self.stats["hover_errors"] += 1
            return
        if answer is not None:
            self._hovers[key] = (sha, answer.value)


def _file_tags(hit: object) -> FileTags | None:
    return hit if isinstance(hit, FileTags) else None


def _text(hit: object) -> str | None:
    return hit if isinstance(hit, str) else None
