"""The index's matches and the language servers' ``workspace/symbol`` hits, merged. Pure.

A server hit is one definition a server found for the query (:class:`ServerSymbol`, already
checked to lie in a file inside the root by :mod:`.search_servers`). Hits and matches are one
entry per definition, keyed by (path, line of the name, name): a server hit in a file the index
holds is matched to the indexed definition of that name whose lines overlap the server's range
(ty's range is the whole definition, gopls' the name), so the definition both found is listed
once, with both sources (``["index", "lsp:ty"]``). A hit the index does not hold (a file beyond
``max_files``, a definition our queries do not tag) is listed with the server's line.

Every entry is ranked by the index's own rules (:func:`~.search.rank_key`): a server hit that
the index's ways of matching would accept (``exact``, ``prefix``, ``typo``...) is ranked as one;
one only the server's own fuzzy matching accepts is ``server``, after all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..languages.lexical import name_parts
from .search import SymbolIndex, SymbolMatch, SymbolSearch, how_matched, name_norm, rank_key


@dataclass(frozen=True, slots=True)
class ServerSymbol:
    """One definition a server's ``workspace/symbol`` answer named, in a file inside the root."""

    source: str
    """``lsp:<server name>``."""
    name: str
    """The plain name (a qualified ``pkg.Type.Method`` is cut to ``Method``)."""
    kind: str
    """Our kind name (``function``, ``class``...)."""
    path: str
    line: int
    """1-based first line of the server's range."""
    end_line: int
    container: str | None = None


Key = tuple[str, int, str]
"""(path, 1-based line, name): what makes two entries the same definition."""
RankKey = tuple[int, int, int, bool, str, int]


def under(path: str, prefix: str | None) -> bool:
    """``path`` is ``prefix`` or below it (no prefix: everything)."""
    return prefix is None or path == prefix or path.startswith(prefix.rstrip("/") + "/")


def indexed_definition(index: SymbolIndex, hit: ServerSymbol) -> SymbolMatch | None:
    """The indexed definition the server's hit names: same file and name, lines overlapping the
    server's range, the nearest first line winning; None when the index has none there."""
    last = max(hit.end_line, hit.line)
    rows = [r for r in index.definitions(hit.path, hit.name) if r.line <= last and hit.line <= r.end_line]
    return min(rows, key=lambda r: (abs(r.line - hit.line), r.line), default=None)


def merge_hits(
    found: SymbolSearch,
    hits: Sequence[ServerSymbol],
    index: SymbolIndex,
    *,
    limit: int,
    kind: str | None = None,
    path: str | None = None,
    read_line: Callable[[str, int], str] = lambda _path, _line: "",
    defines: Callable[[str], bool] = lambda _line: True,
) -> SymbolSearch:
    """``found`` (the index's best ``limit``) and ``hits`` as one ranked answer of ``limit``
    entries. ``read_line(path, line)`` gives the source line shown as the signature of a hit the
    index does not hold, read only for the entries that rank within ``limit``; such a hit is
    dropped unless ``defines(that line)`` (an import binding, which some servers list as a
    variable, defines nothing)."""
    words = name_parts(found.query)
    q = "".join(words)
    entries: dict[Key, tuple[RankKey, SymbolMatch]] = {}
    for match in found.matches:
        key = rank_key(q, words, match.match, match.name, name_norm(match.name), match.path, match.line)
        entries[(match.path, match.line, match.name)] = (key, match)
    unread: set[Key] = set()
    """Entries only a server found in a file the index does not describe there: line not read yet."""
    extra = 0
    for hit in hits:
        if not under(hit.path, path):
            continue
        row = indexed_definition(index, hit)
        in_index = row is not None
        if row is None:
            row = SymbolMatch(hit.name, hit.kind, hit.path, hit.line, hit.end_line, "", hit.container, "")
        if kind and row.kind != kind:
            continue
        ident = (row.path, row.line, row.name)
        known = entries.get(ident)
        if known is not None:
            if hit.source not in known[1].sources:
                entries[ident] = (known[0], replace(known[1], sources=(*known[1].sources, hit.source)))
            continue
        how = how_matched(q, words, row.name) or "server"
        # Counted once more unless the index's own passes would have counted it (a match of
        # the index beyond its first ``limit`` that a server found too is counted twice).
        extra += how == "server" or not in_index
        if not in_index:
            unread.add(ident)
        key = rank_key(q, words, how, row.name, name_norm(row.name), row.path, row.line)
        entries[ident] = (key, replace(row, match=how, sources=(hit.source,)))
    shown: list[SymbolMatch] = []
    for ident, (_, match) in sorted(entries.items(), key=lambda item: item[1][0]):
        if len(shown) == limit:
            break
        if ident in unread:
            text = read_line(match.path, match.line)
            if not defines(text):
                extra -= 1
                continue
            match = replace(match, signature=text)
        shown.append(match)
    return replace(found, matches=tuple(shown), total=found.total + extra)
