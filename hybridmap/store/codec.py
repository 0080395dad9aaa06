"""hybridmap's own encoding of cached values: data only, decoded strictly, never executed.

The disk cache holds nothing else (see :mod:`hybridmap.store.cache`): unlike pickle, decoding these
bytes can only build the records below, so whoever could write a cache entry can at worst make
it unusable, never run code. Exactly the values the cache's callers store are supported:

* :class:`ParseOutcome` (the tree-sitter source), :class:`FileTags` (server outlines),
* ``str`` (hover text),
* ``(tuple[str, ...], tuple[tuple[str, str], ...])`` (resolved definition targets and their shas),
* :class:`~hybridmap.infra.git.CommitLog` (a history an index artifact carries: JSON of the head
  and ``[sha, parentless, [paths]]`` per commit; shas are full hex object names).

Layout: ``MAGIC`` + format version byte + kind byte + body. A record's body is
``struct "<III"`` (lengths of ``ref_positions``, ``ref_kinds`` and the problems' JSON), those two
byte strings, the problems as JSON, then compact JSON of flat lists: the symbols as 13 columns
(names, kinds, span lines and columns...), so decoding checks each column's types and builds every
record in C-level ``map`` calls instead of a Python loop per symbol. The problems come first so
that a parse outcome can be decoded *lazily* (:func:`decode` with ``lazy_tags``): its problems at
once (a map reports them), its tags when first read (:class:`LazyFileTags`). Text is UTF-8 with
``surrogatepass``; the resolution is JSON.
Anything else (other magic, version or kind, bad JSON, a field of the wrong type or count, a
reference kind out of range) raises :class:`CodecError`. (Format 1's records, some of them with
12 symbol columns from before ``doc`` existed, are never met: their keys are format 1's.)

The strings many records repeat are interned as they are decoded (``sys.intern``: one object per
distinct value, dropped when the last record holding it is): reference names, symbol names,
kinds, provenances, imports. JSON gives each occurrence its own object; in the 100,000-file
monorepo's warm map 4.7 M reference names are 281 k distinct (271 -> 18 MB), 889 k kinds and
provenances 10 (98 -> 0 MB). Signatures and docs are mostly distinct and are left as they come.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import re
import struct
from collections.abc import Callable
from sys import intern
from typing import Any, TypeGuard, cast

from ..infra.git import FULL_SHA, Commit, CommitLog
from ..model import REFERENCE_KIND_CODES, FileTags, ParseOutcome, Span, Symbol

MAGIC = b"hmc"
#: Bump when the layout changes; the cache puts it in every key, so older entries simply miss.
#: 2: a record's problems before its tags (lazy decoding).
FORMAT = 2
#: Put before every key a value in this format is stored under (on disk, in a shared store).
KEY_PREFIX = f"{MAGIC.decode()}{FORMAT}:"

_OUTCOME, _OUTCOME_EMPTY, _TAGS, _TEXT, _RESOLUTION, _HISTORY = 1, 2, 3, 4, 5, 6
_HEADER = struct.Struct("<3sBB")
_LENGTHS = struct.Struct("<III")
#: The type of each of a symbol's 13 columns, in order (JSON gives exactly these back).
_SYMBOL_TYPES = (str, str, int, int, int, int, int, int, str, int, str, str, str)
_NO_SYMBOLS: list[list[Any]] = [[] for _ in _SYMBOL_TYPES]
_dumps = json.JSONEncoder(separators=(",", ":"), check_circular=False, allow_nan=False).encode
_loads = json.loads
#: What a malformed body raises while being decoded; all turned into CodecError.
_DECODE_ERRORS = (ValueError, TypeError, KeyError, IndexError, struct.error, RecursionError, OverflowError)


def format_key(key: str) -> str:
    """The key a value in this format is stored under: entries of any other format miss."""
    return KEY_PREFIX + key


class CodecError(ValueError):
    """Bytes that are not a value of ours, or a value we do not store."""


# --- encoding ----------------------------------------------------------------------------------


def encode(value: object) -> bytes:
    """The bytes of one cached value; :class:`CodecError` for a type the cache does not store."""
    if isinstance(value, ParseOutcome):
        problems = [[kind, message] for kind, message in value.problems]
        if value.tags is None:
            return _header(_OUTCOME_EMPTY) + _dumps(problems).encode()
        return _header(_OUTCOME) + _tags_body(value.tags, problems)
    if isinstance(value, FileTags):
        return _header(_TAGS) + _tags_body(value, [])
    if type(value) is str:
        return _header(_TEXT) + value.encode("utf-8", "surrogatepass")
    if _is_resolution(value):
        targets, shas = value
        return _header(_RESOLUTION) + _dumps([list(targets), [list(pair) for pair in shas]]).encode()
    if isinstance(value, CommitLog):
        commits = [[c.sha, c.parentless, list(c.paths)] for c in value.commits]
        return _header(_HISTORY) + _dumps([value.head, commits]).encode()  # ASCII: surrogates escaped
    raise CodecError(f"the cache does not store {type(value).__name__} values")


def _header(kind: int) -> bytes:
    return _HEADER.pack(MAGIC, FORMAT, kind)


def _tags_body(tags: FileTags, problems: list[list[str]]) -> bytes:
    rows = [
        (
            s.name,
            s.kind,
            s.span.start_line,
            s.span.start_col,
            s.span.end_line,
            s.span.end_col,
            s.name_line,
            s.name_col,
            s.signature,
            s.parent,
            str(s.provenance),
            s.detail,
            s.doc,
        )
        for s in tags.symbols
    ]
    symbols = [list(column) for column in zip(*rows, strict=True)] if rows else _NO_SYMBOLS
    fields: list[Any] = [symbols, tags.ref_names, tags.line_count, tags.complete]
    # Optional fields go last, each written only when it or one after it is there (values written
    # before a field existed simply end sooner).
    if tags.imports or tags.words or tags.cells or tags.name_words:
        fields.append([list(pair) for pair in tags.imports])
    if tags.words or tags.cells or tags.name_words:
        fields.append(tags.words)
    if tags.cells or tags.name_words:  # cells: notebooks only
        fields.append([list(pair) for pair in tags.cells])
    if tags.name_words:
        fields.append(tags.name_words)
    said = _dumps(problems).encode()
    rest = _dumps(fields).encode()
    lengths = _LENGTHS.pack(len(tags.ref_positions), len(tags.ref_kinds), len(said))
    return b"".join((lengths, tags.ref_positions, tags.ref_kinds, said, rest))


Resolution = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


def _is_resolution(value: object) -> TypeGuard[Resolution]:
    if type(value) is not tuple or len(value) != 2:
        return False
    targets, shas = value
    return (
        type(targets) is tuple
        and all(type(t) is str for t in targets)
        and type(shas) is tuple
        and all(type(p) is tuple and len(p) == 2 and type(p[0]) is str and type(p[1]) is str for p in shas)
    )


# --- decoding ----------------------------------------------------------------------------------


def decode(data: bytes, lazy_tags: bool = False, damaged: Callable[[], object] | None = None) -> Any:
    """The value ``data`` encodes; :class:`CodecError` for anything :func:`encode` did not write.
    ``lazy_tags``: a parse outcome's tags are a :class:`LazyFileTags` (decoded when first read;
    ``damaged`` is called if they do not decode then)."""
    if type(data) is not bytes:
        raise CodecError(f"a cached value is bytes, not {type(data).__name__}")
    if len(data) < _HEADER.size:
        raise CodecError("not a hybridmap cache value (too short)")
    magic, version, kind = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CodecError("not a hybridmap cache value (unknown header)")
    if version != FORMAT:
        raise CodecError(f"cache value format {version}, expected {FORMAT}")
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise CodecError(f"unknown cache value kind {kind}")
    try:
        if lazy_tags and kind == _OUTCOME:  # the record is held whole, sliced only when decoded
            return ParseOutcome(LazyFileTags(data, damaged), _problems_of(data, _HEADER.size)[1])
        return decoder(data[_HEADER.size :])
    except CodecError:
        raise
    except _DECODE_ERRORS as exc:
        raise CodecError(f"malformed cache value (kind {kind}): {type(exc).__name__}: {exc}") from None


class LazyFileTags(FileTags):
    """:class:`FileTags` of a cache record, decoded when one of its fields is first read.

    Made from a whole record (:func:`decode`), or from ``fetch``, which finds the tags when they
    are first read (a one-shot map's kept keys, :mod:`hybridmap.store.kept_keys`: the record is
    not even read until then). A one-shot map of a repository whose graph was kept
    (``pipeline.graph.kept``) reads the tags of the few hundred files it shows, not of every
    file: decoding 100,000 records was a third of a warm one-shot map at 100,000 files.
    Everything that only holds, passes or compares the tags by identity (what moved between two
    maps) never decodes them. Two threads reading at once may both decode; one result is kept and
    the values are equal. A record that does not decode (damaged on disk), or a ``fetch`` that
    finds nothing, reads as tags with no symbols and no references, and ``damaged`` is called
    (the cache drops the entry and says so: the next map parses the file).
    """

    __slots__ = ("_body", "_damaged", "_failed", "_fetch", "_tags")
    _body: bytes
    _damaged: Callable[[], object] | None
    _failed: bool
    _fetch: Callable[[], FileTags | None] | None
    _tags: FileTags | None

    def __init__(
        self,
        body: bytes = b"",
        damaged: Callable[[], object] | None = None,
        fetch: Callable[[], FileTags | None] | None = None,
        **fields: Any,
    ) -> None:
        # ``fields``: what ``dataclasses.replace`` passes (every field, decoded): those tags.
        object.__setattr__(self, "_body", body)
        object.__setattr__(self, "_damaged", damaged)
        object.__setattr__(self, "_fetch", fetch)
        object.__setattr__(self, "_failed", False)
        object.__setattr__(self, "_tags", FileTags(**fields) if fields else None)

    def decoded(self) -> FileTags:
        """The tags, decoded (or fetched) on the first call."""
        body, fetch = self._body, self._fetch  # read before ``_tags``: let go of only after they are set
        tags = self._tags
        if tags is None:
            tags = self._fetched(fetch) if fetch is not None else self._from_record(body)
            if tags is None:
                tags = FileTags((), complete=False)
                object.__setattr__(self, "_failed", True)
                if self._damaged is not None:
                    with contextlib.suppress(Exception):  # the cache may be closed by now
                        self._damaged()
            object.__setattr__(self, "_tags", tags)
            object.__setattr__(self, "_body", b"")
            object.__setattr__(self, "_fetch", None)
            object.__setattr__(self, "_damaged", None)
        return tags

    @staticmethod
    def _from_record(body: bytes) -> FileTags | None:
        try:
            return _decode_tags(body[_HEADER.size :])[0]
        except (CodecError, *_DECODE_ERRORS):
            return None

    @staticmethod
    def _fetched(fetch: Callable[[], FileTags | None]) -> FileTags | None:
        try:
            return fetch()
        except Exception:  # noqa: BLE001 - any failure to find the tags reads as none (said by ``damaged``)
            return None

    @property
    def damaged(self) -> bool:
        """Whether the record did not decode (these tags stand for tags it no longer holds)."""
        return self._failed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyFileTags):
            other = other.decoded()
        return self.decoded() == other if isinstance(other, FileTags) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.decoded())


def _lazy_field(name: str) -> property:
    return property(lambda tags: getattr(tags.decoded(), name), doc=f"{name}, decoded on first read")


for _field in dataclasses.fields(FileTags):
    setattr(LazyFileTags, _field.name, _lazy_field(_field.name))


def _decode_outcome(body: bytes) -> ParseOutcome:
    tags, problems = _decode_tags(body)
    return ParseOutcome(tags, problems)


def _decode_outcome_empty(body: bytes) -> ParseOutcome:
    return ParseOutcome(None, _problems(_loads(body)))


def _decode_file_tags(body: bytes) -> FileTags:
    tags, problems = _decode_tags(body)
    _check(problems == (), "file tags with problems")
    return tags


def _decode_text(body: bytes) -> str:
    return body.decode("utf-8", "surrogatepass")


def _decode_resolution(body: bytes) -> Resolution:
    targets, shas = _loads(body)
    _check(type(targets) is list and _all_str(targets), "resolution targets")
    _check(type(shas) is list and all(type(p) is list and len(p) == 2 and _all_str(p) for p in shas), "resolution shas")
    return tuple(targets), _pairs(shas)


def _decode_history(body: bytes) -> CommitLog:
    head, rows = _loads(body)
    _check(type(head) is str and FULL_SHA.fullmatch(head) is not None and type(rows) is list, "history head")
    commits = []
    for row in rows:
        _check(type(row) is list and len(row) == 3, "history commit")
        sha, parentless, paths = row
        _check(type(sha) is str and FULL_SHA.fullmatch(sha) is not None and type(parentless) is bool, "history commit")
        _check(type(paths) is list and _all_str(paths), "history paths")
        commits.append(Commit(sha, tuple(paths), parentless))
    return CommitLog(head, tuple(commits))


_NO_PROBLEMS = b"[]"


def _problems_of(body: bytes, at: int = 0) -> tuple[int, tuple[tuple[str, str], ...]]:
    """Where the tags' JSON of the record body at ``at`` in ``body`` starts, and its problems."""
    n_positions, n_kinds, n_said = _LENGTHS.unpack_from(body, at)
    start = at + _LENGTHS.size + n_positions + n_kinds
    _check(len(body) >= start + n_said, "record lengths")
    said = body[start : start + n_said]
    return start + n_said, (() if said == _NO_PROBLEMS else _problems(_loads(said)))


def _decode_tags(body: bytes) -> tuple[FileTags, tuple[tuple[str, str], ...]]:
    n_positions, n_kinds, _ = _LENGTHS.unpack_from(body)
    start = _LENGTHS.size
    positions = body[start : start + n_positions]
    kinds = body[start + n_positions : start + n_positions + n_kinds]
    rest, problems = _problems_of(body)
    fields = _loads(body[rest:])
    _check(type(fields) is list and len(fields) in (4, 5, 6, 7, 8), "tags fields")
    symbols, names, line_count, complete = fields[:4]
    imports = _interned_pairs(fields[4]) if len(fields) >= 5 else ()  # the same shape: pairs of str
    words = fields[5] if len(fields) >= 6 else ""
    _check(type(words) is str, "file words")
    cells = _cells(fields[6]) if len(fields) >= 7 else ()
    name_words = fields[7] if len(fields) == 8 else ""
    _check(type(name_words) is str, "name words")
    _check(type(names) is list and _all_str(names), "reference names")
    _check(len(positions) == n_positions == 8 * len(names) and len(kinds) == n_kinds == len(names), "reference columns")
    _check(not kinds or max(kinds) < len(REFERENCE_KIND_CODES), "reference kind")
    _check(type(line_count) is int and type(complete) is bool, "file fields")
    tags = FileTags(
        _symbols(symbols),
        tuple(map(intern, names)),
        positions,
        kinds,
        line_count,
        complete,
        imports,
        words,
        cells,
        name_words,
    )
    return tags, problems


def _cells(decoded: object) -> tuple[tuple[int, int], ...]:
    """A notebook's (first line, cell number) pairs: ints, ascending lines."""
    _check(type(decoded) is list and all(type(p) is list and len(p) == 2 for p in decoded), "notebook cells")
    pairs = tuple((p[0], p[1]) for p in cast("list[list[Any]]", decoded))
    _check(all(type(a) is int and type(b) is int and a >= 0 and b >= 1 for a, b in pairs), "notebook cells")
    _check(all(x[0] <= y[0] for x, y in itertools.pairwise(pairs)), "notebook cells order")
    return pairs


def _symbols(decoded: object) -> tuple[Symbol, ...]:
    c = cast("list[list[Any]]", decoded)
    _check(
        type(c) is list
        and len(c) == len(_SYMBOL_TYPES)
        and all(type(column) is list for column in c)
        and len(set(map(len, c))) == 1,
        "symbol columns",
    )
    for column, kind in zip(c, _SYMBOL_TYPES, strict=True):  # one C-level pass per column (bool is not int here)
        _check(set(map(type, column)) <= {kind}, "symbol field")
    # A file's symbols share a handful of provenances: each distinct one is checked once, not
    # once per symbol (a regex per symbol was 4.5 s of a warm 100k-file map's profile).
    for value in set(c[10]):
        _provenance(value)
    return tuple(
        map(
            Symbol,
            map(intern, c[0]),
            map(intern, c[1]),
            map(Span, c[2], c[3], c[4], c[5]),
            c[6],
            c[7],
            c[8],
            c[9],
            map(intern, c[10]),
            c[11],
            c[12],
        )
    )


_PROVENANCE_NAME = re.compile(r"[a-z][a-z0-9-]*(?:[+:][a-z][a-z0-9-]*)*")


def _provenance(value: str) -> str:
    """A provenance as written by a source (``tree-sitter``, ``tree-sitter+lsp``, ``scip``...)."""
    if _PROVENANCE_NAME.fullmatch(value) is None:
        raise KeyError(value)  # a CodecError for the caller, like any malformed column
    return value


def _problems(items: Any) -> tuple[tuple[str, str], ...]:
    _check_pairs(items)
    return _pairs(items)


def _interned_pairs(items: Any) -> tuple[tuple[str, str], ...]:
    """:func:`_problems`' shape, each str interned (imports: a few module names, many times)."""
    _check_pairs(items)
    return tuple((intern(first), intern(second)) for first, second in cast("list[list[str]]", items))


def _check_pairs(items: Any) -> None:
    _check(type(items) is list and all(type(p) is list and len(p) == 2 and _all_str(p) for p in items), "problems")


def _pairs(items: object) -> tuple[tuple[str, str], ...]:
    """Checked lists of two str, as tuples."""
    return tuple((first, second) for first, second in cast("list[list[str]]", items))


def _all_str(items: list[Any]) -> bool:
    return set(map(type, items)) <= {str}


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise CodecError(f"malformed cache value: {what}")


_DECODERS = {
    _OUTCOME: _decode_outcome,
    _OUTCOME_EMPTY: _decode_outcome_empty,
    _TAGS: _decode_file_tags,
    _TEXT: _decode_text,
    _RESOLUTION: _decode_resolution,
    _HISTORY: _decode_history,
}
