"""The static and the hybrid map of one request, side by side: what the language servers changed.

:func:`compare_maps` is pure. It takes the static-only and the hybrid
:class:`~hybridmap.model.MapResult` of *one* request, built from one index
snapshot, with the graph each was ranked on (:meth:`AsyncRepoMap.compare
<hybridmap.api.repo.AsyncRepoMap.compare>` builds them under one lock), and returns a
frozen :class:`Comparison`: the edges the servers resolved, the name-matched
guesses they removed, the files and definitions that moved in rank, what each
map spent of the budget, the servers' states and the diagnostics.

:func:`render_comparison` lays a comparison out for people: two columns
(static | hybrid, aligned line by line) or a unified view (``-`` only in the
static map, ``+`` only in the hybrid one), then the differences.
:meth:`Comparison.to_json` is the machine-readable form.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from ..infra.sanitize import escape_path, json_safe, safe_line
from ..model import Diagnostic, MapRequest, MapResult, Provenance, ServerReport, ServerState

if TYPE_CHECKING:  # the command line imports this module: numpy only where a graph is read
    from ..pipeline.graph.repo_graph import RepoGraph

"""Seconds ``hybridmap compare`` waits for servers by default: a one-shot compare that
did not wait could show no server answer at all. 60 s is what Serena gives pyright;
every server measured here (docs/language-servers.md) is ready within a few seconds
on small repositories, and the wait ends as soon as all of them are idle."""
MIN_COLUMN_WIDTH = 40
"""The ``auto`` layout uses two columns only when each gets at least this many characters."""
LIST_LIMIT = 20
"""Text output lists at most this many edges / moves per section (JSON lists all)."""

Layout = Literal["columns", "unified"]
Change = Literal["entered", "left", "up", "down", "same"]

_GUTTER = {"equal": " │ ", "left": " < ", "right": " > ", "both": " ≠ "}
_GUTTER_WIDTH = 3


class Edge(NamedTuple):
    """One graph edge: file ``src`` uses identifier ``ident`` defined in file ``dst``."""

    src: str
    dst: str
    ident: str

    def to_json(self) -> dict[str, str]:
        return {"src": escape_path(self.src), "dst": escape_path(self.dst), "ident": self.ident}


def graph_edges(graph: RepoGraph) -> dict[Edge, str]:
    """Every (src, dst, ident) edge of ``graph`` with its provenance."""
    files, idents, names = graph.files, graph.idents, graph.provenances
    return {
        Edge(files[s], files[d], idents[i]): names[p]
        for s, d, i, p in zip(
            graph.edge_src.tolist(),
            graph.edge_dst.tolist(),
            graph.edge_ident.tolist(),
            graph.edge_provenance.tolist(),
            strict=True,
        )
    }


def _change(static: int | None, hybrid: int | None) -> Change:
    if static is None:
        return "entered"
    if hybrid is None:
        return "left"
    if hybrid < static:
        return "up"
    return "down" if hybrid > static else "same"


@dataclass(frozen=True, slots=True)
class FileMove:
    """A file's 1-based position in each map's file order (None: not in that map)."""

    path: str
    static: int | None
    hybrid: int | None
    static_rank: float | None
    hybrid_rank: float | None

    @property
    def change(self) -> Change:
        return _change(self.static, self.hybrid)

    def to_json(self) -> dict[str, object]:
        return {
            "path": escape_path(self.path),
            "static": self.static,
            "hybrid": self.hybrid,
            "change": self.change,
            "static_rank": self.static_rank,
            "hybrid_rank": self.hybrid_rank,
        }


@dataclass(frozen=True, slots=True)
class SymbolMove:
    """A definition's 1-based position among all definitions shown, best rank first."""

    path: str
    name: str
    kind: str
    line: int
    static: int | None
    hybrid: int | None

    @property
    def change(self) -> Change:
        return _change(self.static, self.hybrid)

    def to_json(self) -> dict[str, object]:
        return {
            "path": escape_path(self.path),
            "name": self.name,
            "kind": self.kind,
            "line": self.line,
            "static": self.static,
            "hybrid": self.hybrid,
            "change": self.change,
        }


@dataclass(frozen=True, slots=True)
class BudgetUse:
    """What one map spent: tokens of its budget, files listed, definitions shown."""

    budget: int
    tokens: int
    files: int
    symbols: int

    @classmethod
    def of(cls, result: MapResult) -> BudgetUse:
        return cls(result.budget, result.tokens, len(result.files), sum(len(f.symbols) for f in result.files))

    def to_json(self) -> dict[str, int]:
        return {"budget": self.budget, "tokens": self.tokens, "files": self.files, "symbols": self.symbols}


@dataclass(frozen=True)
class Comparison:
    """The static and the hybrid map of one request and what differs between them.

    Edge sets partition cleanly: the static graph's edges are ``kept`` +
    ``removed`` + the resolved edges that name matching had guessed too
    (``confirmed``); the hybrid graph's edges are ``kept`` + ``resolved``.
    """

    request: MapRequest
    static: MapResult
    hybrid: MapResult
    resolved: tuple[Edge, ...]
    """Edges of the hybrid graph not guessed from names (a server's, an index's or a policy's), sorted."""

    removed: tuple[Edge, ...]
    """Name-matched edges of the static graph that the hybrid graph no longer has, sorted."""
    confirmed: frozenset[Edge]
    """The resolved edges that name matching had also guessed (the server chose among them)."""
    kept: int
    """Name-matched edges present in both graphs (no server answered for them)."""
    files: tuple[FileMove, ...]
    """Every file in either map, in hybrid order, then the ones that left."""
    symbols: tuple[SymbolMove, ...]
    """Every definition shown in either map, in hybrid order, then the ones that left."""
    static_budget: BudgetUse
    hybrid_budget: BudgetUse
    servers: Mapping[str, ServerReport]
    """The hybrid map's servers (the static map starts none)."""
    diagnostics: tuple[Diagnostic, ...]
    """Both maps' diagnostics, each once."""
    notes: tuple[str, ...] = field(default=())
    """Plain sentences on what limited the comparison (servers not ready, none configured...)."""
    resolved_by: Mapping[Edge, str] = field(default_factory=dict)
    """The provenance of each resolved edge: the source that resolved it (``lsp``, ``scip``) or
    the policy that derived it (:mod:`hybridmap.pipeline.policies`)."""

    @property
    def servers_ready(self) -> bool:
        """True when every configured server was ready (False when there is none)."""
        return bool(self.servers) and all(r.state is ServerState.READY for r in self.servers.values())

    @property
    def moved_files(self) -> tuple[FileMove, ...]:
        return tuple(m for m in self.files if m.change != "same")

    @property
    def moved_symbols(self) -> tuple[SymbolMove, ...]:
        return tuple(m for m in self.symbols if m.change != "same")

    def to_json(self) -> dict[str, object]:
        """JSON-ready, as :meth:`MapResult.to_json` (escaped paths, UTF-8 encodable)."""
        document: dict[str, object] = {
            "request": {
                "chat_files": list(self.request.chat_files),
                "mentioned_files": list(self.request.mentioned_files),
                "mentioned_idents": list(self.request.mentioned_idents),
                "tokens": self.static.budget,
                "server_wait": self.request.server_wait,
            },
            "static": self.static.to_json(),
            "hybrid": self.hybrid.to_json(),
            "edges": {
                "resolved": [
                    {**e.to_json(), "name_matched": e in self.confirmed, "provenance": self.resolved_by.get(e, "lsp")}
                    for e in self.resolved
                ],
                "removed": [e.to_json() for e in self.removed],
                "kept": self.kept,
                "static": dict(self.static.edges),
                "hybrid": dict(self.hybrid.edges),
            },
            "rank": {
                "files": [m.to_json() for m in self.files],
                "symbols": [m.to_json() for m in self.symbols],
            },
            "budget": {"static": self.static_budget.to_json(), "hybrid": self.hybrid_budget.to_json()},
            "servers": {k: v.to_json() for k, v in self.servers.items()},
            "servers_ready": self.servers_ready,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "notes": list(self.notes),
        }
        return cast("dict[str, object]", json_safe(document))  # a dict stays a dict


def compare_maps(
    request: MapRequest, static: MapResult, static_graph: RepoGraph, hybrid: MapResult, hybrid_graph: RepoGraph
) -> Comparison:
    """Compare the static and hybrid maps of ``request`` (built from one index snapshot)."""
    if static.mode != "static" or hybrid.mode != "hybrid":
        raise ValueError(f"expected a static and a hybrid map, got {static.mode} and {hybrid.mode}")
    before = graph_edges(static_graph)
    after = graph_edges(hybrid_graph)
    resolved = sorted(e for e, p in after.items() if p != Provenance.NAME_MATCH)
    removed = sorted(e for e, p in before.items() if p == Provenance.NAME_MATCH and e not in after)
    kept = sum(1 for e, p in after.items() if p == Provenance.NAME_MATCH and e in before)
    return Comparison(
        request=request,
        static=static,
        hybrid=hybrid,
        resolved=tuple(resolved),
        removed=tuple(removed),
        confirmed=frozenset(e for e in resolved if e in before),
        kept=kept,
        files=_file_moves(static, hybrid),
        symbols=_symbol_moves(static, hybrid),
        static_budget=BudgetUse.of(static),
        hybrid_budget=BudgetUse.of(hybrid),
        servers=dict(hybrid.servers),
        diagnostics=tuple(dict.fromkeys((*static.diagnostics, *hybrid.diagnostics))),
        notes=_notes(request, hybrid),
        resolved_by={e: after[e] for e in resolved},
    )


def _file_moves(static: MapResult, hybrid: MapResult) -> tuple[FileMove, ...]:
    before = {f.path: (i, f.rank) for i, f in enumerate(static.files, 1)}
    after = {f.path: (i, f.rank) for i, f in enumerate(hybrid.files, 1)}
    order = [*after, *(p for p in before if p not in after)]
    return tuple(
        FileMove(
            p,
            before[p][0] if p in before else None,
            after[p][0] if p in after else None,
            before[p][1] if p in before else None,
            after[p][1] if p in after else None,
        )
        for p in order
    )


_SymbolKey = tuple[str, str, str, int]


def _symbol_positions(result: MapResult) -> dict[_SymbolKey, int]:
    """Definitions shown, by rank (ties: file order, then line), as 1-based positions."""
    shown = [
        ((f.path, s.name, s.kind, s.line), -s.rank, fi, s.line) for fi, f in enumerate(result.files) for s in f.symbols
    ]
    shown.sort(key=lambda t: (t[1], t[2], t[3]))
    return {key: i for i, (key, *_rest) in enumerate(shown, 1)}


def _symbol_moves(static: MapResult, hybrid: MapResult) -> tuple[SymbolMove, ...]:
    before = _symbol_positions(static)
    after = _symbol_positions(hybrid)
    order = [*after, *(k for k in before if k not in after)]
    return tuple(SymbolMove(k[0], k[1], k[2], k[3], before.get(k), after.get(k)) for k in order)


def _notes(request: MapRequest, hybrid: MapResult) -> tuple[str, ...]:
    notes: list[str] = []
    wait = f"{request.server_wait:g} s"
    if not hybrid.servers:
        notes.append(
            "no language server is configured for the languages of this repository: the hybrid map is the static map"
        )
    for language, report in sorted(hybrid.servers.items()):
        if report.state is ServerState.READY:
            continue
        who = f"{language} ({report.server})" if report.server else language
        if report.state in (ServerState.MISSING, ServerState.UNTRUSTED, ServerState.FAILED):
            notes.append(
                f"{who}: server {report.state}: its names stay name-matched"
                + (f" ({report.detail})" if report.detail else "")
            )
        elif request.server_wait <= 0:
            notes.append(
                f"{who}: server {report.state}: server wait is 0, so the hybrid map used only "
                "answers the server gave to earlier maps of this object (none in a one-shot call): "
                "pass a server wait (--server-wait; the compare command's default waits)"
            )
        else:
            notes.append(
                f"{who}: server not ready within the server wait of {wait} ({report.state}): "
                "the hybrid map used only what it had answered by then"
            )
    pending = int(hybrid.stats.get("lsp_pending_jobs", 0))
    if pending:
        notes.append(
            f"{pending} server requests were still queued when the hybrid map was built: what they "
            "would answer is not in it (names not yet resolved keep their name-matched edges)"
        )
    return tuple(notes)


# --- rendering (pure: text in, text out) -------------------------------------------------


def choose_layout(layout: str, width: int | None, is_terminal: bool) -> Layout:
    """``auto``: two columns on a terminal wide enough for them, else unified (also when piped)."""
    if layout in ("columns", "unified"):
        return layout  # type: ignore[return-value]
    if not is_terminal or width is None:
        return "unified"
    return "columns" if (width - _GUTTER_WIDTH) // 2 >= MIN_COLUMN_WIDTH else "unified"


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


def fit(text: str, width: int | None) -> str:
    """``text`` cut to ``width`` cells, with ``…`` marking the cut (no limit when None)."""
    if width is None or display_width(text) <= width:
        return text
    if width <= 0:
        return ""
    out: list[str] = []
    used = 0
    for c in text:
        w = display_width(c)
        if used + w > width - 1:
            break
        out.append(c)
        used += w
    return "".join(out) + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _map_lines(result: MapResult) -> list[tuple[str, str]]:
    """(file block, line) for every line of the map text ("" for the lines before the first file).

    Lines are compared with their block: ``class Runner:`` under one file is not the
    same line as ``class Runner:`` under another.
    """
    headers = {f.path for f in result.files} | {f"{f.path}:" for f in result.files}
    block = ""
    out = []
    for line in result.text.splitlines():
        bare = _HEADER_MARKS.sub("", line)  # path: [R:3] [NEW] -> path:
        if bare in headers:
            block = bare.removesuffix(":")
        out.append((block, line.expandtabs(4)))
    return out


#: The marks a file's header line may end with (``render.py``): dependents, then new.
_HEADER_MARKS = re.compile(r"( \[R:\d+\])?( \[NEW\])?$")


def _aligned(
    left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]]
) -> Iterable[tuple[str, str | None, str | None]]:
    """(kind, static line, hybrid line) rows, equal lines side by side (sdiff-style)."""
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(left[i1:i2], right[j1:j2], strict=True):
                yield "equal", a[1], b[1]
            continue
        for x, y in zip_longest(left[i1:i2], right[j1:j2]):
            if x is not None and y is not None and x[0] == y[0]:
                yield "both", x[1], y[1]
                continue
            # Lines of different files are never shown as one changed line.
            if x is not None:
                yield "left", x[1], None
            if y is not None:
                yield "right", None, y[1]


def _summary(name: str, use: BudgetUse, result: MapResult) -> str:
    counts = [f"{n} {p} edges" for p, n in result.edges.items() if p != Provenance.NAME_MATCH and n]
    edges = f", {', '.join(counts) or '0 lsp edges'}" if name == "hybrid" else ""
    return f"{name}{edges}: {use.tokens}/{use.budget} tokens, {use.files} files, {use.symbols} symbols"


def render_columns(comparison: Comparison, width: int | None) -> list[str]:
    left, right = _map_lines(comparison.static), _map_lines(comparison.hybrid)
    heads = (
        _summary("static", comparison.static_budget, comparison.static),
        _summary("hybrid", comparison.hybrid_budget, comparison.hybrid),
    )
    if width is None:  # no terminal to fit: columns as wide as the widest line
        column = max(map(display_width, [*(t for _, t in (*left, *right)), *heads]), default=1)
    else:
        column = max(1, (width - _GUTTER_WIDTH) // 2)
    lines = [_pad(fit(heads[0], column), column) + " │ " + fit(heads[1], column), "─" * column + "─┼─" + "─" * column]
    for kind, a, b in _aligned(left, right):
        lines.append((_pad(fit(a or "", column), column) + _GUTTER[kind] + fit(b or "", column)).rstrip())
    return lines


def render_unified(comparison: Comparison, width: int | None) -> list[str]:
    left, right = _map_lines(comparison.static), _map_lines(comparison.hybrid)
    lines = [
        fit("--- " + _summary("static", comparison.static_budget, comparison.static), width),
        fit("+++ " + _summary("hybrid", comparison.hybrid_budget, comparison.hybrid), width),
    ]
    for kind, a, b in _aligned(left, right):
        if kind == "equal":
            lines.append(fit("  " + (a or ""), width))
            continue
        if a is not None:
            lines.append(fit("- " + a, width))
        if b is not None:
            lines.append(fit("+ " + b, width))
    return lines


def _position(p: int | None) -> str:
    return "-" if p is None else str(p)


def _capped(items: Sequence[str], limit: int, what: str) -> list[str]:
    lines = [f"  {item}" for item in items[:limit]]
    if len(items) > limit:
        lines.append(f"  … and {len(items) - limit} more {what} (--format json lists all)")
    return lines


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(_pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def render_differences(comparison: Comparison, limit: int = LIST_LIMIT) -> list[str]:
    """The sections below the maps: servers, edges, rank moves, budget, diagnostics, notes."""
    c = comparison
    out: list[str] = []
    out.append(f"Servers (server wait {c.request.server_wait:g} s):")
    if not c.servers:
        out.append("  none configured for the languages of this repository")
    for language, report in sorted(c.servers.items()):
        bits = [report.server or "-"]
        if report.seconds_to_ready is not None:
            bits.append(f"ready after {report.seconds_to_ready:.2f} s")
        if report.detail:
            bits.append(report.detail)
        out.append(f"  {language}: {report.state} ({', '.join(bits)})")

    def edge(e: Edge) -> str:
        return f"{e.src} -> {e.dst}  {e.ident}"

    confirmed = len(c.confirmed)
    by_source = Counter(c.resolved_by.get(e, "lsp") for e in c.resolved)
    if set(by_source) <= {"lsp"}:
        counted = f"{len(c.resolved)} lsp edges"
    else:
        counted = f"{len(c.resolved)} edges (" + ", ".join(f"{n} {p}" for p, n in sorted(by_source.items())) + ")"
    out.append(
        f"Resolved by servers: {counted}"
        + (f" ({confirmed} of them among the name-matched guesses)" if c.resolved else "")
    )

    def resolved_line(e: Edge) -> str:
        provenance = c.resolved_by.get(e, "lsp")
        note = "" if e in c.confirmed else "  (not name-matched)"
        return edge(e) + ("" if provenance == "lsp" else f"  [{provenance}]") + note

    out += _capped([resolved_line(e) for e in c.resolved], limit, "resolved edges")
    out.append(f"Removed name-matched guesses: {len(c.removed)}")
    out += _capped([edge(e) for e in c.removed], limit, "removed edges")
    out.append(f"Kept name-matched edges (no server answer changed them): {c.kept}")

    files = c.moved_files
    out.append(f"Files that moved (position in the static map -> the hybrid map): {len(files)}")
    if files:
        rows = [[m.path, _position(m.static), "->", _position(m.hybrid), m.change] for m in files[:limit]]
        out += ["  " + line for line in _table(rows)]
        if len(files) > limit:
            out.append(f"  … and {len(files) - limit} more files (--format json lists all)")
    symbols = c.moved_symbols
    out.append(f"Symbols that moved (position among the symbols shown): {len(symbols)}")
    if symbols:
        rows = [
            [f"{m.path}:{m.line}", f"{m.name} ({m.kind})", _position(m.static), "->", _position(m.hybrid), m.change]
            for m in symbols[:limit]
        ]
        out += ["  " + line for line in _table(rows)]
        if len(symbols) > limit:
            out.append(f"  … and {len(symbols) - limit} more symbols (--format json lists all)")

    s, h = c.static_budget, c.hybrid_budget
    out.append("Budget spent:")
    out += [
        "  " + line
        for line in _table(
            [
                ["", "static", "hybrid"],
                ["tokens", f"{s.tokens}/{s.budget}", f"{h.tokens}/{h.budget}"],
                ["files", str(s.files), str(h.files)],
                ["symbols", str(s.symbols), str(h.symbols)],
            ]
        )
    ]
    if c.diagnostics:
        out.append(f"Diagnostics: {len(c.diagnostics)}")
        out += _capped([f"{d.path}: {d.kind}: {d.message}" for d in c.diagnostics], limit, "diagnostics")
    for note in c.notes:
        out.append(f"Note: {note}")
    return [safe_line(line) for line in out]  # paths, names, server details: the repository's


def render_comparison(comparison: Comparison, layout: Layout, width: int | None, limit: int = LIST_LIMIT) -> str:
    """The whole text view; with a ``width`` no line is wider than it."""
    maps = render_columns(comparison, width) if layout == "columns" else render_unified(comparison, width)
    below = [fit(line, width) for line in render_differences(comparison, limit)]
    return "\n".join([*maps, "", *below]) + "\n"
