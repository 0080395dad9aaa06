"""Resolve name-matched references with ``textDocument/definition``.

The static graph links a use of ``load`` in file A to *every* file defining a
``load``. For a (file, identifier) pair worth asking about (see
:func:`candidate_pairs`), the resolver asks the server for the definition at up
to ``lsp_sites_per_reference`` of the uses, and records where it points:

- into repository files → those files are the edge targets (provenance ``lsp``);
- only outside the repository (stdlib, site-packages, typeshed) → the pair gets
  no edge at all: the name match was wrong;
- an empty answer, an error, or a timeout → no resolution: the static edges stay.

When the definition is a member of an interface (a Go or TypeScript
interface method, a Rust trait method: the enclosing symbol's kind in our tags),
the call dispatches to the implementations, so the resolver also asks
``textDocument/implementation`` at the same site and adds every implementing
repository file: ``f.Value.String()`` reaches the thirty ``String`` methods that
implement ``Value``, not only the interface declaration.

The resolver records only what the server answered: the files its locations are
in (a C/C++ header when clangd, without a background index, stops at a function's
prototype; the calling file itself when the definition is local). Edges derived
from those answers (a header prototype also reaching the function's definition, a
file's own function reaching the headers it includes) are
:mod:`hybridmap.pipeline.policies`' work, applied once after all sources are merged and
stamped with the policy's own provenance, never ``lsp``.

Why definition at the use site rather than references on each definition:
measured in ``docs/benchmarks.md`` (definition answers in one cheap lookup per
site; references makes the server search the whole workspace per definition).

Answers are kept per (file, identifier) with the content hashes of the source
and every target file, so an edit to either invalidates them. Answers given
while the server was READY go to the disk cache under the same content keys;
answers from a server still indexing are *incomplete*: kept in memory, asked
again once it is ready, never cached, and never allowed to remove an edge.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types as T

from ...errors import ServerError
from ...languages.lexical import is_well_named
from ...languages.notebooks import is_notebook
from ...model import FileTags
from ...settings import Settings
from ...store.cache import Cache
from .answers import cached_answer
from .documents import Documents
from .session import LspSession
from .symbols import utf16_col

Pair = tuple[str, str]  # (source path, identifier)
Sites = tuple[tuple[int, int], ...]  # 0-based (line, UTF-8 column) of uses


@dataclass(frozen=True, slots=True)
class Resolution:
    targets: frozenset[str]
    """Repository files the server resolved the name to (empty: only outside the repository)."""
    src_sha: str
    target_shas: tuple[tuple[str, str], ...]
    complete: bool
    """The server was READY when it answered."""


@dataclass(frozen=True, slots=True)
class _Found:
    """What the server said about one pair, before it is recorded."""

    targets: frozenset[str]
    answered: bool
    """Some site got a location (an empty answer means the server does not know)."""
    target_shas: tuple[tuple[str, str], ...]


def _to_cache(found: _Found) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]] | None:
    return (tuple(sorted(found.targets)), found.target_shas) if found.answered else None


def server_key(session: LspSession, repository_root: Path | None = None) -> str:
    """What a cached server answer depends on besides file contents: the server, its version
    and configuration, and (given the repository root) the project root it was started in,
    relative to the repository: a marker added or removed moves a file to another server."""
    key = f"{session.config.name}:{session.version}:{session.config.fingerprint()}"
    if repository_root is None:
        return key
    root = Path(session.root)
    where = root.relative_to(repository_root).as_posix() if root.is_relative_to(repository_root) else str(root)
    return f"{key}:{where}"


class DefinitionResolver:
    def __init__(self, root: Path, cache: Cache, settings: Settings) -> None:
        self._root = root
        self._cache = cache
        self._settings = settings
        self._resolved: dict[Pair, Resolution] = {}
        self._unknown: dict[Pair, str] = {}
        """Pairs a ready server answered with nothing, by the source's hash: not asked again."""
        self._errored: dict[Pair, str] = {}
        """Pairs whose last request failed (by the source's hash): counted by :meth:`outcome`."""
        self._shas: Mapping[str, str] = {}
        self._tags: Mapping[str, FileTags] = {}
        self.stats = {
            "asked": 0,
            "resolved": 0,
            "external": 0,
            "empty": 0,
            "errors": 0,
            "cache_hits": 0,
            "implementations": 0,
        }
        self.errors: deque[str] = deque(maxlen=20)
        """The last request errors, for diagnostics."""
        self.version = 0
        """Bumped whenever a resolution is added or dropped (the graph is rebuilt then)."""

    def refresh(self, shas: Mapping[str, str], tags: Mapping[str, FileTags] | None = None) -> None:
        """Take a new snapshot of the files: drop answers whose source or targets changed."""
        self._shas = shas
        if tags is not None:
            self._tags = tags
        self._unknown = {pair: sha for pair, sha in self._unknown.items() if shas.get(pair[0]) == sha}
        self._errored = {pair: sha for pair, sha in self._errored.items() if shas.get(pair[0]) == sha}
        for pair, res in list(self._resolved.items()):
            if shas.get(pair[0]) != res.src_sha or any(shas.get(p) != s for p, s in res.target_shas):
                del self._resolved[pair]
                self.version += 1

    def done(self) -> set[Pair]:
        """Pairs that need no asking: answered by a ready server for the current contents."""
        return {pair for pair, res in self._resolved.items() if res.complete} | set(self._unknown)

    def snapshot(self, shas: Mapping[str, str] | None = None) -> dict[Pair, frozenset[str]]:
        """Resolved pairs whose source and targets are as ``shas`` has them (default: as last
        refreshed): an answer about older text is no edge of a newer snapshot."""
        current = self._shas if shas is None else shas
        # An incomplete answer may add an edge (the server found a target) but never remove
        # one: "outside the repository" from a server still loading the project is not trusted.
        return {
            pair: res.targets
            for pair, res in self._resolved.items()
            if (res.complete or res.targets)
            and current.get(pair[0]) == res.src_sha
            and all(current.get(p) == s for p, s in res.target_shas)
        }

    def outcome(self, languages: Mapping[str, str]) -> dict[str, tuple[int, int]]:
        """Per language (of the source file, by ``languages``: path -> language): how many
        (file, name) pairs a server was asked (answered or failed), and how many reached a
        repository file."""
        out: dict[str, list[int]] = {}
        for pair, res in self._resolved.items():
            counts = out.setdefault(languages.get(pair[0], ""), [0, 0])
            counts[0] += 1
            counts[1] += bool(res.targets)
        for pair in self._unknown.keys() | (self._errored.keys() - self._resolved.keys()):
            out.setdefault(languages.get(pair[0], ""), [0, 0])[0] += 1
        return {lang: (asked, found) for lang, (asked, found) in out.items() if lang}

    def _cache_key(self, session: LspSession, pair: Pair, sites: Sites) -> str:
        # 8: answers are the server's own targets (7 mixed in the C/C++ header policies).
        # The path too: two files with the same content elsewhere resolve their names elsewhere.
        path, name = pair
        return f"lsp-def:9:{server_key(session, self._root)}:{path}:{self._shas.get(path, '')}:{name}:{sites}"

    async def resolve(self, session: LspSession, documents: Documents, pair: Pair, sites: Sites) -> None:
        """Ask ``session`` where the uses at ``sites`` of ``pair`` point; record the answer."""
        path = pair[0]
        src_sha = self._shas.get(path, "")
        current = self._resolved.get(pair)
        if current is not None and current.complete and current.src_sha == src_sha:
            return

        async def ask() -> _Found | None:
            lines = documents.ensure_open(session, path, src_sha)
            return None if lines is None else await self._ask_sites(session, documents.uri(path), pair, sites, lines)

        key = self._cache_key(session, pair, sites)
        try:
            answer = await cached_answer(self._cache, key, ask, lambda: session.is_ready, self._from_cache, _to_cache)
        except ServerError:
            self._errored[pair] = src_sha
            return  # keep the static edges; asked again after a restart
        self._errored.pop(pair, None)
        if answer is None:
            return
        found = answer.value
        if answer.cached:
            self.stats["cache_hits"] += 1
        else:
            session.note_answer(found.answered)
            if not found.answered:
                self.stats["empty"] += 1
                if answer.complete:
                    self._unknown[pair] = src_sha  # asked again only when the file changes
                return  # the server does not know: not a contradiction
            self.stats["resolved" if found.targets else "external"] += 1
        self._record(pair, Resolution(found.targets, src_sha, found.target_shas, answer.complete))

    async def _ask_sites(self, session: LspSession, uri: str, pair: Pair, sites: Sites, lines: list[bytes]) -> _Found:
        path, name = pair
        targets: set[str] = set()
        answered = False
        for line, col in sites:
            if line >= len(lines):
                continue
            character = col if session.position_encoding == "utf-8" else utf16_col(lines[line], col)
            self.stats["asked"] += 1
            try:
                result = await session.request(
                    T.TEXT_DOCUMENT_DEFINITION,
                    T.DefinitionParams(
                        text_document=T.TextDocumentIdentifier(uri=uri),
                        position=T.Position(line=line, character=character),
                    ),
                )
            except ServerError as exc:
                self.stats["errors"] += 1
                self.errors.append(f"{path}:{line + 1}: {exc}")
                raise
            dispatches = False
            for location_uri, target_line in _locations(result):
                answered = True
                rel = self._relative(location_uri)
                if rel is not None:  # None: outside the repository (stdlib, dependencies)
                    dispatches = dispatches or self._interface_member(rel, target_line, name)
                    targets.add(rel)
            if dispatches and session.supports("implementation_provider"):
                targets |= await self._implementations(session, uri, line, character)
        if len(targets) > 1:
            targets.discard(path)  # a local binding beside a repository target: keep the target
        target_shas = tuple(sorted((t, self._shas.get(t, "")) for t in targets))
        return _Found(frozenset(targets), answered, target_shas)

    def _from_cache(self, hit: object) -> _Found | None:
        """A cached answer, if every target file is still the one it was."""
        if not (isinstance(hit, tuple) and len(hit) == 2):
            return None
        cached_targets, target_shas = hit
        if not all(self._shas.get(p) == s for p, s in target_shas):
            return None
        return _Found(frozenset(cached_targets), True, tuple(target_shas))

    def _interface_member(self, path: str, line: int, name: str) -> bool:
        """Is ``name`` on ``line`` of ``path`` declared inside an interface or trait (per our tags)?"""
        tags = self._tags.get(path)
        if tags is None:
            return False
        symbols = tags.symbols
        return any(
            s.name == name and s.name_line == line and s.parent >= 0 and symbols[s.parent].kind in _DISPATCHING_KINDS
            for s in symbols
        )

    async def _implementations(self, session: LspSession, uri: str, line: int, character: int) -> set[str]:
        self.stats["asked"] += 1
        try:
            result = await session.request(
                T.TEXT_DOCUMENT_IMPLEMENTATION,
                T.ImplementationParams(
                    text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line=line, character=character)
                ),
            )
        except ServerError as exc:
            self.errors.append(f"implementation: {exc}")
            return set()
        found = {rel for rel in (self._relative(u) for u, _ in _locations(result)) if rel is not None}
        self.stats["implementations"] += len(found)
        return found

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


def candidate_pairs(
    tags: Mapping[str, FileTags],
    languages: Mapping[str, str],
    definers: Mapping[str, int],
    server_languages: set[str],
    done: set[Pair],
    settings: Settings,
) -> list[tuple[Pair, Sites]]:
    """(file, identifier) pairs worth asking a server about, most useful first, with sites to ask at.

    Pure; ``definers`` maps an identifier to how many files define it. First the
    *ambiguous* pairs (defined in 2..``max_definers_per_ident`` files: name matching
    must guess), then, with ``lsp_resolve_generic_names``, uses of names defined in
    a single file that are short or generic (``get``, ``run``, ``load``: a call to
    ``d.get()`` usually means something else than the repository's one ``get``).
    """
    limit = settings.max_definers_per_ident
    per_pair = settings.lsp_sites_per_reference
    generic = settings.lsp_resolve_generic_names
    min_length = settings.well_named_min_length
    ambiguous: list[tuple[Pair, Sites]] = []
    single: list[tuple[Pair, Sites]] = []
    for path, file_tags in tags.items():
        if languages.get(path) not in server_languages or is_notebook(path):
            continue  # a notebook is never sent to a server (its positions are not the file's)
        positions = array("I")
        positions.frombytes(file_tags.ref_positions)
        sites: dict[str, list[tuple[int, int]]] = {}
        for i, name in enumerate(file_tags.ref_names):
            count = definers.get(name, 0)
            if count == 0 or count > limit or (path, name) in done:
                continue
            if count == 1 and (not generic or is_well_named(name, min_length)):
                continue
            found = sites.setdefault(name, [])
            if len(found) < per_pair:
                found.append((positions[2 * i], positions[2 * i + 1]))
        for name, s in sites.items():
            (ambiguous if definers[name] > 1 else single).append(((path, name), tuple(s)))
    return (ambiguous + single)[: settings.lsp_max_pending]


#: Symbol kinds whose members are called through dynamic dispatch.
_DISPATCHING_KINDS = frozenset({"interface", "trait"})


def _locations(result: Any) -> list[tuple[str, int]]:
    """(uri, 0-based start line) of each Location / LocationLink in a definition-like answer."""
    if result is None:
        return []
    items = result if isinstance(result, list) else [result]
    out = []
    for item in items:
        uri = getattr(item, "uri", None) or getattr(item, "target_uri", None)
        rng = getattr(item, "range", None) or getattr(item, "target_selection_range", None)
        line = rng.start.line if rng is not None else -1
        if uri is None and isinstance(item, dict):
            uri = item.get("uri") or item.get("targetUri")
            raw = item.get("range") or item.get("targetSelectionRange") or {}
            line = raw.get("start", {}).get("line", -1) if isinstance(raw, dict) else -1
        if isinstance(uri, str):
            out.append((uri, line))
    return out
