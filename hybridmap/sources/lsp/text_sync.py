"""The documents a server has open, kept in step with the files: open, change, close, settle.

:class:`TextSync` is the text-synchronization pass of :class:`~.session.LspSession` (its base):
the open documents and their versions, ``open-settle`` (a request on a just-opened file waits),
and the file events of the workspace. It only sends notifications through the session's
channel; the session owns the process and the requests.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types as T

if TYPE_CHECKING:
    from .config import ServerConfig
    from .readiness import Readiness
    from .wire import Channel


class TextSync:
    """Open documents of one server (see the module docstring)."""

    config: ServerConfig
    _channel: Channel | None
    _readiness: Readiness
    _opened: dict[str, int]
    """uri -> version of each open document."""
    _opened_at: dict[str, float]
    """uri -> when it was opened (only with ``open-settle``)."""

    @property
    def alive(self) -> bool:  # pragma: no cover - the session's
        raise NotImplementedError

    def _notify(self, method: str, params: Any) -> None:  # pragma: no cover - the session's
        raise NotImplementedError

    async def _settle(self, params: Any) -> None:
        """With ``open-settle``: a request on a file opened less than that ago waits the rest."""
        document = getattr(params, "text_document", None)
        opened = self._opened_at.get(getattr(document, "uri", ""))
        if opened is not None:
            rest = opened + self.config.open_settle - time.monotonic()
            if rest > 0:
                await asyncio.sleep(rest)

    def did_open(self, uri: str, language_id: str, text: str) -> None:
        if self._channel is None or not self.alive or uri in self._opened:
            return
        self._opened[uri] = 1
        if self.config.open_settle:
            self._opened_at[uri] = time.monotonic()
        self._readiness.on_first_open()
        item = T.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
        self._notify(T.TEXT_DOCUMENT_DID_OPEN, T.DidOpenTextDocumentParams(text_document=item))

    def did_change(self, uri: str, text: str) -> None:
        """Replace an open document's text (used when a file changed between maps)."""
        if self._channel is None or not self.alive or uri not in self._opened:
            return
        version = self._opened[uri] = self._opened[uri] + 1
        params = T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
        )
        self._notify(T.TEXT_DOCUMENT_DID_CHANGE, params)

    def is_open(self, uri: str) -> bool:
        return uri in self._opened

    def did_close(self, uri: str) -> None:
        if self._channel is None or not self.alive or uri not in self._opened:
            return
        del self._opened[uri]
        self._opened_at.pop(uri, None)
        params = T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri))
        self._notify(T.TEXT_DOCUMENT_DID_CLOSE, params)

    def did_change_watched_files(self, events: list[T.FileEvent]) -> None:
        """Tell the server which files were created, changed or deleted on disk."""
        if events:
            self._notify(T.WORKSPACE_DID_CHANGE_WATCHED_FILES, T.DidChangeWatchedFilesParams(changes=events))
