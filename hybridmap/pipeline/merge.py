"""Merge the sources' views into one view of the repository. Pure.

The base view (tree-sitter) answers for every file; each refining source (language servers,
a SCIP index: :mod:`hybridmap.sources.base`) for the files it knows. Refining views come in
the configured precedence (``source_precedence``), best first. Per file, each refining view
is merged in turn, the least trusted first, so the most trusted has the last word:

- a refining symbol with a counterpart (same name, same name line, or the same name inside
  the other's span) *confirms* it: the symbol keeps its source signature and static kind,
  takes the refining source's ``detail`` and adds that source's name to its provenance
  (``tree-sitter+lsp``);
- a refining symbol with no counterpart is *added* (provenance: the source's name) when the
  source's list is authoritative (``FileTags.complete``), nested in the innermost symbol
  whose span contains it;
- a symbol the refining source did not list stays: servers omit things (ty omits some
  module-level names), and a map must not lose them.

References always come from the base. Resolved uses: for each (file, identifier) pair, the
first view in precedence that resolved it decides its targets, each edge carrying that view's
name as provenance (:data:`~hybridmap.model.ResolvedEdges`); such pairs replace their name
matches (``graph.build_graph``). Details (hover answers) fill ``detail`` where no symbol list
gave one, first view first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..infra.patched import Patched, changed_keys
from ..model import DEFINITION_KINDS, FileTags, HoverKey, Provenance, ResolvedEdges, Span, Symbol, confirmed_by
from ..sources.base import SourceView


def merge_file(
    static: FileTags,
    server: FileTags | None,
    path: str = "",
    hovers: Mapping[HoverKey, str] | None = None,
    source: str = Provenance.LSP,
) -> FileTags:
    """One file's tags with the server's symbols merged in (see module docstring)."""
    if server is None and not hovers:
        return static
    symbols = list(static.symbols)
    name_words = static.name_words
    if server is not None:
        by_name: dict[str, list[int]] = {}
        for index, sym in enumerate(symbols):
            by_name.setdefault(sym.name, []).append(index)
        confirmed: set[int] = set()
        extras: list[Symbol] = []
        for theirs in server.symbols:
            found = _counterpart(symbols, by_name.get(theirs.name, ()), theirs, confirmed)
            if found is not None:
                confirmed.add(found)
                ours = symbols[found]
                symbols[found] = dataclasses.replace(
                    ours, provenance=confirmed_by(ours.provenance, source), detail=theirs.detail or ours.detail
                )
            elif server.complete and theirs.kind in DEFINITION_KINDS:
                extras.append(theirs)
        for extra in extras:
            parent = _innermost(symbols, extra.span, len(symbols))
            symbols.append(dataclasses.replace(extra, parent=parent, provenance=source))
        if extras:  # names the parse did not count: counted from the symbols when needed
            name_words = ""
    if hovers:
        for index, sym in enumerate(symbols):
            if not sym.detail:
                text = hovers.get((path, sym.name_line, sym.name_col))
                if text:
                    symbols[index] = dataclasses.replace(sym, detail=text)
    return dataclasses.replace(static, symbols=tuple(symbols), name_words=name_words)


def _counterpart(
    symbols: list[Symbol], candidates: tuple[int, ...] | list[int], theirs: Symbol, taken: set[int]
) -> int | None:
    best: int | None = None
    best_distance = 0
    for index in candidates:
        if index in taken:
            continue
        ours = symbols[index]
        if ours.name_line == theirs.name_line:
            return index
        # Same name inside our definition's span: servers disagree on where a range starts
        # (decorators, doc comments, export keywords), never on which definition it is.
        if (
            ours.span.start_line <= theirs.name_line <= ours.span.end_line
            or theirs.span.start_line <= ours.name_line <= theirs.span.end_line
        ):
            distance = abs(ours.name_line - theirs.name_line)
            if best is None or distance < best_distance:
                best, best_distance = index, distance
    return best


def _innermost(symbols: list[Symbol], span: Span, limit: int) -> int:
    """Index of the smallest symbol (among the first ``limit``) whose span strictly contains ``span``."""
    best, best_size = -1, None
    for index in range(limit):
        outer = symbols[index].span
        contains = (
            (outer.start_line, outer.start_col) <= (span.start_line, span.start_col)
            and (outer.end_line, outer.end_col) >= (span.end_line, span.end_col)
            and outer != span
        )
        if contains:
            size = (outer.end_line - outer.start_line, outer.end_col - outer.start_col)
            if best_size is None or size < best_size:
                best, best_size = index, size
    return best


@dataclass(frozen=True, slots=True)
class Merged:
    """The repository as all sources see it together: what the graph and the ranking take."""

    tags: Mapping[str, FileTags]
    resolved: ResolvedEdges
    details: Mapping[HoverKey, str]
    sources: tuple[str, ...]
    """The names of the views merged, base first, then by precedence."""


MemoEntry = tuple[FileTags, tuple[FileTags | None, ...], FileTags]
"""(base tags, each refining view's tags in merge order, merged tags)."""


@dataclass(frozen=True)
class _LastMerge:
    """What the last :func:`merge_views` call read and made (its mappings are read-only)."""

    names: tuple[str, ...]
    base: Mapping[str, FileTags]
    refiners: tuple[Mapping[str, FileTags], ...]
    hovered: frozenset[str]
    tags: Mapping[str, FileTags]


class MergeMemo(dict[str, MemoEntry]):
    """path -> :data:`MemoEntry` for each file the last merge merged, and what that merge read
    and made: the next one merges only the files whose inputs moved since (the views' patches
    say which, else a scan of identities: :func:`~hybridmap.infra.patched.changed_keys`) into a
    copy of the last merged mapping, handed on as a :class:`~hybridmap.infra.patched.Patched`
    (a pass over every file per merge was a hybrid edit's cost at 100,000 files)."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        super().__init__()
        self.last: _LastMerge | None = None


def merge_views(
    base: SourceView, refiners: Sequence[SourceView], memo: MergeMemo | dict[str, MemoEntry] | None = None
) -> Merged:
    """Merge ``refiners`` (best first) into ``base`` (see the module docstring).

    ``memo`` skips files whose inputs are the same objects as last time; it is left holding
    exactly the files merged by this call. Files with details are re-merged each call
    (details are few and bounded)."""
    details: dict[HoverKey, str] = {}
    for view in refiners:
        for key, text in view.details.items():
            details.setdefault(key, text)
    names = (base.name, *(v.name for v in refiners))
    hovered = frozenset(key[0] for key in details)
    if not details and not any(view.tags for view in refiners):
        # Nothing describes any file (servers not started yet): the base's own mapping, as is.
        if memo is not None:
            memo.clear()
        tags: Mapping[str, FileTags] = base.tags
    else:
        kept = memo if isinstance(memo, MergeMemo) else None
        if kept is not None and kept.last is not None and kept.last.names == names:
            tags = _merged_since(kept.last, base, refiners, hovered, details, kept)
        else:
            tags = _merged_all(base, refiners, hovered, details, memo)
    if isinstance(memo, MergeMemo):
        memo.last = _LastMerge(names, base.tags, tuple(v.tags for v in refiners), hovered, tags)
    return Merged(tags, resolved_edges(refiners), details, names)


def _merged_all(
    base: SourceView,
    refiners: Sequence[SourceView],
    hovered: frozenset[str],
    details: Mapping[HoverKey, str],
    memo: MergeMemo | dict[str, MemoEntry] | None,
) -> dict[str, FileTags]:
    """Every file merged (a memo's entries reused where their inputs are the same objects)."""
    ordered = tuple(reversed(refiners))  # least trusted first: the best has the last word
    tags: dict[str, FileTags] = {}
    for path, static in base.tags.items():
        tags[path] = _merged_file(path, static, ordered, hovered, details, memo)
    if memo is not None:
        # Keep only what this call merged: a deleted file (or one no source describes any
        # more) would otherwise stay in a long-lived object's memo for good.
        for path in [p for p, entry in memo.items() if tags.get(p) is not entry[2]]:
            del memo[path]
    return tags


def _merged_since(
    last: _LastMerge,
    base: SourceView,
    refiners: Sequence[SourceView],
    hovered: frozenset[str],
    details: Mapping[HoverKey, str],
    memo: MergeMemo,
) -> Mapping[str, FileTags]:
    """The last merge with only the files whose inputs may have moved merged again: those whose
    base or refining tags are not the same objects, and those with details now or then."""
    paths = set(changed_keys(last.base, base.tags)) | hovered | last.hovered
    for was, view in zip(last.refiners, refiners, strict=True):
        paths.update(changed_keys(was, view.tags))
    if not paths:
        return last.tags
    ordered = tuple(reversed(refiners))
    changes: dict[str, FileTags | None] = {}
    for path in sorted(paths):
        static = base.tags.get(path)
        if static is None:  # gone (or described by a refining view alone: never merged)
            changes[path] = None
            memo.pop(path, None)
            continue
        changes[path] = merged = _merged_file(path, static, ordered, hovered, details, memo)
        if merged is static:
            memo.pop(path, None)
    return Patched.patch(last.tags, changes)


def _merged_file(
    path: str,
    static: FileTags,
    ordered: tuple[SourceView, ...],
    hovered: frozenset[str],
    details: Mapping[HoverKey, str],
    memo: MergeMemo | dict[str, MemoEntry] | None,
) -> FileTags:
    """One file's tags, the views merged in ``ordered`` (least trusted first)."""
    theirs = tuple(view.tags.get(path) for view in ordered)
    if path not in hovered and all(t is None for t in theirs):
        return static
    if memo is not None and path not in hovered:
        previous = memo.get(path)
        if previous is not None and previous[0] is static and _same(previous[1], theirs):
            return previous[2]
    merged = static
    for view, file_tags in zip(ordered, theirs, strict=True):
        if file_tags is not None:
            merged = merge_file(merged, file_tags, path, None, view.name)
    if path in hovered:
        merged = merge_file(merged, None, path, details)
    if memo is not None:
        memo[path] = (static, theirs, merged)
    return merged


def resolved_edges(refiners: Sequence[SourceView]) -> ResolvedEdges:
    """(file, identifier) -> {target: provenance}: the first view (best first) that resolved a
    pair decides all its targets."""
    out: ResolvedEdges = {}
    for view in refiners:
        for pair, targets in view.resolved.items():
            if pair not in out:
                out[pair] = dict.fromkeys(targets, view.name)
    return out


def _same(a: tuple[FileTags | None, ...], b: tuple[FileTags | None, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def merge_tags(
    static: Mapping[str, FileTags],
    server: Mapping[str, FileTags],
    hovers: Mapping[HoverKey, str] | None = None,
    memo: MergeMemo | dict[str, MemoEntry] | None = None,
) -> dict[str, FileTags]:
    """Every file's tags with one language server's view merged in (:func:`merge_views` for
    two sources: tree-sitter and ``lsp``)."""
    merged = merge_views(
        SourceView(Provenance.TREE_SITTER, static),
        (SourceView(Provenance.LSP, server, details=hovers or {}),),
        memo,
    )
    return dict(merged.tags)
