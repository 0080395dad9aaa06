"""One map from one snapshot: merge → graph → rank → render → pack, then the result. Pure.

:class:`MapBuilder` takes what the sources know (:class:`MapInputs`: the workspace snapshot,
the base view, the refining views in precedence order, the servers' states) and a request
whose paths are already relative to the root, and returns the :class:`MapResult` with the
keys of the shown symbols no source has described yet. It keeps the last graph and the merge
memo between calls (the one place this stage caches): an unchanged snapshot and unchanged
views re-rank without rebuilding either.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ..languages.lexical import words
from ..languages.notebooks import cell_lines
from ..languages.visibility import Visibility
from ..model import (
    CodeChange,
    Diagnostic,
    FileTags,
    HoverKey,
    MapChanges,
    MapResult,
    Mode,
    RankedFile,
    RankedSymbol,
    ServerReport,
    ServerState,
    SourceSummary,
    SymbolFocus,
)
from ..settings import Settings
from ..sources.base import SourceView
from ..store.kept_graph import KeptGraph
from ..store.lexicon import KeptLexicon
from ..workspace.state import Snapshot
from .graph.neighbourhood import Neighbourhood, SymbolQuery, neighbourhood
from .graph.repo_graph import RepoGraph
from .graph.update import GraphUpdater
from .inputs.change import ChangeFocus, change_focus
from .inputs.cochange import CoChange
from .inputs.mentions import MentionReader
from .inputs.session import Layout, SessionFiles
from .merge import Merged, MergeMemo, merge_views
from .pack.packer import Packed, SummaryRules, add_summaries, pack
from .pack.stable import StableOrder, layout_of, stable_order
from .pack.tokens import Counter
from .policies import PolicyMemo, apply_policies
from .rank import Ranking, rank
from .rank.lexical import LexicalIndex
from .render.marks import Dependents, dependents
from .render.skeleton import Renderer
from .render.summaries import SummarySource
from .warm_start import GraphKeeper

#: Server states said as a diagnostic on the map (a missing or failed server degrades it).
_DEGRADED_STATES = (ServerState.FAILED, ServerState.MISSING, ServerState.UNTRUSTED)


@dataclass(frozen=True, slots=True)
class MapInputs:
    """Everything one map is built from, taken at one moment."""

    snapshot: Snapshot
    base: SourceView
    refiners: tuple[SourceView, ...] = ()
    """The refining sources' views, most trusted first (none in a static map)."""
    servers: Mapping[str, ServerReport] = field(default_factory=dict)
    notes: tuple[Diagnostic, ...] = ()
    """Diagnostics from outside the pipeline: source health, settings, the cache."""
    co_change: CoChange | None = None
    """Files changed together in the git history (None when no co-change weight is on)."""


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """A validated request: budget resolved, paths relative to the root."""

    budget: int
    mode: Mode
    chat: tuple[str, ...] = ()
    mentioned_files: tuple[str, ...] = ()
    mentioned_idents: tuple[str, ...] = ()
    message: str = ""
    session: SessionFiles = field(default_factory=SessionFiles)
    changes: MapChanges = field(default_factory=MapChanges)
    """Since the session's previous map: its new files are marked ``[NEW]``."""
    budget_note: str = ""
    """Why ``budget`` is below what was asked (``max_tokens_ceiling``): a ``budget_capped``
    diagnostic."""
    reasons: bool = False
    """Each file's reasons after its path (``MapRequest.reasons``, else ``render_reasons``)."""
    change: CodeChange | None = None
    """A map of a change (``MapRequest.diff``): what the working tree changed since its base,
    read when the map is made (:mod:`hybridmap.workspace.diff`)."""
    stable: bool = False
    """Lay the map out after ``layout`` (:mod:`.pack.stable`)."""
    layout: Layout | None = None
    """The session's previous map's layout (None: none yet, or not a stable layout)."""
    symbol: SymbolQuery | None = None
    """A map of a symbol's neighbourhood (``MapRequest.symbol``)."""


class MapBuilder:
    """Builds maps for one repository, keeping the graph and merge memo between calls."""

    def __init__(
        self,
        settings: Settings,
        counter: Counter,
        conventions: Mapping[str, str | None] | None = None,
        summaries: SummarySource | None = None,
        kept_lexicon: Callable[[], KeptLexicon | None] | None = None,
        kept_graph: Callable[[str], KeptGraph | None] | None = None,
        one_shot: bool = False,
    ) -> None:
        """``kept_lexicon``: reads the lexical models the last process kept (None: none);
        ``kept_graph``: reads the static graph it kept, built from a digest (:mod:`.warm_start`;
        None: none is read, and none handed on); ``one_shot``: this process builds one map (the
        CLI without its daemon or a server): nothing is held for patching a later one (a later
        map, if any, is built whole)."""
        self._settings = settings
        self._counter = counter
        self._summaries = summaries if summaries is not None else SummarySource()
        """Where summaries come from (the default: docstrings and hovers)."""
        self._conventions = conventions or {}
        """Language -> its visibility convention (``+`` marks)."""
        self._keeper = GraphKeeper(settings, self._conventions, kept_graph)
        self._dependents: tuple[RepoGraph | None, Mapping[str, Dependents]] = (None, {})
        self._graph: RepoGraph | None = None
        self._graph_key: object = None
        self._graphs = GraphUpdater(settings, patches=not one_shot)  # patches the last graph after an edit
        self._retired: list[RepoGraph] = []
        """Graphs a build replaced, until :meth:`take_retired` (see there)."""
        self._graph_made = ""
        """How the last map's graph came: ``rebuilt``, ``updated``, ``kept`` or ``adopted`` (the last process's)."""
        self._merge_memo = MergeMemo()
        self._lexical = LexicalIndex(kept_lexicon, keep_vectors=not one_shot)
        self._mentions = MentionReader(settings)
        self._policy_memo = PolicyMemo() if not one_shot else None
        """Each file's facts for the policies, kept to redo only an edit's (None: not kept)."""
        self._static_merged: tuple[object, Merged] | None = None
        self.last_layout: Layout | None = None
        """The layout of the last map built with a stable layout (None after any other map)."""

    @property
    def graph(self) -> RepoGraph | None:
        """The graph of the last build (None before the first)."""
        return self._graph

    def take_retired(self) -> list[RepoGraph]:
        """The graphs the builds since the last call replaced, held here so that letting go of
        them (tens of MB of arrays and what hangs on them at 100,000 files: ~20 ms of an edit's
        map) happens where the caller chooses, not in the middle of the next map."""
        retired, self._retired = self._retired, []
        return retired

    def lexicon_to_keep(self) -> KeptLexicon | None:
        """The lexical models for the next process, when this one counted words for them."""
        return self._lexical.to_keep()

    def graph_to_keep(self) -> KeptGraph | None:
        """The static graph for the next process, when this one built it (:mod:`.warm_start`)."""
        return self._keeper.to_keep(self._graph)

    def build(self, inputs: MapInputs, request: BuildRequest) -> tuple[MapResult, list[HoverKey]]:
        """The map, and the (path, line, column) of shown symbols no source has described yet.

        A kept graph (:mod:`.warm_start`) can disagree with the tags only when a cached record
        was found damaged as its tags were read (``codec.LazyFileTags``: no symbols, the entry
        dropped): a failed build on an adopted graph is made again on one built from the tags."""
        try:
            return self._build(inputs, request)
        except Exception:
            if self._graph_made != "adopted":
                raise
            self._graph = self._graph_key = None
            return self._build(inputs, request)

    def _build(self, inputs: MapInputs, request: BuildRequest) -> tuple[MapResult, list[HoverKey]]:
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        merged, adopted = self._merged(inputs)
        resolved = len(merged.resolved) if adopted is None else adopted[1]
        if inputs.refiners:
            timings["merge"] = time.perf_counter() - t0
        tags = merged.tags
        languages = inputs.snapshot.languages
        named = self._mentions.read(request.mentioned_idents, request.message, inputs.snapshot, inputs.base)
        t1 = time.perf_counter()
        graph = self._graph_for(inputs, merged, adopted)
        self._lexical.describe(graph, partial(_content_keys, inputs.base, tags))
        t2 = time.perf_counter()
        visibility = Visibility(self._conventions, languages)
        focus = change_focus(request.change, tags) if request.change is not None else None
        hood = None
        if request.symbol is not None:
            hood = neighbourhood(graph, tags, request.symbol, self._settings.symbol_neighbours_max)
        # The packer can use at most one item per token plus fill_attempts misses.
        ranking = rank(
            graph,
            tags,
            chat_files=list(request.chat),
            mentioned_files=[*request.mentioned_files, *named.files],
            named_files=named.named(request.mentioned_files),
            mentioned_idents=named.idents,
            settings=self._settings,
            limit=request.budget + self._settings.fill_attempts + 1,
            session=request.session,
            co_change=inputs.co_change,
            visibility=visibility,
            message_words=words(request.message) if request.message else (),
            changed=focus.symbols if focus is not None else None,
            neighbourhood=hood,
            lexical=self._lexical,
        )
        t3 = time.perf_counter()
        order = None
        if request.stable:
            order = stable_order(ranking.items, request.layout, request.budget, self._settings, tags, request.chat)
        reach = self._dependents_of(graph)
        renderer = Renderer(
            *(tags, self._settings, inputs.snapshot.special_files, frozenset(request.changes.new), visibility),
            *(reach, ranking.reasons if request.reasons else None, focus),
            order.kept_blocks if order is not None else None,
            hood,
        )
        packed, summary_notes, summary_stats = self._packed(ranking, order, renderer, tags, request.budget)
        self._counter.flush()
        t4 = time.perf_counter()
        timings.update({"graph": t2 - t1, "rank": t3 - t2, "pack": t4 - t3})
        diagnostics = self._diagnostics(inputs, request, tags, bool(packed.items)) + summary_notes
        if hood is not None and not hood.definitions:
            where = f" in {hood.query.path}" if hood.query.path else ""
            diagnostics.append(Diagnostic(".", "symbol_not_found", f"no definition named '{hood.query.name}'{where}"))
        result = MapResult(
            text=packed.text,
            tokens=packed.tokens,
            budget=request.budget,
            files=ranked_files(
                *(packed.items, tags, ranking.file_scores, ranking.reasons, languages, reach, visibility),
                *(packed.summaries, focus, hood),
            ),
            servers=dict(inputs.servers),
            edges=graph.edge_counts_by_provenance(),
            diagnostics=tuple(diagnostics),
            timings=timings,
            mode=request.mode,
            tokenizer=self._counter.name,
            stats={**_stats(inputs, graph, ranking, packed.renders, resolved), **self._own_stats(), **summary_stats},
            sources=_sources(inputs),
            changes=request.changes,
            mentions=tuple(dict.fromkeys([*request.mentioned_files, *named.files, *named.idents])),
            change=request.change,
            symbol=_symbol_focus(hood, tags),
        )
        return result, _undescribed(packed, tags)

    def _packed(
        self, ranking: Ranking, order: StableOrder | None, renderer: Renderer, tags: Mapping[str, FileTags], budget: int
    ) -> tuple[Packed, list[Diagnostic], dict[str, float]]:
        """The items packed into ``budget``, with summaries (:meth:`_summarized`); with a stable
        layout (``order``), its kept part first, cut to leave ``stable_layout_fresh_share`` of the
        budget to the rest, and the layout kept for the next map (:attr:`last_layout`)."""
        items_budget = self._items_budget(budget)
        if order is not None and order.kept:
            room = int(items_budget * (1 - self._settings.stable_layout_fresh_share))
            order = order.keeping(len(pack(order.items[: order.kept], renderer, self._counter, room, 0).items))
        items = order.items if order is not None else ranking.items
        packed = pack(items, renderer, self._counter, items_budget, self._settings.fill_attempts)
        packed, notes, stats = self._summarized(packed, renderer, tags, budget, order)
        self.last_layout = layout_of(packed.items, order, packed.summaries, budget, tags) if order else None
        if order is not None:  # the JSON's files stay in rank order; the text keeps the layout
            packed = replace(packed, items=tuple(sorted(packed.items, key=lambda item: -item.score)))
        return packed, notes, stats

    def _items_budget(self, budget: int) -> int:
        """The budget the items are packed into: all of it, less ``summary_budget_share``."""
        if not self._settings.render_summaries:
            return budget
        return budget - int(budget * self._settings.summary_budget_share)

    def _summarized(
        self, packed: Packed, renderer: Renderer, tags: Mapping[str, FileTags], budget: int, order: StableOrder | None
    ) -> tuple[Packed, list[Diagnostic], dict[str, float]]:
        """``packed`` with summaries in its leftover budget (same items), what went wrong, counts;
        a stable layout's kept items have the summaries they had, and no others."""
        if not self._settings.render_summaries:
            return packed, [], {}
        summaries = self._summaries.begin(tags)
        if packed.tokens < budget:  # room for summaries: a batch summarizer is asked once, now
            summaries.prefetch((item.path, item.symbol) for item in packed.items if item.symbol >= 0)
        rules = SummaryRules(self._settings.summary_max_chars, self._settings.fill_attempts)
        allowed = order.summaries_allowed if order is not None else None
        if allowed is not None and order is not None:
            kept = order.kept_blocks
            rules = replace(rules, may=lambda key: key not in kept or key in allowed)
        packed = add_summaries(packed, renderer, self._counter, budget, rules, summaries)
        summaries.flush()
        return packed, summaries.diagnostics, {**summaries.stats, "summaries_shown": float(len(packed.summaries))}

    def _dependents_of(self, graph: RepoGraph) -> Mapping[str, Dependents]:
        if self._dependents[0] is not graph:
            self._dependents = (graph, dependents(graph))
        return self._dependents[1]

    def _merged(self, inputs: MapInputs) -> tuple[Merged, tuple[RepoGraph, int] | None]:
        """The merged views, and the graph the last process kept with the pairs its policies
        resolved when this one's first static map adopts it (then no policy reads every file's
        tags: the graph holds what they derived)."""
        adopted = self._keeper.adopt(inputs.base) if self._graph is None and _tree_sitter_only(inputs) else None
        if adopted is not None:
            return Merged(inputs.base.tags, {}, {}, (inputs.base.name,)), adopted
        return self._merge(inputs), None

    def _merge(self, inputs: MapInputs) -> Merged:
        if not inputs.refiners:
            # Static: only the import rule can apply (name_match_imports); computed once per base.
            key = (id(inputs.base.tags), inputs.base.version)
            if self._static_merged is None or self._static_merged[0] != key:
                merged = Merged(inputs.base.tags, {}, {}, (inputs.base.name,))
                self._static_merged = (key, apply_policies(merged, self._settings, self._policy_memo))
            return self._static_merged[1]
        merged = merge_views(inputs.base, inputs.refiners, self._merge_memo)
        return apply_policies(merged, self._settings, self._policy_memo)  # derived edges: docs/policies.md

    def _graph_for(self, inputs: MapInputs, merged: Merged, adopted: tuple[RepoGraph, int] | None) -> RepoGraph:
        # The views' versions change whenever their tags or resolved pairs do.
        key = (id(inputs.base.tags), inputs.base.version, tuple((v.name, v.version) for v in inputs.refiners))
        self._graph_made = "kept"
        if adopted is not None:
            self._graph, self._graph_key, self._graph_made = adopted[0], key, "adopted"
        elif self._graph is None or key != self._graph_key:
            # Equal to build_graph's: only the changed files' and changed names' edges are redone.
            graph = self._graphs.update(merged.tags, merged.resolved or None)
            if self._graph is not None and graph is not self._graph:
                self._retired.append(self._graph)
            self._graph = graph
            self._graph_key = key
            self._graph_made = self._graphs.last_mode
            if self._graph_made == "rebuilt" and _tree_sitter_only(inputs):
                self._keeper.built(graph, inputs.base, len(merged.resolved))
        return self._graph

    def _own_stats(self) -> dict[str, float]:
        """How this map's graph came (built from scratch, patched after an edit, or the last one
        kept), whether the tokenizer had to be loaded (a warm process counts from the cache), and how
        many files' words this map's lexical models took from the last process's."""
        return {
            "graph_rebuilt": float(self._graph_made == "rebuilt"),
            "graph_patched": float(self._graph_made == "updated"),
            "graph_adopted": float(self._graph_made == "adopted"),
            "tokenizer_loaded": float(self._counter.loaded),
            "lexicon_files_kept": float(self._lexical.take_kept_files()),
        }

    def _diagnostics(
        self, inputs: MapInputs, request: BuildRequest, tags: Mapping[str, FileTags], shown: bool
    ) -> list[Diagnostic]:
        snapshot = inputs.snapshot
        out = snapshot.file_diagnostics()
        out.extend(inputs.base.diagnostics)
        for view in inputs.refiners:
            out.extend(view.diagnostics)
        for path in request.chat:
            if path not in snapshot.files and not (snapshot.root / path).is_file():
                out.append(Diagnostic(path, "chat_file_missing", "chat file not found under root"))
        if not shown:
            out.append(Diagnostic(".", "empty_map", why_empty(tags, snapshot.languages, request.chat, request.budget)))
        if request.budget_note:
            out.append(Diagnostic(".", "budget_capped", request.budget_note))
        for language, report in inputs.servers.items():
            if report.state in _DEGRADED_STATES:
                out.append(Diagnostic(language, f"server_{report.state}", report.detail))
        out.extend(inputs.notes)
        return list(dict.fromkeys(out))  # a source may say a problem in its view and its health


def _tree_sitter_only(inputs: MapInputs) -> bool:
    """Whether the map is built from the base source alone: a static map, or a hybrid one whose
    sources know nothing yet (a one-shot call that starts no server). Only such a graph is kept
    for the next process or taken from the last (:mod:`.warm_start`)."""
    return not any(view.tags or view.resolved or view.details for view in inputs.refiners)


def _sources(inputs: MapInputs) -> dict[str, SourceSummary]:
    out = {inputs.base.name: SourceSummary(len(inputs.base.tags))}
    for view in inputs.refiners:
        out[view.name] = SourceSummary(len(view.tags), len(view.resolved), len(view.details))
    return out


def _stats(inputs: MapInputs, graph: RepoGraph, ranking: Ranking, renders: int, resolved: int) -> dict[str, float]:
    stats: dict[str, float] = {}
    for source in (inputs.snapshot.stats, inputs.base.stats):
        stats.update({k: float(v) for k, v in source.items() if k not in TIMED_PHASES})
    for view in inputs.refiners:
        stats.update({k: float(v) for k, v in view.stats.items()})
    stats.update(
        {
            "graph_files": float(len(graph.files)),
            "graph_edges": float(len(graph.edge_src)),
            "ranked_items": float(ranking.total_items),
            "pack_renders": float(renders),
            "resolved_pairs": float(resolved),
        }
    )
    return stats


#: Seconds the workspace and the base source report: timings, not counters.
TIMED_PHASES = frozenset({"list", "read", "cache_lookup", "parse", "cache_store"})


def index_timings(snapshot: Snapshot, base: SourceView) -> dict[str, float]:
    """``index.list``/``index.read``/``index.parse`` and their total ``index``."""
    phases = {**{k: v for k, v in snapshot.stats.items() if k in TIMED_PHASES}, **base.stats}
    timings = {f"index.{k}": float(phases.get(k, 0.0)) for k in ("list", "read", "parse")}
    timings["index"] = float(sum(phases.get(k, 0.0) for k in TIMED_PHASES))
    return timings


def why_empty(tags: Mapping[str, FileTags], languages: Mapping[str, str], chat: Sequence[str], budget: int) -> str:
    if not languages:
        return "no files in a supported language under the root"
    if not tags:
        return "every source file was skipped (see the other diagnostics)"
    if not any(t.symbols for t in tags.values()):
        return "no definitions were found in any source file"
    if set(tags) <= set(chat):
        return "every source file is a chat file (chat files are not repeated in the map)"
    return f"budget of {budget} tokens is too small for even one entry"


def ranked_files(
    items: Sequence[Any],
    tags: Mapping[str, FileTags],
    scores: Mapping[str, float],
    reasons: Mapping[str, tuple[str, ...]],
    languages: Mapping[str, str],
    reach: Mapping[str, Dependents] | None = None,
    visibility: Visibility | None = None,
    summaries: Mapping[tuple[str, int], str] | None = None,
    focus: ChangeFocus | None = None,
    hood: Neighbourhood | None = None,
) -> tuple[RankedFile, ...]:
    """Files in the order of their best item (``items`` is best first), ranked by its score: the
    file's PageRank alone would not be monotonic (a file's best definition, not the file, ranks it).
    ``focus``: a map of a change, whose changed files and definitions are said so."""
    order: dict[str, list[Any]] = {}
    for item in items:
        order.setdefault(item.path, []).append(item)
    out = []
    for path, chosen in order.items():
        symbols, cells = tags[path].symbols, tags[path].cells
        changed = frozenset(focus.symbols.get(path, ())) if focus is not None else frozenset()
        shown = sorted((it for it in chosen if it.symbol >= 0), key=lambda it: symbols[it.symbol].span.start_line)
        out.append(
            RankedFile(
                path=path,
                rank=chosen[0].score,
                file_rank=scores.get(path, 0.0),
                language=languages.get(path),
                symbols=tuple(
                    ranked_symbol(
                        symbols[it.symbol],
                        it.score,
                        visibility.public(path, symbols, it.symbol) if visibility is not None else None,
                        (summaries or {}).get((path, it.symbol), ""),
                        cells,
                        it.symbol in changed,
                        hood.related.get((path, it.symbol), ("", 0)) if hood is not None else ("", 0),
                    )
                    for it in shown
                ),
                why=reasons.get(path, ()),
                dependents=(reach or {}).get(path, _NO_DEPENDENTS).total,
                dependents_resolved=(reach or {}).get(path, _NO_DEPENDENTS).resolved,
                change=focus.status.get(path, "") if focus is not None else "",
            )
        )
    return tuple(out)


_NO_DEPENDENTS = Dependents(0, 0)


def _symbol_focus(hood: Neighbourhood | None, tags: Mapping[str, FileTags]) -> SymbolFocus | None:
    if hood is None:
        return None
    places = tuple((path, tags[path].symbols[i].name_line + 1) for path, i in hood.definitions)
    query = hood.query
    return SymbolFocus(query.name, query.path, query.depth, places, hood.complete)


def ranked_symbol(
    symbol: Any,
    score: float,
    public: bool | None = None,
    summary: str = "",
    cells: tuple[tuple[int, int], ...] = (),
    changed: bool = False,
    related: tuple[str, int] = ("", 0),
) -> RankedSymbol:
    """``symbol`` as the map shows it: 1-based lines; in a notebook (``cells``: ``FileTags.cells``)
    its cell and lines within that cell; ``changed``: in a map of a change, touched by it."""
    span = symbol.span
    # A span ending at column 0 ends with the previous line's newline.
    end = span.end_line if span.end_col > 0 or span.end_line == span.start_line else span.end_line - 1
    cell, line, end = cell_lines(cells, symbol.name_line, end)
    return RankedSymbol(
        name=symbol.name,
        kind=symbol.kind,
        line=line + 1,
        signature=symbol.signature.strip(),
        provenance=symbol.provenance,
        rank=score,
        detail=symbol.detail,
        col=symbol.name_col,
        end_line=end + 1,
        public=public,
        summary=summary,
        cell=cell,
        changed=changed,
        relation=related[0],
        distance=related[1],
    )


def with_details(result: MapResult, details: Mapping[HoverKey, str]) -> MapResult:
    """``result`` with hover details filled in for shown symbols that had none."""
    if not details:
        return result
    files = tuple(
        replace(
            f,
            symbols=tuple(
                s if s.detail else replace(s, detail=details.get((f.path, s.line - 1, s.col), "")) for s in f.symbols
            ),
        )
        for f in result.files
    )
    return replace(result, files=files)


def _undescribed(packed: Packed, tags: Mapping[str, FileTags]) -> list[HoverKey]:
    """The (path, line, column) of shown symbols no source has described yet."""
    return [
        (item.path, sym.name_line, sym.name_col)
        for item in packed.items
        if item.symbol >= 0 and not (sym := tags[item.path].symbols[item.symbol]).detail
    ]


def _content_keys(base: SourceView, tags: Mapping[str, FileTags]) -> dict[str, str]:
    """path -> its tags' key, for the files whose merged tags are the base source's own (a
    server's symbols merged in make other words: such a file is not named, so never adopted)."""
    keys, own = base.keys, base.tags
    return {p: keys[p] for p, t in tags.items() if p in keys and own.get(p) is t}
