"""Static symbols from tree-sitter tag queries.

:func:`parse_file` is a pure function of (compiled language, bytes, options):
its :class:`ParseOutcome` is what the cache stores and what parse workers run.
:func:`parse_many` fans it out over worker processes for a cold index, because
py-tree-sitter holds the GIL for much of a parse (two threads measured 1.25x
faster than one on the CPython stdlib; processes scale with cores).

Every file is bounded in time: a parse past ``parse_timeout_seconds`` is
cancelled, and the tag queries stop at the same deadline, keeping what they
found (measured: the Python tag query over 400 KB of ``(`` ran 187 s unbounded,
while its parse took 0.27 s).
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import queue
import re
import struct
import subprocess
import sys
import threading
import time
import warnings
from array import array
from bisect import bisect_right
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import IO, Any

from ..infra.sandbox import Policy, base_policy, confined
from ..languages import notebooks, query_predicates
from ..languages.lexical import encode_words, name_counts, word_counts
from ..languages.registry import CompiledLanguage, LanguageRegistry
from ..model import DEFERRED_KIND, REFERENCE_KIND_CODES, STAR_IMPORT, FileTags, ParseOutcome, Span, Symbol
from ..settings import Settings
from .doc_comments import DOCSTRING_GRAMMARS, doc_line
from .reparse import Kept, KeptTrees, text_edit

#: Bumped when extraction gives other tags for the same bytes, options and queries
#: (2: a macro's signature no longer takes the next line; 3: symbols carry their ``doc``).
#: A query's own text is in the key already (``CompiledLanguage.query_hash``).
EXTRACTOR_VERSION = 3


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """Everything a parse depends on besides the bytes and the grammar (part of its cache key)."""

    max_signature_lines: int = 6
    match_limit: int = 65_536
    timeout_seconds: float = 0.0
    """0 = unbounded."""
    syntax_error_lines: int = 20
    max_definitions: int = 20_000
    text_words: bool = False
    """Count every word of the text (``FileTags.words``: ``text_similarity_message_full_text``)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseOptions:
        # A file's own limit is at most the map's parse deadline, so a map overruns its deadline
        # by at most that much (a file started just before it runs to its own limit).
        timeout, deadline = settings.parse_timeout_seconds, settings.parse_deadline_seconds
        if deadline > 0:
            timeout = min(timeout, deadline) if timeout > 0 else deadline
        return cls(
            settings.max_signature_lines,
            settings.query_match_limit,
            timeout,
            settings.syntax_error_report_lines,
            settings.max_definitions_per_file,
            settings.text_similarity_message_full_text,
            settings.max_file_bytes,
            settings.name_match_import_files,
        )

    max_code_bytes: int = 1_000_000
    """A notebook's code cells, joined, are parsed up to this size (``max_file_bytes``)."""
    import_files: bool = False
    """Keep every import the query finds (``name_match_import_files``: TypeScript, JavaScript,
    Java, Python's relative and star imports); otherwise only Python's absolute ones, which
    ``name_match_imports`` reads. Held for no rule, the others were ~25 MB of tags at 100,000
    generated files (``sys.getsizeof`` over a 4,000-file sample), and gave a TypeScript
    repository's policies a pass over every file to make."""

    @property
    def notebook_key(self) -> str:
        """:attr:`key` for a notebook: its code is extracted first (``max_code_bytes``, the
        notebook format's version), so the same bytes as a notebook and as a file differ."""
        return f"{self.key}-nb{notebooks.FORMAT_VERSION}-cb{self.max_code_bytes}"

    @property
    def key(self) -> str:
        # EXTRACTOR_VERSION: what the same options extract changed (cached tags are stale).
        return (
            f"x{EXTRACTOR_VERSION}-sig{self.max_signature_lines}-ml{self.match_limit}"
            f"-to{self.timeout_seconds:g}-se{self.syntax_error_lines}-md{self.max_definitions}"
            f"{'-words' if self.text_words else ''}{'-imports' if self.import_files else ''}"
        )


DEFERRED = ParseOutcome(None, ((DEFERRED_KIND, "not parsed within parse_deadline_seconds; parsed next map"),))


class ParseTimeout(Exception):
    """tree-sitter did not finish parsing a file within its time limit."""


#: Node types that hold a definition's body when the grammar has no ``body`` field.
_BODY_TYPES = frozenset(
    {
        "block",
        "class_body",
        "declaration_list",
        "field_declaration_list",
        "compound_statement",
        "statement_block",
        "enum_body",
        "interface_body",
        "enumerator_list",
        "object_type",
        "body_statement",
        "do_block",
        "function_body",
        "class_declaration_body",
        "struct_body",
        "trait_body",
        "impl_body",
        "module_body",
        "enum_class_body",
        "protocol_body",
        "body",
        "recipe",
        "selection_set",
    }
)
#: When two patterns tag the same definition node, the higher kind wins (match order is not
#: pattern order): a method is more specific than a function, a function than a variable.
_KIND_PRIORITY = {"method": 3, "constructor": 3, "function": 2, "variable": 0, "constant": 0}
_KIND_CODE = {kind: i for i, kind in enumerate(REFERENCE_KIND_CODES)}
#: Kinds whose bodiless form still deserves its full (multi-line) header.
_CALLABLE_KINDS = frozenset({"function", "method", "constructor", "macro"})


def _body_of(node: Any, name_start: int) -> Any:
    """The definition's body, if it has one after its name (else None)."""
    body = _find_body(node)
    return body if body is not None and body.start_byte > name_start else None


def _find_body(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    # const f = (x) => {...}; f <- function(x) {...}; let f x = ... (the body sits one level down)
    for inner in (
        node.child_by_field_name("value"),
        node.child_by_field_name("rhs"),
        node.named_children[0] if node.named_child_count else None,
    ):
        if inner is not None and inner.child_by_field_name("body") is not None:
            return inner.child_by_field_name("body")
    for child in node.named_children:
        ctype = child.type
        if ctype in _BODY_TYPES or ctype.endswith("_body"):
            return child
    return None


def _signature(lines: list[bytes], node: Any, kind: str, name_node: Any, max_lines: int) -> str:
    start = node.start_point[0]
    name_line = name_node.start_point[0]
    body = _body_of(node, name_node.start_byte)
    if body is not None and body.start_point[0] >= start:
        # The header ends with the last non-comment token before the body; a body
        # (Python block, Allman brace) on a later line is not part of it.
        prev = body.prev_sibling
        while prev is not None and prev.type == "comment":
            prev = prev.prev_sibling
        end = prev.end_point[0] if prev is not None else body.start_point[0]
    elif kind in _CALLABLE_KINDS:
        end_line, end_col = node.end_point
        # A node that ends at column 0 (C's preproc_def keeps its newline) has nothing on that line.
        end = end_line - 1 if end_col == 0 and end_line > start else end_line
    else:
        end = max(name_line, start)
    end = min(end, start + max_lines - 1, len(lines) - 1)
    # CRLF files: the CR belongs to the line end, not to the signature.
    return b"\n".join(line.rstrip(b"\r") for line in lines[start : end + 1]).decode("utf-8", "replace").rstrip()


def extract_tags(
    compiled: CompiledLanguage, source: bytes, *, max_signature_lines: int = 6, match_limit: int = 65_536
) -> FileTags:
    """Parse ``source`` (unbounded in time) and return its definitions and references."""
    return _extract(compiled, source, ParseOptions(max_signature_lines, match_limit))[0]


def parse_file(
    compiled: CompiledLanguage, source: bytes, options: ParseOptions, kept: KeptTrees | None = None, path: str = ""
) -> ParseOutcome:
    """Parse ``source`` within ``options``; never raises for the content. With ``kept``, from
    ``path``'s last tree there (and its tree is kept for the next parse)."""
    try:
        tags, problems = _extract(compiled, source, options, kept, path)
    except ParseTimeout:
        return ParseOutcome(
            None,
            (
                (
                    "parse_timeout",
                    f"tree-sitter did not finish parsing within "
                    f"parse_timeout_seconds={options.timeout_seconds:g}; no symbols "
                    "from this file",
                ),
            ),
        )
    return ParseOutcome(tags, problems)


def parse_notebook(compiled: CompiledLanguage, data: bytes, options: ParseOptions) -> ParseOutcome:
    """Parse a notebook's code cells (:mod:`hybridmap.languages.notebooks`) as one source in
    ``compiled``'s language; its tags carry where each cell starts. Never raises for the content:
    a notebook that cannot be read, or whose code is larger than ``max_code_bytes``, has no tags
    and says why."""
    try:
        notebook = notebooks.read_notebook(data, compiled.language.name)
    except notebooks.NotebookError as exc:
        return ParseOutcome(None, (("notebook_unreadable", f"{exc}; its code cells are not mapped"),))
    if len(notebook.source) > options.max_code_bytes:
        return ParseOutcome(
            None,
            (
                (
                    "too_large",
                    f"{len(notebook.source)} bytes of code cells > max_file_bytes={options.max_code_bytes}",
                ),
            ),
        )
    outcome = parse_file(compiled, notebook.source, options)
    if outcome.tags is None:
        return outcome
    return ParseOutcome(dataclasses.replace(outcome.tags, cells=notebook.cells), outcome.problems)


def _set_parse_timeout(parser: Any, micros: int) -> None:
    # The replacement, parse(progress_callback=...), crashes py-tree-sitter 0.25.2 with a
    # segmentation fault (measured here, as does QueryCursor.matches(progress_callback=...)).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        parser.timeout_micros = micros


def _parse_tree(
    compiled: CompiledLanguage, source: bytes, timeout_seconds: float, previous: Kept | None = None
) -> tuple[Any, bool]:
    """The tree of ``source``, and whether it was parsed from ``previous`` (the same file's last
    parse, handed over: its tree is edited here). That tree is used when both it and the new one
    have no syntax error: error
    recovery from an old tree can differ from a fresh parse's (a ``'''`` opened in one edit and
    closed at the end of the file in the next: tree-sitter kept the old tree's error nodes,
    ``tests/sources/test_reparse.py``), and a file's tags must not depend on its history: the
    cache keeps them by content."""
    parser = compiled.parser  # shared: every parse sets its own limit (0 = none) first
    _set_parse_timeout(parser, int(timeout_seconds * 1_000_000))
    try:
        if previous is not None and not previous.tree.root_node.has_error:
            edit = text_edit(previous.source, source)
            previous.tree.edit(
                edit.start_byte,
                edit.old_end_byte,
                edit.new_end_byte,
                edit.start_point,
                edit.old_end_point,
                edit.new_end_point,
            )
            tree = parser.parse(source, previous.tree)
            if not tree.root_node.has_error:
                return tree, True
        return parser.parse(source), False
    except ValueError as exc:  # "Parsing failed": the timeout cancelled it
        # Without a reset the next parse resumes this one (measured: a tree of the wrong length).
        parser.reset()
        if timeout_seconds <= 0:
            raise
        raise ParseTimeout(f"no tree within {timeout_seconds:g} s") from exc


def _largest_error(root: Any) -> tuple[int, int] | None:
    """(first line, last line) of the largest ERROR node, descending only where errors are."""
    best: tuple[int, int] | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            lines = (node.start_point[0], node.end_point[0])
            if best is None or lines[1] - lines[0] > best[1] - best[0]:
                best = lines
            continue
        stack.extend(child for child in node.children if child.has_error)
    return best


@dataclass(slots=True)
class _Clock:
    """One file's time limit (``timeout`` seconds from ``started``; 0 = none)."""

    started: float
    timeout: float

    def query_budget(self) -> int:
        """Microseconds left for a query (0 = unbounded, as QueryCursor reads it)."""
        if self.timeout <= 0:
            return 0
        return max(1, int((self.started + self.timeout - time.monotonic()) * 1_000_000))

    def out(self) -> bool:
        return self.timeout > 0 and time.monotonic() - self.started >= self.timeout


#: (definition start byte, end byte, name start byte) -> (name, kind, definition node, name node)
_Defs = dict[tuple[int, int, int], tuple[str, str, Any, Any]]
#: name start byte -> (name end byte, kind code); lines and columns are read from the source
#: once per file (:func:`_file_tags`), not asked of each node
_Refs = dict[int, tuple[int, int]]


#: A single-file component's blocks that hold code: <script ...>...</script> (Vue, Svelte, Astro)
#: and Astro's leading "---" frontmatter. Group 1 is the code.
_EMBEDDED_BLOCKS = {
    "script": re.compile(rb"<script\b[^>]*>(.*?)</script\s*>", re.S | re.I),
    "frontmatter": re.compile(rb"\A\s*---[ \t]*\r?\n(.*?)^---[ \t]*$", re.S | re.M),
}


_BLANK = bytes(c if c in (10, 13) else 32 for c in range(256))


def _embedded_code(compiled: CompiledLanguage, source: bytes) -> bytes:
    """``source`` with everything outside its code blocks blanked, for a language whose
    ``[language] embedded-blocks`` (e.g. ``["script"]``) names them; else ``source`` itself.

    The grammar (TypeScript for a .vue file) then parses only the code, at the same byte
    offsets and lines as in the file, so spans and signatures need no mapping back.
    """
    section = compiled.language.raw.get("language", {})
    kinds = section.get("embedded-blocks") if isinstance(section, dict) else None
    if not kinds:
        return source
    spans = sorted(
        match.span(1) for kind in kinds if kind in _EMBEDDED_BLOCKS for match in _EMBEDDED_BLOCKS[kind].finditer(source)
    )
    # Bytes outside the blocks become spaces, line ends stay: same offsets, same lines.
    out: list[bytes] = []
    pos = 0
    for start, end in spans:
        if start >= pos:
            out += (source[pos:start].translate(_BLANK), source[start:end])
            pos = end
    out.append(source[pos:].translate(_BLANK))
    return b"".join(out)


def _extract(
    compiled: CompiledLanguage, source: bytes, options: ParseOptions, kept: KeptTrees | None = None, path: str = ""
) -> tuple[FileTags, tuple[tuple[str, str], ...]]:
    clock = _Clock(time.monotonic(), options.timeout_seconds)
    source = _embedded_code(compiled, source)
    language = compiled.language.name
    tree, reused = _parse_tree(compiled, source, clock.timeout, kept.take(path, language) if kept is not None else None)
    if kept is not None:
        kept.put(path, language, source, tree)
        kept.reused += reused
    root = tree.root_node
    problems: list[tuple[str, str]] = []
    if root.has_error:
        region = _largest_error(root)
        if region is not None and region[1] - region[0] + 1 >= options.syntax_error_lines:
            problems.append(
                (
                    "syntax_error",
                    f"tree-sitter could not parse lines {region[0] + 1}-"
                    f"{region[1] + 1}; definitions there may be missing",
                )
            )
    lines = source.split(b"\n")
    imports: list[tuple[str, str]] = []
    defs, refs, complete = _tag_matches(compiled, root, options.match_limit, clock, imports)
    if not complete:
        problems.append(
            (
                "partial_parse",
                f"the tag query hit query_match_limit={options.match_limit}; symbols of this file are partial",
            )
        )
    elif clock.out():
        complete = False
        problems.append(
            (
                "partial_parse",
                f"tag queries ran past parse_timeout_seconds={clock.timeout:g}; symbols of this file are partial",
            )
        )
    if compiled.identifier_query is not None and not clock.out():
        _backfill_references(compiled, root, options.match_limit, clock, defs, refs)
    if len(defs) > options.max_definitions:
        total, complete = len(defs), False
        defs, cut_line = _first_definitions(defs, options.max_definitions)
        problems.append(
            (
                "too_many_definitions",
                f"{total} definitions > max_definitions_per_file={options.max_definitions}: the first "
                f"{options.max_definitions} are mapped, those starting from line {cut_line + 1} on are not",
            )
        )
    docstrings = compiled.language.grammar in DOCSTRING_GRAMMARS
    symbols = _symbols(defs, source, lines, options.max_signature_lines, docstrings)
    words = encode_words(word_counts(source.decode("utf-8", "replace"))) if options.text_words else ""
    if not options.import_files:  # what name_match_imports reads: Python's absolute modules
        python = compiled.language.grammar == "python"
        imports = [(n, m) for n, m in imports if python and n != STAR_IMPORT and not m.startswith(".")]
    return _file_tags(symbols, refs, source, lines, complete, tuple(dict.fromkeys(imports)), words), tuple(problems)


def _tag_matches(
    compiled: CompiledLanguage, root: Any, match_limit: int, clock: _Clock, imports: list[tuple[str, str]]
) -> tuple[_Defs, _Refs, bool]:
    """Definitions and references of the tag query; False when it hit its match limit. The
    query's ``@import.name`` / ``@import.module`` pairs are appended to ``imports`` (an
    ``@import.star`` match as the name :data:`~hybridmap.model.STAR_IMPORT`)."""
    from tree_sitter import QueryCursor

    cursor = QueryCursor(compiled.query, match_limit=match_limit, timeout_micros=clock.query_budget())
    defs: _Defs = {}
    refs: _Refs = {}
    ancestors = compiled.ancestor_checks
    seen: dict[int, str] = {}
    for pattern, captures in cursor.matches(root):
        if pattern in ancestors and not query_predicates.passes(ancestors[pattern], captures, seen):
            continue
        module = captures.get("import.module")
        if module:
            source = (module[0].text or b"").decode("utf-8", "replace")
            for node in captures.get("import.name", ()):
                imports.append(((node.text or b"").decode("utf-8", "replace"), source))
            if "import.star" in captures:  # `from m import *`, `export * from 'm'`
                imports.append((STAR_IMPORT, source))
        for cap, nodes in captures.items():
            if cap.startswith("name.reference."):
                code = _KIND_CODE.get(cap[15:], 0)
                for node in nodes:
                    refs[node.start_byte] = (node.end_byte, code)
            elif cap.startswith("name.definition."):
                kind = cap[16:]
                outer = captures.get("definition." + kind)
                for name_node in nodes:
                    def_node = outer[0] if outer else (name_node.parent or name_node)
                    key = (def_node.start_byte, def_node.end_byte, name_node.start_byte)
                    previous = defs.get(key)
                    # One definition node yields one symbol, of its most specific kind.
                    if previous is None or _KIND_PRIORITY.get(kind, 1) > _KIND_PRIORITY.get(previous[1], 1):
                        defs[key] = ((name_node.text or b"").decode("utf-8", "replace"), kind, def_node, name_node)
    return defs, refs, not cursor.did_exceed_match_limit


def _backfill_references(
    compiled: CompiledLanguage, root: Any, match_limit: int, clock: _Clock, defs: _Defs, refs: _Refs
) -> None:
    """A grammar whose query lists no references: every identifier that names no definition."""
    from tree_sitter import QueryCursor

    if compiled.identifier_query is None:
        return
    back = QueryCursor(compiled.identifier_query, match_limit=match_limit, timeout_micros=clock.query_budget())
    def_names = {key[2] for key in defs}
    for node, _ in _iter_captures(back, root):
        if node.start_byte not in def_names and node.start_byte not in refs:
            refs[node.start_byte] = (node.end_byte, 0)


def _source_order(item: tuple[tuple[int, int, int], Any]) -> tuple[int, int, int]:
    """Definitions by start, an enclosing one before those it holds (the order of :func:`_symbols`)."""
    (start, end, name_start), _ = item
    return (start, -end, name_start)


def _first_definitions(defs: _Defs, keep: int) -> tuple[_Defs, int]:
    """The first ``keep`` definitions in source order, and the 0-based line where the first one
    left out starts. A generated file can hold a definition per line (90,000 in a file under
    ``max_file_bytes``): each one kept costs its signature, its doc line, the cache, the graph and
    the ranking, so past the cap they are dropped before any of that."""
    ordered = sorted(defs.items(), key=_source_order)
    first_out = ordered[keep][1][2]  # its definition node
    return dict(ordered[:keep]), first_out.start_point[0]


def _symbols(
    defs: _Defs, source: bytes, lines: list[bytes], max_signature_lines: int, docstrings: bool
) -> list[Symbol]:
    """Symbols in source order, each with the index of its innermost enclosing definition and
    its one-line documentation (:mod:`.doc_comments`)."""
    ordered = sorted(defs.items(), key=_source_order)
    symbols: list[Symbol] = []
    stack: list[tuple[int, int]] = []  # (end_byte, index) of open enclosing definitions
    for (_start, end_byte, _name_start), (name, kind, def_node, name_node) in ordered:
        while stack and stack[-1][0] < end_byte:
            stack.pop()
        span = _span(def_node)
        # A def nested inside a def's span has that def as parent (same span = sibling).
        while stack and symbols[stack[-1][1]].span == span:
            stack.pop()
        parent = stack[-1][1] if stack else -1
        name_line, name_col = name_node.start_point
        symbols.append(
            Symbol(
                name=name,
                kind=kind,
                span=span,
                name_line=name_line,
                name_col=name_col,
                signature=_signature(lines, def_node, kind, name_node, max_signature_lines),
                parent=parent,
                doc=doc_line(source, lines, def_node, docstrings),
            )
        )
        stack.append((end_byte, len(symbols) - 1))
    return symbols


def _file_tags(
    symbols: list[Symbol],
    refs: _Refs,
    source: bytes,
    lines: list[bytes],
    complete: bool,
    imports: tuple[tuple[str, str], ...] = (),
    words: str = "",
) -> FileTags:
    starts = sorted(refs)
    names = [source[start : refs[start][0]].decode("utf-8", "replace") for start in starts]
    # Each name's line and column (in bytes, as tree-sitter counts them) from where its line
    # starts: a node's start_point made a Python tuple per reference (350,000 in the standard
    # library), this one C-level pass over the lines and a bisect each.
    line_starts = list(accumulate(map(_PLUS_ONE, map(len, lines)), initial=0))
    positions = array("I")
    for start in starts:
        line = bisect_right(line_starts, start) - 1
        positions.append(line)
        positions.append(start - line_starts[line])
    counted = encode_words(name_counts(symbols, names))
    return FileTags(
        tuple(symbols),
        tuple(names),
        positions.tobytes(),
        bytes([refs[start][1] for start in starts]),
        len(lines),
        complete,
        imports,
        words,
        name_words=counted,
    )


#: A line's length plus its newline (the start of the next line).
_PLUS_ONE = (1).__add__


def _iter_captures(cursor: Any, root: Any) -> Iterable[tuple[Any, str]]:
    for name, nodes in cursor.captures(root).items():
        for node in nodes:
            yield node, name


def _span(node: Any) -> Span:
    (sl, sc), (el, ec) = node.start_point, node.end_point
    return Span(sl, sc, el, ec)


# --- parallel cold parse ------------------------------------------------------------

#: Seconds a worker is waited for past the parse deadline plus one file's limit before it is
#: killed: workers start no file after the deadline and stop each at its limit; this only covers
#: the last frame's trip through the pipe.
WORKER_DEADLINE_GRACE = 1.0

NO_DEADLINE = math.inf


def parse_serial(
    jobs: Sequence[tuple[str, str, bytes]],
    registry: LanguageRegistry,
    options: ParseOptions,
    deadline: float = NO_DEADLINE,
    first_in_full: bool = True,
    kept: KeptTrees | None = None,
) -> Iterator[tuple[str, ParseOutcome]]:
    """Parse in order; a file not started by ``deadline`` (``time.time()``) is :data:`DEFERRED`.

    A file started before the deadline runs to its own limit (at most the deadline's length, see
    :meth:`ParseOptions.from_settings`): its outcome is the file's, so it is cached, and every map
    settles at least one waiting file. Cutting it at the deadline instead would leave a
    pathological file waiting forever behind the small files an agent edits between maps. With
    ``first_in_full`` the first file is parsed even past the deadline (a worker slow to start).
    """
    for index, (path, language, data) in enumerate(jobs):
        if time.time() >= deadline and not (index == 0 and first_in_full):
            yield path, DEFERRED
            continue
        try:
            compiled = registry.compiled(language)
            if notebooks.is_notebook(path):
                yield path, parse_notebook(compiled, data, options)
            else:
                yield path, parse_file(compiled, data, options, kept, path)
        except Exception as exc:  # noqa: BLE001 - one bad file must not take the others down
            yield path, ParseOutcome(None, (("parse_error", f"{type(exc).__name__}: {exc}"),))


def _read_frames(stream: IO[bytes], sink: queue.Queue[Any]) -> None:
    try:
        while True:
            header = stream.read(8)
            if len(header) < 8:
                break
            (size,) = struct.unpack("<Q", header)
            sink.put(pickle.loads(stream.read(size)))  # noqa: S301 - our own worker's pipe
    except Exception as exc:  # noqa: BLE001 - a dying worker: report, the parent re-parses what is missing
        sink.put(exc)
    finally:
        sink.put(None)


def worker_command() -> tuple[list[str], str]:
    """The argv and cwd of a parse worker.

    Isolated (``-I``: no cwd, no ``PYTHON*`` variables, no user site on ``sys.path``) and started
    in our own directory, so a repository mapped from inside (``cd repo && hybridmap map``) cannot
    shadow our package or the standard library. The caller's ``sys.path`` is passed on explicitly,
    minus the cwd and relative entries, plus our package's parent last, so an editable install, a
    normal install and a checkout on ``PYTHONPATH`` all import the same hybridmap as the caller.
    """
    here = str(Path(__file__).resolve().parents[2])
    try:
        cwd = os.getcwd()
    except OSError:  # the cwd was deleted: nothing to drop
        cwd = ""
    path = [p for p in sys.path if os.path.isabs(p) and p != cwd]
    if here not in path:
        path.append(here)  # last: never ahead of the standard library
    boot = "import sys; sys.path[:] = sys.argv[1:]; from hybridmap.sources.parse_worker import main; main()"
    return [sys.executable, "-I", "-c", boot, *path], here


def worker_sandbox(argv: Sequence[str], config_dirs: Sequence[str], query_dirs: Sequence[str]) -> Policy:
    """A parse worker's sandbox: it reads our interpreter, its import path and the grammar and
    query directories, and nothing of the repository (the files come on stdin); it writes,
    runs and connects to nothing. A grammar bug that a hostile file triggers stays inside."""
    imports = [p for p in argv[3:] if os.path.isabs(p)]
    return base_policy({}).extended(read=[*imports, *config_dirs, *query_dirs])


def parse_many(
    jobs: Sequence[tuple[str, str, bytes]],
    registry: LanguageRegistry,
    *,
    workers: int,
    config_dirs: Sequence[str],
    query_dirs: Sequence[str],
    options: ParseOptions,
    deadline: float = NO_DEADLINE,
    stats: dict[str, float] | None = None,
    kept: KeptTrees | None = None,
) -> Generator[tuple[str, ParseOutcome], None, None]:
    """Parse ``(path, language, bytes)`` jobs; yields ``(path, outcome)``.

    Smallest files first, so a ``deadline`` (``time.time()``) leaves out the fewest files; what it
    leaves out comes back :data:`DEFERRED`. With ``workers <= 1`` everything runs in-process.
    Otherwise jobs are dealt to worker processes by size; anything a worker fails to return (it
    crashed, or could not start) is parsed in-process afterwards (counted in
    ``stats["parse_fallback_files"]``), so no file is lost. Files parsed in-process are parsed
    from their trees in ``kept``, and keep theirs there (:mod:`.reparse`).
    """
    counts = stats if stats is not None else {}
    counts["parse_fallback_files"] = 0.0
    if workers <= 1 or len(jobs) < 2:
        yield from parse_serial(sorted(jobs, key=lambda j: len(j[2])), registry, options, deadline, kept=kept)
        return
    done: set[str] = set()
    for item in _parse_in_workers(jobs, workers, config_dirs, query_dirs, options, deadline):
        done.add(item[0])
        yield item
    missing = sorted((job for job in jobs if job[0] not in done), key=lambda j: len(j[2]))
    if time.time() < deadline:
        counts["parse_fallback_files"] = float(len(missing))
    yield from parse_serial(missing, registry, options, deadline, first_in_full=False)


def _parse_in_workers(
    jobs: Sequence[tuple[str, str, bytes]],
    workers: int,
    config_dirs: Sequence[str],
    query_dirs: Sequence[str],
    options: ParseOptions,
    deadline: float,
) -> Iterator[tuple[str, ParseOutcome]]:
    # Dealt largest first, so the shares' totals are even; each share is parsed smallest first.
    ordered = sorted(jobs, key=lambda j: len(j[2]), reverse=True)
    shares = [ordered[i::workers][::-1] for i in range(workers)]
    results: queue.Queue[Any] = queue.Queue()
    procs: list[subprocess.Popen[bytes]] = []
    argv, cwd = worker_command()
    policy = worker_sandbox(argv, config_dirs, query_dirs)
    # A file started just before the deadline may run its whole limit past it (see parse_serial).
    hard_stop = deadline + options.timeout_seconds + WORKER_DEADLINE_GRACE
    try:
        for share in shares:
            payload = pickle.dumps(
                {
                    "jobs": share,
                    "config_dirs": list(config_dirs),
                    "query_dirs": list(query_dirs),
                    "options": options,
                    "deadline": deadline,
                },
                protocol=pickle.HIGHEST_PROTOCOL,
            )
            try:
                with confined(policy) as start:
                    proc = subprocess.Popen(
                        argv,
                        cwd=cwd,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        preexec_fn=start.preexec,
                    )
            except (OSError, subprocess.SubprocessError):
                continue
            procs.append(proc)
            threading.Thread(target=_read_frames, args=(proc.stdout, results), daemon=True).start()
            threading.Thread(target=_feed, args=(proc, payload), daemon=True).start()
        open_streams = len(procs)
        while open_streams:
            try:
                item = results.get(timeout=None if hard_stop == NO_DEADLINE else max(0.0, hard_stop - time.time()))
            except queue.Empty:  # past the deadline, a first file's limit and the grace: deferred
                return
            if item is None:
                open_streams -= 1
            elif isinstance(item, tuple):
                yield item
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _feed(proc: subprocess.Popen[bytes], payload: bytes) -> None:
    if proc.stdin is None:  # started with stdin=PIPE
        raise RuntimeError("the parse worker has no stdin pipe")
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:
        pass


def default_workers(setting: int) -> int:
    if setting > 0:
        return setting
    return max(1, min(8, os.cpu_count() or 1))
