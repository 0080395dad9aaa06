"""Decode the parts of a SCIP index (``index.scip``) hybridmap uses.

SCIP (``scip.proto``, Sourcegraph's public schema) is one protobuf ``Index`` message: metadata,
then documents, each with its occurrences (a range, a symbol string, a bitset of roles, the
enclosing AST node's range) and the symbols it defines (kind, display name, signature). Files
made by concatenating ``Index`` messages are valid too: protobuf merges them (repeated fields
append, the last metadata scalar wins), which is how ``scip-typescript`` writes one index per
project and how ``hybridmap index`` joins two indexers' output.

Only these fields are read; everything else (external symbols, relationships, diagnostics,
document text, syntax kinds) is skipped as opaque bytes without being decoded. Decoding is
pure Python (measured in ``docs/scip.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .wire import FIXED32, FIXED64, LENGTH, VARINT, WireError, fields, packed_int32, signed32, text, varint

#: Caps on counts, whatever the file's size: past them the index is refused as hostile or broken.
MAX_DOCUMENTS = 1_000_000
MAX_OCCURRENCES = 50_000_000
MAX_SYMBOLS = 10_000_000

#: ``Document.position_encoding`` (and what an unspecified one means here).
POSITION_UNSPECIFIED = 0
POSITION_UTF8 = 1
POSITION_UTF16 = 2
POSITION_UTF32 = 3

#: ``SymbolRole`` bits.
ROLE_DEFINITION = 0x1
ROLE_IMPORT = 0x2


class Occurrence(NamedTuple):
    """One range in a document that names a symbol. Lines are 0-based; columns are in the
    document's position encoding (see :attr:`Document.position_encoding`). A NamedTuple, not a
    dataclass: a large index has millions of them, and tuples are built several times faster."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int
    symbol: str
    roles: int
    enclosing: tuple[int, int, int, int] | None


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    symbol: str
    kind: int
    display_name: str = ""
    signature: str = ""
    """``signature_documentation.text``, or the first code block of ``documentation`` (older
    indexers, scip-python among them, put the declaration there)."""
    enclosing_symbol: str = ""


@dataclass(frozen=True, slots=True)
class Document:
    relative_path: str
    language: str
    position_encoding: int
    occurrences: tuple[Occurrence, ...]
    symbols: tuple[SymbolInfo, ...]


@dataclass(frozen=True, slots=True)
class ScipIndex:
    project_root: str
    text_encoding: int
    tool: str
    documents: tuple[Document, ...]

    @classmethod
    def decode(cls, data: bytes) -> ScipIndex:
        """The index in ``data``; :class:`WireError` when it is malformed or past the caps."""
        return _Decoder(data).index()


class _Decoder:
    """One decoding pass. Symbol strings repeat across occurrences: each distinct byte string is
    decoded once and shared (memory and time)."""

    def __init__(self, data: bytes) -> None:
        self.buf = data
        self.strings: dict[bytes, str] = {}
        self.occurrences = 0
        self.symbols = 0

    def index(self) -> ScipIndex:
        buf = self.buf
        project_root, encoding, tool = "", 0, ""
        documents: list[Document] = []
        for number, wire, a, b in fields(buf, 0, len(buf)):
            if wire != LENGTH:
                continue
            if number == 1:
                root, enc, name = self.metadata(a, b)
                project_root, encoding, tool = root or project_root, enc or encoding, name or tool
            elif number == 2:
                if len(documents) >= MAX_DOCUMENTS:
                    raise WireError(f"more than {MAX_DOCUMENTS} documents")
                documents.append(self.document(a, b))
        return ScipIndex(project_root, encoding, tool, tuple(documents))

    def metadata(self, start: int, end: int) -> tuple[str, int, str]:
        buf = self.buf
        root, encoding, tool = "", 0, ""
        for number, wire, a, b in fields(buf, start, end):
            if number == 3 and wire == LENGTH:
                root = text(buf, a, b)
            elif number == 4 and wire == VARINT:
                encoding = a
            elif number == 2 and wire == LENGTH:
                for n, w, c, d in fields(buf, a, b):
                    if n == 1 and w == LENGTH:
                        tool = text(buf, c, d)
        return root, encoding, tool

    def document(self, start: int, end: int) -> Document:
        buf = self.buf
        path, language, encoding = "", "", POSITION_UNSPECIFIED
        occurrences: list[Occurrence] = []
        symbols: list[SymbolInfo] = []
        for number, wire, a, b in fields(buf, start, end):
            if number == 2 and wire == LENGTH:
                self.occurrences += 1
                if self.occurrences > MAX_OCCURRENCES:
                    raise WireError(f"more than {MAX_OCCURRENCES} occurrences")
                occurrence = self.occurrence(a, b)
                if occurrence is not None:
                    occurrences.append(occurrence)
            elif number == 3 and wire == LENGTH:
                self.symbols += 1
                if self.symbols > MAX_SYMBOLS:
                    raise WireError(f"more than {MAX_SYMBOLS} symbols")
                symbols.append(self.symbol_information(a, b))
            elif number == 1 and wire == LENGTH:
                path = text(buf, a, b)
            elif number == 4 and wire == LENGTH:
                language = text(buf, a, b)
            elif number == 6 and wire == VARINT:
                encoding = a
        return Document(path, language, encoding, tuple(occurrences), tuple(symbols))

    def string(self, start: int, end: int) -> str:
        raw = self.buf[start:end]
        found = self.strings.get(raw)
        if found is None:
            found = self.strings[raw] = raw.decode("utf-8", "surrogateescape")
        return found

    def occurrence(self, start: int, end: int) -> Occurrence | None:
        """One occurrence; None when its range is not 3 or 4 non-negative numbers (skipped: one
        bad occurrence should not cost the index).

        The hot loop of a decode (an index is mostly occurrences), so it reads keys and lengths
        inline with a one-byte fast path instead of going through :func:`fields`; the checks
        are the same."""
        buf = self.buf
        if not 0 <= start <= end <= len(buf):
            raise WireError(f"message bounds {start}..{end} outside a buffer of {len(buf)} bytes")
        ranges: dict[int, list[int]] = {}
        symbol, roles, pos = "", 0, start
        while pos < end:
            key = buf[pos]
            if key < 0x80:
                pos += 1
            else:
                key, pos = varint(buf, pos, end)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise WireError(f"field number 0 at byte {pos}")
            if wire == LENGTH:
                size, pos = varint(buf, pos, end)
                stop = pos + size
                if stop > end:
                    raise WireError(f"field {number}: {size} bytes at byte {pos} run past the message end ({end})")
                if number == 2:
                    symbol = self.string(pos, stop)
                elif number in (1, 7):  # the two range fields, read alike
                    chunk = buf[pos:stop]
                    # Fast path: small non-negative numbers are one byte each (bytes -> ints).
                    values = list(chunk) if size <= 4 and max(chunk, default=0) < 0x80 else None
                    if values is None:
                        values = packed_int32(buf, pos, stop, 5)
                    if values is None:
                        return None
                    ranges.setdefault(number, []).extend(values)
                pos = stop
            elif wire == VARINT:
                value, pos = varint(buf, pos, end)
                if number == 3:
                    roles = value
                elif number in (1, 7):  # unpacked: one element per field
                    ranges.setdefault(number, []).append(signed32(value) if value >= 1 << 31 else value)
            elif wire in (FIXED64, FIXED32):
                pos += 8 if wire == FIXED64 else 4
                if pos > end:
                    raise WireError(f"field {number}: truncated fixed-width value")
            else:
                raise WireError(f"field {number}: unsupported wire type {wire} at byte {pos}")
        rng = _range(ranges.get(1, ()))
        if rng is None:
            return None
        return Occurrence(*rng, symbol, roles, _range(ranges[7]) if 7 in ranges else None)

    def symbol_information(self, start: int, end: int) -> SymbolInfo:
        buf = self.buf
        symbol, kind, display, signature, enclosing = "", 0, "", "", ""
        documentation = ""
        for number, wire, a, b in fields(buf, start, end):
            if number == 1 and wire == LENGTH:
                symbol = self.string(a, b)
            elif number == 5 and wire == VARINT:
                kind = a
            elif number == 6 and wire == LENGTH:
                display = text(buf, a, b)
            elif number == 7 and wire == LENGTH:
                # A nested Document: only its text (field 5) is the signature.
                for n, w, c, d in fields(buf, a, b):
                    if n == 5 and w == LENGTH:
                        signature = text(buf, c, d)
            elif number == 3 and wire == LENGTH and not documentation:
                documentation = text(buf, a, b)
            elif number == 8 and wire == LENGTH:
                enclosing = self.string(a, b)
        return SymbolInfo(symbol, kind, display, signature or _code_block(documentation), enclosing)


def _range(values: Sequence[int]) -> tuple[int, int, int, int] | None:
    if len(values) == 3:
        a, b, d = values
        c = a
    elif len(values) == 4:
        a, b, c, d = values
    else:
        return None
    if a < 0 or b < 0 or d < 0 or (c, d) < (a, b):
        return None
    return a, b, c, d


def _code_block(documentation: str) -> str:
    """The first fenced code block of a markdown documentation string (or "")."""
    start = documentation.find("```")
    if start < 0:
        return ""
    body = documentation.find("\n", start)
    stop = documentation.find("```", body + 1) if body >= 0 else -1
    return documentation[body + 1 : stop].strip() if stop > body >= 0 else ""
