"""What one fresh document says, in hybridmap's terms: symbols (:class:`FileTags`), details, and
the uses of global symbols by the identifier tree-sitter names them with.

Built from the document and the file's current text (the bytes tree-sitter parsed: columns are
converted to UTF-8 bytes with them, and a name is kept only where the text at its range *is*
that name, so an index that does not describe this text describes nothing).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...model import FileTags, HoverKey, Provenance, Span, Symbol
from .index import (
    POSITION_UTF8,
    POSITION_UTF32,
    ROLE_DEFINITION,
    Document,
    Occurrence,
    SymbolInfo,
)
from .symbols import (
    MACRO,
    METHOD,
    NAMESPACE,
    TERM,
    TYPE,
    ParsedSymbol,
    is_local,
    parse_symbol,
    reference_name,
)

#: ``SymbolInformation.Kind`` values -> our kind names (``model.DEFINITION_KINDS``); others are
#: taken from the descriptor's suffix and the signature's first word.
_KINDS = {
    7: "class",
    8: "constant",
    9: "constructor",
    11: "enum",
    12: "constant",
    15: "field",
    17: "function",
    21: "interface",
    25: "macro",
    26: "method",
    29: "module",
    30: "namespace",
    41: "property",
    49: "struct",
    53: "trait",
    54: "type",
    55: "type",
    61: "variable",
    66: "method",
    79: "field",
    80: "method",
    81: "property",
    82: "variable",
}
_TYPE_WORDS = {"interface": "interface", "type": "type", "enum": "enum", "struct": "struct", "trait": "trait"}


@dataclass(frozen=True, slots=True)
class FileFacts:
    tags: FileTags
    details: dict[HoverKey, str]
    uses: tuple[tuple[str, str], ...]
    """(identifier, global symbol) of every use (not a definition) in the file, in order."""


class SymbolNames:
    """Parsed symbols of one index, each parsed once (occurrences repeat them)."""

    def __init__(self) -> None:
        self._parsed: dict[str, ParsedSymbol | None] = {}

    def get(self, symbol: str) -> ParsedSymbol | None:
        try:
            return self._parsed[symbol]
        except KeyError:
            parsed = self._parsed[symbol] = parse_symbol(symbol)
            return parsed


def file_facts(
    path: str, documents: tuple[Document, ...], data: bytes, names: SymbolNames, detail_limit: int
) -> FileFacts:
    lines = data.split(b"\n")
    symbols: list[Symbol] = []
    details: dict[HoverKey, str] = {}
    uses: list[tuple[str, str]] = []
    index_of: dict[str, int] = {}
    parents: list[str] = []
    for document in documents:
        infos = {info.symbol: info for info in document.symbols}
        for occurrence in document.occurrences:
            symbol = occurrence.symbol
            if not symbol or is_local(symbol):
                continue
            parsed = names.get(symbol)
            if parsed is None:
                continue
            if not occurrence.roles & ROLE_DEFINITION:
                uses.append((reference_name(parsed), symbol))
                continue
            made = _symbol(occurrence, parsed, infos.get(symbol), lines, document.position_encoding)
            if made is None or symbol in index_of:
                continue
            detail = _detail(infos.get(symbol), data, detail_limit)
            if detail:
                made = dataclasses.replace(made, detail=detail)
                details[(path, made.name_line, made.name_col)] = detail
            index_of[symbol] = len(symbols)
            symbols.append(made)
            parents.append(parsed.parent)
    # Parents by the descriptor chain (``Runner#run().``'s parent is ``Runner#``), not by spans.
    linked = tuple(
        dataclasses.replace(sym, parent=index_of[parent]) if parent in index_of else sym
        for sym, parent in zip(symbols, parents, strict=True)
    )
    tags = FileTags(linked, line_count=len(lines), complete=False)
    return FileFacts(tags, details, tuple(uses))


def _symbol(
    occurrence: Occurrence, parsed: ParsedSymbol, info: SymbolInfo | None, lines: list[bytes], encoding: int
) -> Symbol | None:
    """Our symbol for a definition occurrence; None for what tree-sitter never lists (parameters,
    modules, meta) or when the text at the range is not the name (a stale or foreign index)."""
    name, suffix = parsed.descriptors[-1]
    if suffix not in (TYPE, TERM, METHOD, MACRO) or occurrence.start_line != occurrence.end_line:
        return None
    if name == "<constructor>":
        name = "constructor"
    line_no = occurrence.start_line
    if line_no >= len(lines):
        return None
    line = lines[line_no]
    start = utf8_col(line, occurrence.start_col, encoding)
    end = utf8_col(line, occurrence.end_col, encoding)
    if start is None or end is None or line[start:end].decode("utf-8", "replace") != name:
        return None
    span = Span(line_no, start, line_no, end)
    enclosing = occurrence.enclosing
    if enclosing is not None and enclosing[2] < len(lines):
        first = utf8_col(lines[enclosing[0]], enclosing[1], encoding)
        last = utf8_col(lines[enclosing[2]], enclosing[3], encoding)
        if first is not None and last is not None:
            span = Span(enclosing[0], first, enclosing[2], last)
    signature = line.decode("utf-8", "replace").rstrip()
    kind = _kind(parsed, info)
    return Symbol(name, kind, span, line_no, start, signature, provenance=Provenance.SCIP)


def _kind(parsed: ParsedSymbol, info: SymbolInfo | None) -> str:
    if info is not None and info.kind in _KINDS:
        return _KINDS[info.kind]
    suffix = parsed.suffix
    signature = info.signature if info is not None else ""
    first = signature.split(None, 1)[0] if signature.strip() else ""
    in_type = len(parsed.descriptors) > 1 and parsed.descriptors[-2][1] == TYPE
    if suffix == TYPE:
        return _TYPE_WORDS.get(first, "class")
    if suffix == METHOD:
        if parsed.name == "<constructor>":
            return "constructor"
        return "method" if in_type else "function"
    if suffix == MACRO:
        return "macro"
    if suffix == NAMESPACE:
        return "module"
    if in_type:
        return "property" if first == "(property)" else "field"
    return "constant" if first == "const" else "variable"


def _detail(info: SymbolInfo | None, data: bytes, limit: int) -> str:
    """The indexer's one-line declaration, unless it shows what is written outside this file
    (an indexer reads site-packages and ``node_modules``: the same rule as server hovers)."""
    if info is None or not info.signature:
        return ""
    text = " ".join(info.signature.split())[:limit]
    if not text:
        return ""
    # Imported here: the LSP symbol module pulls lsprotocol, which a map without servers skips.
    from ..lsp.symbols import shows_outside_content

    return "" if shows_outside_content(text, data) else text


def utf8_col(line: bytes, col: int, encoding: int) -> int | None:
    """Column ``col`` of ``line`` (in the index's position encoding; unspecified means UTF-16,
    what scip-python and scip-typescript write: JavaScript string offsets) as a UTF-8 byte
    offset; None when it lies past the line or inside a character."""
    if encoding == POSITION_UTF8:
        return col if 0 <= col <= len(line) else None
    if line.isascii():  # every encoding counts an ASCII line the same way
        return col if 0 <= col <= len(line) else None
    text = line.decode("utf-8", "replace")
    if encoding == POSITION_UTF32:
        return len(text[:col].encode("utf-8")) if col <= len(text) else None
    units = 0
    for index, char in enumerate(text):
        if units == col:
            return len(text[:index].encode("utf-8"))
        units += 2 if ord(char) > 0xFFFF else 1
        if units > col:
            return None
    return len(line) if units == col else None
