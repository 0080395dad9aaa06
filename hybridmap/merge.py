"""Merge the symbol sources into one view of the repository. Pure.

The tree-sitter source answers for every file; a language server answers for
the files it has been asked about so far. Per file:

- a server symbol with a tree-sitter counterpart (same name, same name line,
  or the same name inside the static definition's span) *confirms* it: the
  symbol keeps its source signature and static kind, takes the server's
  ``detail`` and becomes ``tree-sitter+lsp``;
- a server symbol with no counterpart is *added* (``lsp``) when the server's
  list is authoritative (a hierarchical answer, ``FileTags.complete``), nested
  in the innermost symbol whose span contains it;
- a static symbol the server did not list stays (``tree-sitter``): servers omit
  things (ty omits some module-level names), and a map must not lose them.

References always come from tree-sitter (servers do not list them).
Edges: a (file, identifier) pair a server resolved replaces its name matches
(``graph.build_graph``); hover answers fill ``detail`` where documentSymbol
left it empty.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from .model import DEFINITION_KINDS, FileTags, Provenance, Span, Symbol

#: (path, 0-based name line, UTF-8 name column) → the declaration a hover showed.
HoverKey = tuple[str, int, int]


def merge_file(
    static: FileTags, server: FileTags | None, path: str = "", hovers: Mapping[HoverKey, str] | None = None
) -> FileTags:
    """One file's tags with the server's symbols merged in (see module docstring)."""
    if server is None and not hovers:
        return static
    symbols = list(static.symbols)
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
                    ours, provenance=Provenance.TREE_SITTER_AND_LSP, detail=theirs.detail or ours.detail
                )
            elif server.complete and theirs.kind in DEFINITION_KINDS:
                extras.append(theirs)
        for extra in extras:
            symbols.append(dataclasses.replace(extra, parent=_innermost(symbols, extra.span, len(symbols))))
    if hovers:
        for index, sym in enumerate(symbols):
            if not sym.detail:
                text = hovers.get((path, sym.name_line, sym.name_col))
                if text:
                    symbols[index] = dataclasses.replace(sym, detail=text)
    return dataclasses.replace(static, symbols=tuple(symbols))


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


def merge_tags(
    static: Mapping[str, FileTags],
    server: Mapping[str, FileTags],
    hovers: Mapping[HoverKey, str] | None = None,
    memo: dict[str, tuple[FileTags, FileTags | None, FileTags]] | None = None,
) -> dict[str, FileTags]:
    """Every file's merged tags. ``memo`` (path → inputs and output) skips unchanged files;
    it is left holding exactly the files merged by this call.

    With hovers, files that have any are re-merged each call (hovers are few and bounded).
    """
    hovered = {key[0] for key in hovers} if hovers else set()
    out: dict[str, FileTags] = {}
    for path, tags in static.items():
        theirs = server.get(path)
        if theirs is None and path not in hovered:
            out[path] = tags
            continue
        if memo is not None and path not in hovered:
            previous = memo.get(path)
            if previous is not None and previous[0] is tags and previous[1] is theirs:
                out[path] = previous[2]
                continue
        merged = merge_file(tags, theirs, path, hovers if path in hovered else None)
        if memo is not None:
            memo[path] = (tags, theirs, merged)
        out[path] = merged
    if memo is not None:
        # Keep only what this call merged: a deleted file (or one the server no longer
        # describes) would otherwise stay in a long-lived object's memo for good.
        for path in [p for p, entry in memo.items() if out.get(p) is not entry[2]]:
            del memo[path]
    return out
