"""Resolve ambiguous name-matched references with ``textDocument/definition``.

The static graph links a use of ``load`` in file A to *every* file defining a
``load``. For each (file, identifier) pair whose name is ambiguous (defined in
two or more files), the resolver asks the language server for the definition
at up to ``lsp_sites_per_reference`` of the uses, and records where it points:

- into repository files → those files are the edge targets (provenance ``lsp``);
- only outside the repository (stdlib, site-packages, typeshed) → the pair gets
  no edge at all: the name match was wrong;
- an empty answer, an error, or a timeout → no resolution: the static edges stay.

Answers are kept in memory per (file, identifier) together with the content
hashes of the source file and every target file, so an edit to either
invalidates them; answers given while the server was READY go to the disk
cache under the same content keys (never answers from a warming server).
Work runs in the background of a long-lived map; each map uses what is done.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as T

from ...cache import Cache
from ...errors import ServerError
from ...model import FileStatus, FileTags, ServerState
from ...settings import Settings
from ...walk import read_source
from .pool import ServerPool
from .session import LspSession, language_id

Pair = tuple[str, str]  # (source path, identifier)


@dataclass(frozen=True, slots=True)
class Resolution:
    targets: frozenset[str]
    """Repository files the server resolved the name to (empty: only outside the repository)."""
    src_sha: str
    target_shas: tuple[tuple[str, str], ...]
    complete: bool
    """The server was READY when it answered."""


def _utf8_to_utf16(line: bytes, col: int) -> int:
    return len(line[:col].decode("utf-8", "replace").encode("utf-16-le")) // 2


class LspResolver:
    def __init__(self, pool: ServerPool, root: Path, cache: Cache, settings: Settings) -> None:
        self._pool = pool
        self._root = root
        self._cache = cache
        self._settings = settings
        self._resolved: dict[Pair, Resolution] = {}
        self._pending: deque[tuple[Pair, tuple[tuple[int, int], ...]]] = deque()
        self._shas: Mapping[str, str] = {}
        self._languages: Mapping[str, str] = {}
        self._texts: dict[str, tuple[str, list[bytes]]] = {}  # path -> (sha, lines)
        self._sent: dict[str, str] = {}  # uri -> sha of the text the server has
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.stats = {"asked": 0, "resolved": 0, "external": 0, "empty": 0, "errors": 0, "cache_hits": 0}
        self.errors: deque[str] = deque(maxlen=20)
        """The last request errors, for diagnostics."""
        self.version = 0
        """Bumped whenever a resolution is added or dropped (the graph is rebuilt then)."""

    # --- what to ask ---------------------------------------------------------------

    def refresh(self, shas: Mapping[str, str], languages: Mapping[str, str]) -> None:
        """Take a new snapshot of the files: drop answers whose source or targets changed."""
        self._shas, self._languages = shas, languages
        for pair, res in list(self._resolved.items()):
            if shas.get(pair[0]) != res.src_sha or any(shas.get(p) != s for p, s in res.target_shas):
                del self._resolved[pair]
                self.version += 1

    def enqueue(self, pending: list[tuple[Pair, tuple[tuple[int, int], ...]]]) -> None:
        """Ask about ``pending`` (see :func:`ambiguous_pairs`) in the background."""
        self._pending = deque(item for item in pending if item[0] not in self._resolved)
        if self._pending and (self._task is None or self._task.done()):
            self._idle.clear()
            self._task = asyncio.create_task(self._work())

    def resolved_pairs(self) -> set[Pair]:
        return set(self._resolved)

    def snapshot(self) -> dict[Pair, frozenset[str]]:
        return {pair: res.targets for pair, res in self._resolved.items()}

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def wait_idle(self, timeout: float) -> bool:
        if timeout <= 0:
            return self._idle.is_set()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
        return self._idle.is_set()

    # --- the background worker ------------------------------------------------------------

    async def _work(self) -> None:
        try:
            while self._pending:
                batch: list[tuple[Pair, tuple[tuple[int, int], ...]]] = []
                while self._pending and len(batch) < 64:
                    batch.append(self._pending.popleft())
                by_language: dict[str, list[tuple[Pair, tuple[tuple[int, int], ...]]]] = {}
                for item in batch:
                    by_language.setdefault(self._languages.get(item[0][0], ""), []).append(item)
                for language, items in by_language.items():
                    session = self._pool.session(language)
                    if session is None or session.state not in (ServerState.READY, ServerState.INDEXING):
                        continue  # asked again at the next map
                    semaphore = asyncio.Semaphore(self._settings.lsp_concurrency)

                    async def one(item: tuple[Pair, tuple[tuple[int, int], ...]],
                                  session: LspSession = session, semaphore: asyncio.Semaphore = semaphore,
                                  lang_id: str = language_id(language)) -> None:
                        async with semaphore:
                            await self._resolve(session, lang_id, *item)

                    await asyncio.gather(*(one(item) for item in items))
        finally:
            self._idle.set()

    def _lines(self, path: str) -> list[bytes] | None:
        sha = self._shas.get(path, "")
        cached = self._texts.get(path)
        if cached is not None and cached[0] == sha:
            return cached[1]
        read = read_source(self._root, path, self._settings)
        if read.status is not FileStatus.OK:
            return None
        lines = read.data.split(b"\n")
        self._texts[path] = (read.sha256, lines)
        return lines

    def _cache_key(self, session: LspSession, pair: Pair, sites: tuple[tuple[int, int], ...]) -> str:
        src_sha = self._shas.get(pair[0], "")
        return (f"lsp-def:1:{session.config.name}:{session.version}:{session.config.fingerprint()}:"
                f"{src_sha}:{pair[1]}:{sites}")

    async def _resolve(self, session: LspSession, lang_id: str, pair: Pair,
                       sites: tuple[tuple[int, int], ...]) -> None:
        path, name = pair
        src_sha = self._shas.get(path, "")
        key = self._cache_key(session, pair, sites)
        hit = self._cache.get_many([key]).get(key)
        if isinstance(hit, tuple) and len(hit) == 2:
            targets, target_shas = hit
            if all(self._shas.get(p) == s for p, s in target_shas):
                self.stats["cache_hits"] += 1
                self._record(pair, Resolution(frozenset(targets), src_sha, tuple(target_shas), True))
                return
        lines = self._lines(path)
        if lines is None:
            return
        uri = (self._root / path).as_uri()
        text = b"\n".join(lines).decode("utf-8", "replace")
        if not session.is_open(uri):
            session.did_open(uri, lang_id, text)
        elif self._sent.get(uri) != src_sha:
            session.did_change(uri, text)  # the file changed since the server last saw it
        self._sent[uri] = src_sha
        ready_when_asked = session.is_ready
        targets: set[str] = set()
        answered = False
        for line, col in sites:
            if line >= len(lines):
                continue
            character = col if session.position_encoding == "utf-8" else _utf8_to_utf16(lines[line], col)
            self.stats["asked"] += 1
            try:
                result = await session.request(T.TEXT_DOCUMENT_DEFINITION, T.DefinitionParams(
                    text_document=T.TextDocumentIdentifier(uri=uri),
                    position=T.Position(line=line, character=character)))
            except ServerError as exc:
                self.stats["errors"] += 1
                self.errors.append(f"{path}:{line + 1}: {exc}")
                return  # keep the static edges; asked again after a restart
            for location_uri in _uris(result):
                answered = True
                rel = self._relative(location_uri)
                if rel is not None:  # None: outside the repository (stdlib, dependencies)
                    targets.add(rel)
        session.note_answer(answered)
        if not answered:
            self.stats["empty"] += 1
            return  # the server does not know: not a contradiction
        if len(targets) > 1:
            targets.discard(path)  # a local binding beside a repository target: keep the target
        if not targets:
            self.stats["external"] += 1
        else:
            self.stats["resolved"] += 1
        target_shas = tuple(sorted((t, self._shas.get(t, "")) for t in targets))
        complete = ready_when_asked and session.is_ready
        self._record(pair, Resolution(frozenset(targets), src_sha, target_shas, complete))
        if complete:
            self._cache.set_many({key: (tuple(sorted(targets)), target_shas)})

    def _record(self, pair: Pair, resolution: Resolution) -> None:
        self._resolved[pair] = resolution
        self.version += 1

    def _relative(self, uri: str) -> str | None:
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            return None
        target = Path(unquote(parsed.path))
        try:
            rel = target.resolve().relative_to(self._root)
        except (ValueError, OSError):
            return None
        posix = rel.as_posix()
        return posix if posix in self._shas else None

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


def ambiguous_pairs(tags: Mapping[str, FileTags], languages: Mapping[str, str],
                    definers: Mapping[str, int], server_languages: set[str], done: set[Pair],
                    settings: Settings) -> list[tuple[Pair, tuple[tuple[int, int], ...]]]:
    """(file, identifier) pairs worth asking a server about, with the reference sites to ask at.

    Pure; ``definers`` maps an identifier to how many files define it. Ambiguous =
    defined in at least two files (and not so many that the name carries no signal).
    """
    from array import array

    limit = settings.max_definers_per_ident
    per_pair = settings.lsp_sites_per_reference
    out: list[tuple[Pair, tuple[tuple[int, int], ...]]] = []
    for path, file_tags in tags.items():
        if languages.get(path) not in server_languages:
            continue
        positions = array("I")
        positions.frombytes(file_tags.ref_positions)
        sites: dict[str, list[tuple[int, int]]] = {}
        for i, name in enumerate(file_tags.ref_names):
            count = definers.get(name, 0)
            if count < 2 or count > limit or (path, name) in done:
                continue
            found = sites.setdefault(name, [])
            if len(found) < per_pair:
                found.append((positions[2 * i], positions[2 * i + 1]))
        out.extend(((path, name), tuple(s)) for name, s in sites.items())
        if len(out) >= settings.lsp_max_pending:
            return out[: settings.lsp_max_pending]
    return out


def _uris(result: Any) -> list[str]:
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    out = []
    for item in items:
        uri = getattr(item, "uri", None) or getattr(item, "target_uri", None)
        if uri is None and isinstance(item, dict):
            uri = item.get("uri") or item.get("targetUri")
        if isinstance(uri, str):
            out.append(uri)
    return out
