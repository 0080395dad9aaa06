"""Turn a server's ``documentSymbol`` and ``hover`` answers into our records. Pure.

Servers answer in two shapes (LSP-SERVERS.md): hierarchical ``DocumentSymbol``
trees (ty, basedpyright, tsserver, clangd, gopls) and flat ``SymbolInformation``
lists (pylsp, which also lists imported names as if they were defined there).
Both become :class:`~hybridmap.model.Symbol` records with ``provenance = lsp``,
0-based lines and UTF-8 byte columns like the tree-sitter source, wrapped in a
:class:`~hybridmap.model.FileTags` whose ``complete`` flag says whether the list
may *add* symbols in a merge (hierarchical) or only confirm them (flat).

What is dropped on purpose: anything nested in something other than a class,
interface, struct, enum or module (parameters and locals, which basedpyright
lists; object-literal properties and arrow-function locals, which tsgo lists
under variables), symbols starting on an import line (tsgo and pylsp list
imported names as if defined there), C/C++ type names that a declaration only
mentions (clangd lists ``struct ctx`` of ``struct ctx *ctx_get(void);`` as a
struct: it would make every user of ``ctx`` point at that header), modules only declared
here and defined in another file (rust-analyzer lists each ``mod config;`` of a crate root as a
module ``config``: every variable named ``config`` would point at ``lib.rs``), and kinds
that are not definitions (JSON keys, strings, type parameters...). Server
symbols add definers to the graph, so every wrong one would become wrong
name-matched edges.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from lsprotocol import types as T

from ...model import FileTags, Provenance, Span, Symbol

#: LSP SymbolKind → our kind names (``model.DEFINITION_KINDS``); absent kinds are dropped.
KIND_NAMES: dict[T.SymbolKind, str] = {
    T.SymbolKind.File: "module",
    T.SymbolKind.Module: "module",
    T.SymbolKind.Namespace: "namespace",
    T.SymbolKind.Package: "module",
    T.SymbolKind.Class: "class",
    T.SymbolKind.Method: "method",
    T.SymbolKind.Property: "property",
    T.SymbolKind.Field: "field",
    T.SymbolKind.Constructor: "constructor",
    T.SymbolKind.Enum: "enum",
    T.SymbolKind.Interface: "interface",
    T.SymbolKind.Function: "function",
    T.SymbolKind.Variable: "variable",
    T.SymbolKind.Constant: "constant",
    T.SymbolKind.EnumMember: "constant",
    T.SymbolKind.Struct: "struct",
    T.SymbolKind.Event: "field",
    T.SymbolKind.Operator: "function",
}
#: Kinds whose children are members worth mapping. Anything else holds locals (functions),
#: or object-literal properties and arrow-function bodies (tsgo lists those under variables).
_CONTAINERS = frozenset(
    {
        T.SymbolKind.File,
        T.SymbolKind.Module,
        T.SymbolKind.Namespace,
        T.SymbolKind.Package,
        T.SymbolKind.Class,
        T.SymbolKind.Interface,
        T.SymbolKind.Struct,
        T.SymbolKind.Enum,
    }
)
#: A line that imports names rather than defining them (tsgo lists import bindings as variables,
#: pylsp lists imported names): a symbol starting there is not a definition of this file.
_IMPORT_LINE = re.compile(
    rb"^\s*(?:import\b|from\s+\S+\s+import\b|export\s+(?:\*|\{[^}]*\}?)\s*from\b"
    rb"|#\s*include\b|use\s)|\brequire\s*\("
)


def is_import_line(line: bytes) -> bool:
    """Does ``line`` import names rather than define them (``import {a as b}``, ``from x import y``)?"""
    return bool(_IMPORT_LINE.search(line))


#: ``(Runner).Run`` (gopls), ``Store::load`` (clangd), ``Runner.run`` (some servers): keep the last part.
_QUALIFIED = re.compile(r"(?:^\(\*?[\w.]+\)\s*\.?\s*|^.*(?:::|\.))(?=[\w$]+$)")
#: A type symbol whose whole range is ``struct NAME`` (or class, union, enum): an elaborated type
#: or forward declaration, not the type's definition (which has a body).
_TYPE_MENTION = re.compile(rb"\s*(?:struct|class|union|enum(?:\s+class)?)\s+[\w:]+\s*;?\s*")
_TYPE_KINDS = frozenset({T.SymbolKind.Class, T.SymbolKind.Struct, T.SymbolKind.Enum, T.SymbolKind.Interface})
#: A module symbol whose range ends ``mod NAME;`` with no body (``pub(crate) mod x;``, or after
#: attributes and doc comments): the module's body is another file, which defines what it holds.
_MODULE_DECLARATION = re.compile(rb"\bmod\s+[\w$]+\s*;\s*$")
#: What a definition's name looks like; tsserver also lists ``describe('x') callback`` and such.
_IDENTIFIER = re.compile(r"[\w$]+")


def plain_name(name: str) -> str:
    """The identifier a server's (possibly qualified) symbol name ends with."""
    name = name.strip()
    match = _QUALIFIED.match(name)
    return name[match.end() :] if match else name


def utf8_col(line: bytes, character: int, encoding: str) -> int:
    """A server column (UTF-16 code units, or UTF-8 bytes) as a UTF-8 byte column in ``line``."""
    if encoding == "utf-8":
        return min(character, len(line))
    text = line.decode("utf-8", "replace")
    units = 0
    for index, char in enumerate(text):
        if units >= character:
            return len(text[:index].encode("utf-8"))
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def utf16_col(line: bytes, col: int) -> int:
    """A UTF-8 byte column in ``line`` as UTF-16 code units (what most servers expect)."""
    return len(line[:col].decode("utf-8", "replace").encode("utf-16-le")) // 2


def _line(lines: Sequence[bytes], index: int) -> bytes:
    return lines[index] if 0 <= index < len(lines) else b""


def _signature(lines: Sequence[bytes], start_line: int, name_line: int, max_lines: int) -> str:
    end = min(max(start_line, name_line), start_line + max_lines - 1, len(lines) - 1)
    return b"\n".join(lines[start_line : end + 1]).decode("utf-8", "replace").rstrip()


def _one_line(text: str | None, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def symbols_from_answer(
    result: Any, lines: Sequence[bytes], encoding: str, *, max_signature_lines: int, detail_chars: int
) -> FileTags:
    """A ``textDocument/documentSymbol`` answer as symbols of one file (see module docstring)."""
    items = result if isinstance(result, list) else []
    out: list[Symbol] = []
    if items and all(isinstance(item, T.DocumentSymbol) for item in items):
        _walk_hierarchy(items, -1, lines, encoding, out, max_signature_lines, detail_chars)
        source = b"\n".join(lines)
        out = [replace(s, detail="") if s.detail and shows_outside_content(s.detail, source) else s for s in out]
        return FileTags(tuple(out), line_count=len(lines), complete=True)
    for item in items:
        if not isinstance(item, T.SymbolInformation):
            continue
        kind = KIND_NAMES.get(item.kind)
        name = plain_name(item.name)
        if kind is None or item.location is None or not _IDENTIFIER.fullmatch(name):
            continue
        start = item.location.range.start
        end = item.location.range.end
        # Flat answers have no selection range: find the name on the first lines of the range.
        name_line, name_col = start.line, utf8_col(_line(lines, start.line), start.character, encoding)
        for offset in range(max_signature_lines):
            found = _line(lines, start.line + offset).find(name.encode("utf-8"))
            if found >= 0:
                name_line, name_col = start.line + offset, found
                break
        out.append(
            Symbol(
                name=name,
                kind=kind,
                span=Span(
                    start.line,
                    utf8_col(_line(lines, start.line), start.character, encoding),
                    end.line,
                    utf8_col(_line(lines, end.line), end.character, encoding),
                ),
                name_line=name_line,
                name_col=name_col,
                signature=_signature(lines, start.line, name_line, max_signature_lines),
                provenance=Provenance.LSP,
            )
        )
    return FileTags(tuple(out), line_count=len(lines), complete=False)


def _walk_hierarchy(
    items: Sequence[T.DocumentSymbol],
    parent: int,
    lines: Sequence[bytes],
    encoding: str,
    out: list[Symbol],
    max_signature_lines: int,
    detail_chars: int,
) -> None:
    for item in items:
        kind = KIND_NAMES.get(item.kind)
        name = plain_name(item.name)
        index = parent
        if (
            kind is not None
            and _IDENTIFIER.fullmatch(name)
            and not _IMPORT_LINE.search(_line(lines, item.range.start.line))
            and not _mentions_type(item, lines, encoding)
            and not _declares_module(item, lines, encoding)
        ):
            rng, sel = item.range, item.selection_range
            out.append(
                Symbol(
                    name=name,
                    kind=kind,
                    span=Span(
                        rng.start.line,
                        utf8_col(_line(lines, rng.start.line), rng.start.character, encoding),
                        rng.end.line,
                        utf8_col(_line(lines, rng.end.line), rng.end.character, encoding),
                    ),
                    name_line=sel.start.line,
                    name_col=utf8_col(_line(lines, sel.start.line), sel.start.character, encoding),
                    signature=_signature(lines, rng.start.line, sel.start.line, max_signature_lines),
                    parent=parent,
                    provenance=Provenance.LSP,
                    detail=_one_line(item.detail, detail_chars),
                )
            )
            index = len(out) - 1
        if item.children and item.kind in _CONTAINERS:
            _walk_hierarchy(item.children, index, lines, encoding, out, max_signature_lines, detail_chars)


def _range_text(item: T.DocumentSymbol, lines: Sequence[bytes], encoding: str) -> bytes:
    """The source ``item``'s range covers, its lines joined by newlines."""
    start, end = item.range.start, item.range.end
    rows = [_line(lines, i) for i in range(start.line, end.line + 1)]
    rows[-1] = rows[-1][: utf8_col(rows[-1], end.character, encoding)]  # the end first: same line
    rows[0] = rows[0][utf8_col(rows[0], start.character, encoding) :]
    return b"\n".join(rows)


def _mentions_type(item: T.DocumentSymbol, lines: Sequence[bytes], encoding: str) -> bool:
    """Whether ``item`` is a type only named on its line (see ``_TYPE_MENTION``)."""
    start, end = item.range.start, item.range.end
    if item.kind not in _TYPE_KINDS or start.line != end.line or item.children:
        return False
    return bool(_TYPE_MENTION.fullmatch(_range_text(item, lines, encoding)))


def _declares_module(item: T.DocumentSymbol, lines: Sequence[bytes], encoding: str) -> bool:
    """Whether ``item`` is a module declared here and defined elsewhere (``_MODULE_DECLARATION``)."""
    start, end = item.range.start, item.range.end
    if item.kind is not T.SymbolKind.Module or item.children or end.line - start.line > 20:
        return False
    text = _range_text(item, lines, encoding)
    return b"{" not in text and bool(_MODULE_DECLARATION.search(text))


_FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
#: pyright/basedpyright and tsserver prefix hover code with the symbol's role.
_ROLE = re.compile(
    r"^\((?:function|method|variable|constant|property|field|class|parameter|type|"
    r"type alias|module|import|enum member|alias|let|const|var)\)\s*"
)


#: Values a server may print in a detail or hover: string literals and numbers (``Literal["…"]``,
#: ``= 42``, a default argument).
_VALUE = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`|(?<![\w.])-?\d[\w.]*""")
#: A declaration a hover displays: ``def load(``, ``class Runner``, ``function run``, ``func Load``.
_DECLARED = re.compile(r"\b(?:def|class|function|func|fn|struct|interface|enum)\s+([A-Za-z_$][\w$]*)")


def shows_outside_content(text: str, source: bytes) -> bool:
    """Could ``text`` (a server's detail or hover for a symbol of a file whose text is ``source``)
    show what is written outside that file? A server reads beyond the root (a symlink the walk
    refused, a repository config's extra paths): ``KEY = TOKEN`` hovers as the value of a
    ``TOKEN`` defined there, ``ALIAS = secret_fn`` as that function's declaration (basedpyright
    even renames it ``def ALIAS(a: int) -> str``). So every value shown must be written in the
    file, and every declaration shown (``def NAME``, ``class NAME``...) must be declared in it."""
    decoded = source.decode("utf-8", "replace")
    for match in _VALUE.finditer(text):
        value = match.group(0)
        inner = value[1:-1] if value[:1] in "\"'`" else value
        if inner and inner not in decoded:
            return True
    for match in _DECLARED.finditer(text):
        keyword, name = match.group(0).split()[0], match.group(1)
        if not re.search(rf"\b{keyword}\s+{re.escape(name)}\b", decoded):
            return True
    return False


def detail_from_hover(result: Any, limit: int) -> str:
    """The declaration a ``textDocument/hover`` answer shows, on one line (or "")."""
    contents = getattr(result, "contents", None)
    if contents is None:
        return ""
    if isinstance(contents, list):
        parts = [getattr(c, "value", c) for c in contents]
        text = "\n\n".join(p for p in parts if isinstance(p, str))
    else:
        text = getattr(contents, "value", contents)
        if not isinstance(text, str):
            return ""
    fenced = _FENCE.search(text)
    if fenced:
        code = fenced.group(1)
    else:
        # clangd's plain text: a header, facts, then the declaration as the last paragraph.
        paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
        code = paragraphs[-1] if paragraphs else ""
    return _ROLE.sub("", _one_line(code, limit))
