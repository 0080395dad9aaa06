"""The MCP tools as plain async functions over one warm :class:`~hybridmap.api.repo.AsyncRepoMap`.

No SDK here: :mod:`.server` registers these on ``MCPServer``. Every function returns a
JSON-ready dict, its output schema: a feature's own document (``to_json()``'s TypedDict, never
declared again here) or, for what only MCP offers, a TypedDict below; it
raises :class:`ToolFailure` with a one-line reason for anything the caller got wrong.

Repository strings are untrusted (``docs/security.md``): paths go out through
:func:`~hybridmap.infra.sanitize.escape_path`, names, signatures and messages through
:func:`~hybridmap.infra.sanitize.safe_line`, so neither the structured result nor its text form
carries a control, bidi or invisible character raw. Paths coming in are checked by
:func:`relative_path` before anything is looked up: never absolute, never ``..``, never
resolving (through a symlink) outside the root; files are only read when the walk listed them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NotRequired

from typing_extensions import (
    TypedDict,  # pydantic (output schemas) needs it before Python 3.12
)

from ...api.repo import AsyncRepoMap
from ...api.roots import AsyncRootsMap
from ...features.agents_md import AgentNotesJson
from ...features.clones import ClonesJson, clones_json
from ...features.compare import Edge
from ...features.dead_code import DeadCodeJson
from ...features.file_search import FileSearchJson
from ...features.search import SymbolSearchJson, normalized
from ...infra.sanitize import escape_path, safe_block, safe_line
from ...languages.notebooks import is_notebook
from ...model import (
    ChangesJson,
    DiffJson,
    FileTags,
    MapRequest,
    MapResult,
    Mode,
    RankedFile,
    ServerJson,
    ServerReport,
    Symbol,
    SymbolFocusJson,
)
from ...pipeline.graph.repo_graph import RepoGraph
from ...workspace.state import Progress
from ...workspace.walk import head_reader

REFRESH_TOKENS = 64
"""Budget of the small hybrid map that brings tags and graph up to date before a lookup."""
MAX_MENTIONS = 64
SIGNATURE_CHARS = 240
DOC_LINES = 12
LIST_LIMIT = 10
"""Edges, moves and references listed per section in summaries (counts are always complete)."""


class ToolFailure(Exception):
    """The caller asked for something that cannot be answered: a one-line reason."""


# --- output shapes (the tools' output schemas) --------------------------------------------------


class MapFile(TypedDict):
    path: str
    rank: float
    symbols: int
    change: NotRequired[str]
    """A map of a change: how this file changed (added, modified, renamed)..."""
    dependents: NotRequired[int]
    """... and, for every file, how many others depend on it ([R:N] in the text)."""


class RepoMapSummary(TypedDict):
    files: list[MapFile]
    tokens: int
    budget: int
    mode: str
    edges: dict[str, int]
    servers: dict[str, ServerJson]
    diagnostics: int
    diagnostic_lines: list[str]
    mentions: list[str]
    changes: ChangesJson
    """Files new (marked [NEW] in the text), gone or changed since this session's previous map."""
    diff: NotRequired[DiffJson]
    """A map of a change: its base and changed files."""
    symbol: NotRequired[SymbolFocusJson]
    """A map of a symbol's neighbourhood: where the name is defined."""


class ActivitySummary(TypedDict):
    edited: list[str]
    read: list[str]
    active: str | None


class SymbolEntry(TypedDict):
    name: str
    kind: str
    path: str
    line: int
    end_line: int
    signature: str
    container: str | None


class Reference(TypedDict):
    path: str
    lines: list[int]
    count: int
    source: str
    """``language server``, ``scip index``, ``name match``, ``same file``, or a policy's name."""


class Definition(TypedDict):
    name: str
    kind: str
    path: str
    line: int
    end_line: int
    signature: str
    detail: str
    doc: str
    references: list[Reference]
    references_total: int


class SymbolInfo(TypedDict):
    definitions: list[Definition]
    source: str
    server: ServerJson | None


class Outline(TypedDict):
    path: str
    language: str | None
    symbols: list[SymbolEntry]


class ServerStatus(TypedDict):
    servers: dict[str, ServerJson]


class EdgeEntry(TypedDict):
    src: str
    dst: str
    ident: str


class FileMoveEntry(TypedDict):
    path: str
    static: int | None
    hybrid: int | None
    change: str


class CompareSummary(TypedDict):
    resolved: int
    removed: int
    kept: int
    resolved_first: list[EdgeEntry]
    removed_first: list[EdgeEntry]
    moved_files: int
    moves_first: list[FileMoveEntry]
    moved_symbols: int
    servers: dict[str, ServerJson]
    servers_ready: bool
    notes: list[str]


@dataclass
class State:
    """What the server keeps across calls besides the map itself."""

    repo: AsyncRepoMap
    roots: AsyncRootsMap | None = None
    """With ``--root``: the map of every root (the first is ``repo``), which ``repo_map`` serves."""
    details: dict[tuple[str, int], str] = field(default_factory=dict)
    """(path, 1-based line) -> a server's description of a symbol some map showed."""
    bus: Any = field(default=None)
    """The SDK's subscription bus (2026-07-28 ``subscriptions/listen``); set by the server."""
    subscriptions: Any = field(default=None)
    """Who asked by ``resources/subscribe`` (2025-era clients): :class:`.protocol.Subscriptions`."""

    def remember(self, result: MapResult) -> None:
        for f in result.files:
            for s in f.symbols:
                if s.detail:
                    self.details[(f.path, s.line)] = s.detail


# --- paths and mentions --------------------------------------------------------------------------


def _shown(text: str, limit: int = 120) -> str:
    line = safe_line(text)
    return line if len(line) <= limit else line[:limit] + "..."


def relative_path(root: Path, path: str, what: str = "path") -> str:
    """``path`` as a POSIX path relative to ``root``; a ToolFailure for anything that could
    name a file outside it (absolute, ``~``, ``..``, a symlink out, NUL)."""
    if not path or "\x00" in path:
        raise ToolFailure(f"{what} must be a non-empty path relative to the repository root")
    posix = PurePosixPath(path)
    if posix.is_absolute() or path.startswith("~") or Path(path).is_absolute():
        raise ToolFailure(f"{what} '{_shown(path)}' is absolute: give it relative to the repository root")
    if ".." in posix.parts:
        raise ToolFailure(f"{what} '{_shown(path)}' contains '..': give it relative to the repository root")
    rel = str(posix)
    try:
        (root / rel).resolve().relative_to(root.resolve())
    except (ValueError, OSError) as exc:
        raise ToolFailure(f"{what} '{_shown(path)}' resolves outside the repository root") from exc
    return rel


def relative_paths(root: Path, paths: Iterable[str], what: str) -> list[str]:
    return [relative_path(root, p, what) for p in paths]


# --- records out ---------------------------------------------------------------------------------


def server_info(report: ServerReport) -> ServerJson:
    return {
        "state": str(report.state),
        "server": report.server,
        "seconds_to_ready": report.seconds_to_ready,
        "detail": safe_line(report.detail),
    }


def _signature(sym: Symbol) -> str:
    text = " ".join(line.strip() for line in sym.signature.strip().splitlines())
    text = safe_line(text)
    return text if len(text) <= SIGNATURE_CHARS else text[:SIGNATURE_CHARS] + "..."


def symbol_entry(path: str, tags: FileTags, sym: Symbol) -> SymbolEntry:
    container = tags.symbols[sym.parent].name if 0 <= sym.parent < len(tags.symbols) else None
    return {
        "name": safe_line(sym.name),
        "kind": sym.kind,
        "path": escape_path(path),
        "line": sym.name_line + 1,
        "end_line": sym.span.end_line + 1,
        "signature": _signature(sym),
        "container": safe_line(container) if container is not None else None,
    }


def current_tags(repo: AsyncRepoMap) -> Mapping[str, FileTags]:
    """The tags of the last index (tree-sitter; path -> tags)."""
    return repo.tags()


async def refresh(state: State) -> MapResult:
    """A small hybrid map: re-reads changed files, brings in what servers found since."""
    result = await state.repo.map(MapRequest(tokens=REFRESH_TOKENS, mode="hybrid", shown=False))
    state.remember(result)
    return result


# --- the tools -----------------------------------------------------------------------------------


async def repo_map(
    state: State,
    *,
    chat_files: Sequence[str] = (),
    mentioned_files: Sequence[str] = (),
    mentioned_idents: Sequence[str] = (),
    message: str = "",
    tokens: int | None = None,
    mode: Mode = "hybrid",
    server_wait: float = 0.0,
    conversation_tokens: int | None = None,
    edited_files: Sequence[str] = (),
    read_files: Sequence[str] = (),
    active_file: str | None = None,
    reasons: bool = False,
    stable: bool | None = None,
    symbol: str | None = None,
    depth: int | None = None,
    diff: str | None = None,
) -> tuple[str, RepoMapSummary]:
    """The map text and its summary."""
    repo = state.repo
    if state.roots is not None:  # served with --root: one map of every root, paths NAME/path
        one_root = {
            "edited_files": edited_files, "read_files": read_files, "active_file": active_file,
            "stable": stable, "symbol": symbol, "diff": diff,
            "conversation_tokens": conversation_tokens,
        }  # fmt: skip
        refused = [name for name, value in one_root.items() if value not in (None, False, (), [])]
        if refused:
            raise ToolFailure(f"{', '.join(refused)}: maps one root; this server maps several (--root)")
        joined = await state.roots.map(
            chat_files=chat_files,
            mentioned_files=mentioned_files,
            mentioned_idents=list(mentioned_idents)[:MAX_MENTIONS],
            tokens=tokens,
            mode=mode,
            server_wait=server_wait,
            message=message,
            reasons=reasons or None,
        )
        return joined.text, _summary(joined)
    chat = relative_paths(repo.root, chat_files, "chat file")
    files = relative_paths(repo.root, mentioned_files, "mentioned file")
    result = await repo.map(
        chat_files=chat,
        mentioned_files=files,
        mentioned_idents=list(mentioned_idents)[:MAX_MENTIONS],
        message=message,
        tokens=tokens,
        mode=mode,
        server_wait=server_wait,
        conversation_tokens=conversation_tokens,
        edited_files=relative_paths(repo.root, edited_files, "edited file"),
        read_files=relative_paths(repo.root, read_files, "read file"),
        active_file=None if active_file is None else relative_path(repo.root, active_file, "active file"),
        reasons=reasons or None,
        stable=stable,
        symbol=symbol,
        symbol_depth=depth,
        diff=diff,
    )
    state.remember(result)
    return result.text, _summary(result)


def _summary(result: MapResult) -> RepoMapSummary:
    summary: RepoMapSummary = {
        "files": [_map_file(f, result.change is not None) for f in result.files],
        "tokens": result.tokens,
        "budget": result.budget,
        "mode": result.mode,
        "edges": dict(result.edges),
        "servers": {k: server_info(v) for k, v in result.servers.items()},
        "diagnostics": len(result.diagnostics),
        "diagnostic_lines": [
            f"{escape_path(d.path)}: {safe_line(d.kind)}: {safe_line(d.message)}"
            for d in result.diagnostics[:LIST_LIMIT]
        ],
        "mentions": [safe_line(w) for w in result.mentions[:MAX_MENTIONS]],
        "changes": {
            "first": result.changes.first,
            "new": [escape_path(p) for p in result.changes.new[:LIST_LIMIT]],
            "gone": [escape_path(p) for p in result.changes.gone[:LIST_LIMIT]],
            "changed": [escape_path(p) for p in result.changes.changed[:LIST_LIMIT]],
        },
    }
    if result.change is not None:
        summary["diff"] = result.change.to_json()
    if result.symbol is not None:
        summary["symbol"] = result.symbol.to_json()
    return summary


def _map_file(ranked: RankedFile, of_change: bool) -> MapFile:
    entry: MapFile = {"path": escape_path(ranked.path), "rank": ranked.rank, "symbols": len(ranked.symbols)}
    if of_change:  # the blast radius: what changed, and how far each file reaches
        if ranked.change:
            entry["change"] = ranked.change
        entry["dependents"] = ranked.dependents
    return entry


def record_activity(
    state: State,
    *,
    edited: Sequence[str] = (),
    read: Sequence[str] = (),
    active: str | None = None,
    new_conversation: bool = False,
) -> ActivitySummary:
    """Record what the agent did: every later map weighs these files (edited most)."""
    repo = state.repo
    checked_edited = relative_paths(repo.root, edited, "edited file")
    checked_read = relative_paths(repo.root, read, "read file")
    checked_active = None if active is None else relative_path(repo.root, active, "active file")
    if new_conversation:
        repo.forget_session()
    for path in checked_edited:
        repo.file_edited(path)
    for path in checked_read:
        repo.file_read(path)
    if checked_active is not None:
        repo.active_file(checked_active)
    files = repo.session_files()
    return {
        "edited": [escape_path(p) for p in files.edited],
        "read": [escape_path(p) for p in files.read],
        "active": escape_path(files.active[0]) if files.active else None,
    }


async def search_symbols(
    state: State,
    query: str,
    *,
    kind: str | None = None,
    path: str | None = None,
    limit: int = 20,
    server_wait: float = 0.0,
) -> SymbolSearchJson:
    """The repository's symbol index (:mod:`hybridmap.features.search`): any case or style, typos allowed;
    the ready language servers' workspace/symbol hits merged in (:mod:`hybridmap.features.search_servers`)."""
    if not normalized(query):
        raise ToolFailure("query must contain a letter or digit")
    prefix = None if path in (None, "", ".") else relative_path(state.repo.root, path, "path")
    found = await state.repo.search_symbols(query, limit=limit, kind=kind or None, path=prefix, server_wait=server_wait)
    return found.to_json()


async def find_files(state: State, query: str, *, limit: int = 20) -> FileSearchJson:
    """Paths matching ``query`` fzf style (:mod:`hybridmap.features.file_search`)."""
    if not query.strip():
        raise ToolFailure("query must not be empty")
    return (await state.repo.find_files(query, limit=limit)).to_json()


async def agent_notes(state: State, cwd: str = ".") -> AgentNotesJson:
    """The AGENTS.md chain for ``cwd`` (:mod:`hybridmap.features.agents_md`): repository text, made safe."""
    where = "." if cwd in ("", ".") else relative_path(state.repo.root, cwd, "cwd")
    return (await state.repo.agent_notes(where)).to_json()


async def dead_code(
    state: State,
    *,
    path: str | None = None,
    limit: int = 100,
    server_wait: float = 0.0,
    progress: Progress | None = None,
) -> DeadCodeJson:
    """Unused definitions (:mod:`hybridmap.features.dead_code`), optionally under ``path``; checked by the
    ready language servers' references (:mod:`hybridmap.features.dead_servers`)."""
    prefix = None if path in (None, "", ".") else relative_path(state.repo.root, path, "path")
    found = await state.repo.dead_code(server_wait=server_wait, progress=progress)
    return found.to_json(under=prefix, limit=limit)


async def find_clones(
    state: State, *, similarity: float | None = None, limit: int = 20, progress: Progress | None = None
) -> ClonesJson:
    """Near-duplicate functions (:mod:`hybridmap.features.clones`), largest groups first."""
    return clones_json(await state.repo.clones(similarity, progress=progress), limit)


async def file_outline(state: State, path: str) -> Outline:
    rel = relative_path(state.repo.root, path, "path")
    await refresh(state)
    tags = current_tags(state.repo).get(rel)
    if tags is None:
        raise ToolFailure(f"'{_shown(rel)}' is not a source file of this map (not listed, or not a supported language)")
    return {
        "path": escape_path(rel),
        "language": state.repo.registry.language_for(rel, head_reader(state.repo.root)),
        "symbols": [symbol_entry(rel, tags, s) for s in tags.symbols],
    }


async def server_status(state: State, server_wait: float = 0.0) -> ServerStatus:
    result = await state.repo.map(tokens=REFRESH_TOKENS, mode="hybrid", server_wait=server_wait)
    state.remember(result)
    return {"servers": {k: server_info(v) for k, v in result.servers.items()}}


# --- symbol info ---------------------------------------------------------------------------------

_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;|%)")
_DOCSTRING = re.compile(r"^\s*[rRbBuU]?(\"\"\"|''')")


def read_doc(root: Path, path: str, sym: Symbol) -> str:
    """The definition's docstring (the string right after a Python signature) or the comment
    block right above it; empty when neither. ``path`` was listed by the walk (inside root). A
    notebook's lines are its code cells', not its JSON's: its first sentence read at parse time."""
    if is_notebook(path):
        return safe_block(sym.doc)
    try:
        lines = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    body = sym.span.start_line + max(1, len(sym.signature.strip().splitlines()))
    doc: list[str] = []
    opened = _DOCSTRING.match(lines[body]) if body < len(lines) else None
    if opened:
        quote = opened.group(1)
        for line in lines[body : body + DOC_LINES]:
            doc.append(line.strip())
            if (line.count(quote) >= 2 or doc[1:]) and line.rstrip().endswith(quote):
                break
    else:
        i = sym.span.start_line - 1
        while i >= 0 and len(doc) < DOC_LINES and _COMMENT.match(lines[i]):
            doc.insert(0, lines[i].strip())
            i -= 1
    return safe_block("\n".join(doc))


#: How a reference's provenance reads to an agent (a policy's name reads as itself).
_EDGE_SOURCES = {"lsp": "language server", "name-match": "name match", "scip": "scip index"}


def references_to(graph: RepoGraph | None, tags: Mapping[str, FileTags], path: str, name: str) -> list[Reference]:
    """Files using ``name`` as defined in ``path``, from the graph's edges (server-resolved or
    name-matched), each with the lines of the uses, most uses first; then uses in ``path``
    itself (the graph keeps no edge from a file to itself)."""

    def lines_in(src: str) -> list[int]:
        src_tags = tags.get(src)
        return sorted({r.line + 1 for r in src_tags.references if r.name == name})[:20] if src_tags else []

    out: list[Reference] = []
    if graph is not None and name in graph.ident_index and path in graph.index:
        dst = graph.index[path]
        for row in graph.edges_by_ident.get(graph.ident_index[name], ()):
            src = graph.files[int(graph.edge_src[row])]
            if int(graph.edge_dst[row]) != dst or src == path:
                continue
            provenance = graph.provenance(int(row))
            out.append(
                {
                    "path": escape_path(src),
                    "lines": lines_in(src),
                    "count": int(graph.edge_count[row]),
                    "source": _EDGE_SOURCES.get(provenance, provenance),
                }
            )
    out.sort(key=lambda r: (-r["count"], r["path"]))
    own = lines_in(path)
    if own:
        out.append({"path": escape_path(path), "lines": own, "count": len(own), "source": "same file"})
    return out


def _pick(tags: Mapping[str, FileTags], name: str, path: str | None, line: int | None) -> list[tuple[str, Symbol]]:
    """Definitions named ``name`` (exactly, else ignoring case), in ``path``, nearest ``line``."""
    pool = [(p, s) for p, t in tags.items() if path is None or p == path for s in t.symbols]
    hits = [(p, s) for p, s in pool if s.name == name] or [(p, s) for p, s in pool if s.name.lower() == name.lower()]
    if line is not None and hits:

        def distance(hit: tuple[str, Symbol]) -> int:
            span = hit[1].span
            inside = span.start_line <= line - 1 <= span.end_line
            return 0 if inside else min(abs(span.start_line - (line - 1)), abs(span.end_line - (line - 1)))

        best = min(distance(h) for h in hits)
        hits = [h for h in hits if distance(h) == best]
    return sorted(hits, key=lambda h: (h[0], h[1].name_line))


async def symbol_info(state: State, name: str, *, path: str | None = None, line: int | None = None) -> SymbolInfo:
    repo = state.repo
    rel = relative_path(repo.root, path, "path") if path else None
    result = await refresh(state)
    tags = current_tags(repo)
    if rel is not None and rel not in tags:
        raise ToolFailure(f"'{_shown(rel)}' is not a source file of this map")
    hits = _pick(tags, name.strip(), rel, line)
    if not hits:
        where = f" in '{_shown(rel)}'" if rel else ""
        raise ToolFailure(f"no definition named '{_shown(name)}'{where} (search_symbols finds near names)")
    graph = repo.graph()
    definitions: list[Definition] = []
    for p, sym in hits[:LIST_LIMIT]:
        refs = references_to(graph, tags, p, sym.name)
        definitions.append(
            {
                "name": safe_line(sym.name),
                "kind": sym.kind,
                "path": escape_path(p),
                "line": sym.name_line + 1,
                "end_line": sym.span.end_line + 1,
                "signature": _signature(sym),
                "detail": safe_line(state.details.get((p, sym.name_line + 1), sym.detail)),
                "doc": read_doc(repo.root, p, sym),
                "references": refs[: LIST_LIMIT * 2],
                "references_total": len(refs),
            }
        )
    language = repo.registry.language_for(hits[0][0], head_reader(repo.root))
    report = result.servers.get(language) if language else None
    resolved = any(r["source"] == "language server" for d in definitions for r in d["references"])
    source = (
        "language server"
        if resolved
        else "tree-sitter name matching"
        + ("" if report is None or str(report.state) == "ready" else f" (the {language} server is {report.state})")
    )
    return {"definitions": definitions, "source": source, "server": server_info(report) if report is not None else None}


# --- compare -------------------------------------------------------------------------------------


async def compare_maps(
    state: State,
    *,
    chat_files: Sequence[str] = (),
    mentioned_idents: Sequence[str] = (),
    tokens: int | None = None,
    server_wait: float = 10.0,
) -> CompareSummary:
    repo = state.repo
    chat = relative_paths(repo.root, chat_files, "chat file")
    comparison = await repo.compare(
        chat_files=chat, mentioned_idents=list(mentioned_idents), tokens=tokens, server_wait=server_wait
    )
    state.remember(comparison.hybrid)

    def edge(e: Edge) -> EdgeEntry:
        return {"src": escape_path(e.src), "dst": escape_path(e.dst), "ident": safe_line(e.ident)}

    moved = comparison.moved_files
    return {
        "resolved": len(comparison.resolved),
        "removed": len(comparison.removed),
        "kept": comparison.kept,
        "resolved_first": [edge(e) for e in comparison.resolved[:LIST_LIMIT]],
        "removed_first": [edge(e) for e in comparison.removed[:LIST_LIMIT]],
        "moved_files": len(moved),
        "moves_first": [
            {"path": escape_path(m.path), "static": m.static, "hybrid": m.hybrid, "change": m.change}
            for m in moved[:LIST_LIMIT]
        ],
        "moved_symbols": len(comparison.moved_symbols),
        "servers": {k: server_info(v) for k, v in comparison.servers.items()},
        "servers_ready": comparison.servers_ready,
        "notes": [safe_line(n) for n in comparison.notes],
    }
