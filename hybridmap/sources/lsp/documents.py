"""What each server has open, and what it should know changed on disk.

Servers answer about a file only once it is open (didOpen) and answer about the
text they were sent, not the disk. :class:`Documents` keeps both sides honest:

- :meth:`ensure_open` opens a file with its current content, or sends the new
  content (didChange) when the file changed since the server saw it, and closes
  the least recently used documents beyond ``lsp_max_open_files`` per server
  (tsserver holds every open file in memory);
- :meth:`refresh` compares the new snapshot's content hashes with the last one
  and tells every live server which files were created, changed or deleted
  (``workspace/didChangeWatchedFiles``), so its view of unopened files follows
  the disk between maps (each server only of files in its project root); deleted
  files that were open are closed first.

File texts are read through :func:`~hybridmap.workspace.walk.read_source` (never outside
the root, bad files skipped) and kept only while their hash is current.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path

from lsprotocol import types as T

from ...infra.patched import changed_keys
from ...model import FileStatus
from ...settings import Settings
from ...workspace.walk import read_source
from .roots import contains
from .session import LspSession


class Documents:
    def __init__(self, root: Path, settings: Settings, language_ids: Mapping[str, str]) -> None:
        self._root = root
        self._settings = settings
        self._language_ids = language_ids  # language -> the languageId its files are opened with
        self._shas: Mapping[str, str] = {}
        self._languages: Mapping[str, str] = {}
        self._lines: OrderedDict[str, tuple[str, list[bytes]]] = OrderedDict()
        # (session, path) → sha of the text that session has open; least recently used first.
        self._open: OrderedDict[tuple[LspSession, str], str] = OrderedDict()
        self._unsendable: set[str] = set()

    @property
    def shas(self) -> Mapping[str, str]:
        return self._shas

    def language(self, path: str) -> str:
        return self._languages.get(path, "")

    def uri(self, path: str) -> str:
        return (self._root / path).as_uri()

    def sendable(self, path: str, session: LspSession | None = None) -> bool:
        """Can ``path`` be named to a server? A name that is not UTF-8 (git lists it with
        surrogate escapes) percent-encodes to a URI some servers cannot turn back into a path:
        ty panicked on one and was lost for the whole repository. Such files are not sent."""
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            if session is not None:
                self._unsendable.add(path)
                session.troubles["names"] = (
                    f"{len(self._unsendable)} file(s) whose names are not UTF-8 not sent to the server"
                )
            return False
        return True

    def refresh(
        self, shas: Mapping[str, str], languages: Mapping[str, str], sessions: Iterable[LspSession]
    ) -> set[str]:
        """Take a new snapshot; notify live servers of what changed on disk. Returns changed paths."""
        old = self._shas
        changed: dict[str, T.FileChangeType] = {}
        if old:
            # Only the paths whose hash may have moved (a snapshot's hashes follow its states'
            # patches: after an edit, a few), not a pass over every path.
            for path in changed_keys(old, shas):
                if path not in shas:
                    if path in old:
                        changed[path] = T.FileChangeType.Deleted
                elif path not in old:
                    changed[path] = T.FileChangeType.Created
                elif old[path] != shas[path]:
                    changed[path] = T.FileChangeType.Changed
        self._shas, self._languages = shas, languages
        for path in changed:
            self._lines.pop(path, None)
        live = list(sessions)
        # A session that ended (crashed, shut down for lsp_max_servers) is never asked again: a
        # restart is a new session, which opens what it needs.
        alive = {id(session) for session in live}
        for key in [k for k in self._open if id(k[0]) not in alive]:
            del self._open[key]
        # A deleted file stays open in the server otherwise (it would keep answering from the
        # text it was sent) until the least recently used ones are closed.
        for key in [k for k in self._open if changed.get(k[1]) is T.FileChangeType.Deleted]:
            del self._open[key]
            key[0].did_close(self.uri(key[1]))
        if changed:
            events = [(path, kind) for path, kind in sorted(changed.items()) if self.sendable(path)]
            for session in live:
                # Each server hears about its own project root only: a file of another
                # project is not part of its program (and many projects make many events).
                root = self.project_root(session)
                mine = [T.FileEvent(uri=self.uri(p), type=kind) for p, kind in events if contains(root, p)]
                if mine:
                    session.did_change_watched_files(mine)
        return set(changed)

    def project_root(self, session: LspSession) -> str:
        """The session's project root relative to the repository root ("" = the root itself)."""
        try:
            rel = session.root.relative_to(self._root).as_posix()
        except ValueError:
            return ""
        return "" if rel == "." else rel

    def lines(self, path: str) -> list[bytes] | None:
        """The file's lines (bytes) as the snapshot has them, or None when it cannot be read as
        a source file or no longer has the snapshot's content. An answer is filed (and cached)
        under the snapshot's hash: text edited since must not be sent under it, or the edit's
        symbols would be kept as the old content's. The next snapshot asks again. Before the
        first snapshot (a server's warm-up open) the file is read as it is."""
        sha = self._shas.get(path)
        cached = self._lines.get(path)
        if cached is not None and cached[0] == sha:
            self._lines.move_to_end(path)
            return cached[1]
        read = read_source(self._root, path, self._settings)
        if read.status is not FileStatus.OK or (sha is not None and read.sha256 != sha):
            return None
        lines = read.data.split(b"\n")
        self._lines[path] = (read.sha256, lines)
        while len(self._lines) > max(1, self._settings.lsp_max_open_files) * 2:
            self._lines.popitem(last=False)
        return lines

    def ensure_open(self, session: LspSession, path: str, sha: str | None = None) -> list[bytes] | None:
        """Make sure ``session`` has the current text of ``path`` open; its lines, or None.
        With ``sha`` (the content an answer will be filed under): None unless that is still the
        snapshot's content (a refresh may have come between planning a question and asking it)."""
        if not self.sendable(path, session) or (sha is not None and self._shas.get(path) != sha):
            return None
        lines = self.lines(path)
        if lines is None:
            return None
        sha = self._shas.get(path, "")
        key = (session, path)
        uri = self.uri(path)
        text = b"\n".join(lines).decode("utf-8", "replace")
        if not session.is_open(uri):
            language = self._languages.get(path, session.language)
            session.did_open(uri, self._language_ids.get(language, language), text)
        elif self._open.get(key) != sha:
            session.did_change(uri, text)  # changed since the server last saw it
        self._open[key] = sha
        self._open.move_to_end(key)
        self._close_beyond_limit(session)
        return lines

    def _close_beyond_limit(self, session: LspSession) -> None:
        limit = self._settings.lsp_max_open_files
        if limit <= 0:
            return
        mine = [key for key in self._open if key[0] is session]
        for key in mine[: max(0, len(mine) - limit)]:
            del self._open[key]
            session.did_close(self.uri(key[1]))

    def forget(self, session: LspSession) -> None:
        """A session ended: nothing of it is open any more."""
        for key in [k for k in self._open if k[0] is session]:
            del self._open[key]
