"""Static symbols from tree-sitter tag queries.

:func:`extract_tags` is a pure function of (compiled language, bytes): it is
what the cache stores and what parse workers run. :func:`parse_many` fans it
out over worker processes for a cold index, because py-tree-sitter holds the
GIL for much of a parse (two threads measured 1.25x, two processes ~2x).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ..languages import CompiledLanguage, LanguageRegistry
from ..model import FileTags, Reference, Span, Symbol

#: Node types that hold a definition's body when the grammar has no ``body`` field.
_BODY_TYPES = frozenset(
    {
        "block", "class_body", "declaration_list", "field_declaration_list",
        "compound_statement", "statement_block", "enum_body", "interface_body",
        "enumerator_list", "object_type", "body_statement", "do_block",
        "function_body", "class_declaration_body", "struct_body", "trait_body",
        "impl_body", "module_body", "enum_class_body", "protocol_body",
    }
)
#: Kinds whose bodiless form still deserves its full (multi-line) header.
_CALLABLE_KINDS = frozenset({"function", "method", "constructor", "macro"})


def _body_of(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        ctype = child.type
        if ctype in _BODY_TYPES or ctype.endswith("_body"):
            return child
    return None


def _signature(lines: list[bytes], node: Any, kind: str, name_line: int, max_lines: int) -> str:
    start = node.start_point[0]
    body = _body_of(node)
    if body is not None and body.start_point[0] >= start:
        # The header ends with the last non-comment token before the body; a body
        # (Python block, Allman brace) on a later line is not part of it.
        prev = body.prev_sibling
        while prev is not None and prev.type == "comment":
            prev = prev.prev_sibling
        end = prev.end_point[0] if prev is not None else body.start_point[0]
    elif kind in _CALLABLE_KINDS:
        end = node.end_point[0]
    else:
        end = max(name_line, start)
    end = min(end, start + max_lines - 1, len(lines) - 1)
    return b"\n".join(lines[start : end + 1]).decode("utf-8", "replace").rstrip()


def extract_tags(compiled: CompiledLanguage, source: bytes, *, max_signature_lines: int = 6,
                 match_limit: int = 65_536) -> FileTags:
    """Parse ``source`` and return its definitions and references."""
    from tree_sitter import QueryCursor

    tree = compiled.parser.parse(source)
    root = tree.root_node
    lines = source.split(b"\n")
    cursor = QueryCursor(compiled.query, match_limit=match_limit)
    defs: dict[tuple[int, int, int], tuple[str, str, Any, Any]] = {}
    refs: dict[tuple[int, int], Reference] = {}
    for _pattern, captures in cursor.matches(root):
        for cap, nodes in captures.items():
            if cap.startswith("name.definition."):
                kind = cap[16:]
                outer = captures.get("definition." + kind)
                for name_node in nodes:
                    def_node = outer[0] if outer else (name_node.parent or name_node)
                    key = (def_node.start_byte, def_node.end_byte, name_node.start_byte)
                    previous = defs.get(key)
                    # One definition node yields one symbol; "method" beats a generic "function".
                    if previous is None or (kind == "method" and previous[1] == "function"):
                        defs[key] = (name_node.text.decode("utf-8", "replace"), kind, def_node, name_node)
            elif cap.startswith("name.reference."):
                kind = cap[15:]
                for node in nodes:
                    start = node.start_point
                    refs[(start[0], start[1])] = Reference(
                        node.text.decode("utf-8", "replace"), start[0], start[1], kind
                    )
    complete = not cursor.did_exceed_match_limit
    if compiled.identifier_query is not None:
        back = QueryCursor(compiled.identifier_query, match_limit=match_limit)
        def_names = {(v[3].start_point[0], v[3].start_point[1]) for v in defs.values()}
        for node, _ in _iter_captures(back, root):
            start = node.start_point
            pos = (start[0], start[1])
            if pos not in def_names and pos not in refs:
                refs[pos] = Reference(node.text.decode("utf-8", "replace"), start[0], start[1], "call")

    ordered = sorted(defs.items(), key=lambda item: (item[0][0], -item[0][1], item[0][2]))
    symbols: list[Symbol] = []
    stack: list[tuple[int, int]] = []  # (end_byte, index) of open enclosing definitions
    for (start_byte, end_byte, _), (name, kind, def_node, name_node) in ordered:
        while stack and stack[-1][0] < end_byte:
            stack.pop()
        # A def nested inside a def's span has that def as parent (same span = sibling).
        while stack and symbols[stack[-1][1]].span == _span(def_node):
            stack.pop()
        parent = stack[-1][1] if stack else -1
        name_line, name_col = name_node.start_point
        symbols.append(
            Symbol(
                name=name, kind=kind, span=_span(def_node), name_line=name_line, name_col=name_col,
                signature=_signature(lines, def_node, kind, name_line, max_signature_lines),
                parent=parent,
            )
        )
        stack.append((end_byte, len(symbols) - 1))
    references = tuple(sorted(refs.values(), key=lambda r: (r.line, r.col)))
    return FileTags(tuple(symbols), references, len(lines), complete)


def _iter_captures(cursor: Any, root: Any) -> Iterable[tuple[Any, str]]:
    for name, nodes in cursor.captures(root).items():
        for node in nodes:
            yield node, name


def _span(node: Any) -> Span:
    (sl, sc), (el, ec) = node.start_point, node.end_point
    return Span(sl, sc, el, ec)


# --- parallel cold parse ------------------------------------------------------------

_WORKER_STATE: dict[str, Any] = {}
"""Per-worker-process registry (the worker's only state; never used in the parent)."""


def _worker_init(config_dirs: Sequence[str], query_dirs: Sequence[str]) -> None:
    from pathlib import Path

    _WORKER_STATE["registry"] = LanguageRegistry.load(
        [Path(d) for d in config_dirs], [Path(d) for d in query_dirs]
    )


def _worker_parse(batch: list[tuple[str, str, bytes]], max_sig: int, match_limit: int
                  ) -> list[tuple[str, FileTags | str]]:
    registry: LanguageRegistry = _WORKER_STATE["registry"]
    out: list[tuple[str, FileTags | str]] = []
    for path, language, data in batch:
        try:
            tags = extract_tags(registry.compiled(language), data,
                                max_signature_lines=max_sig, match_limit=match_limit)
            out.append((path, tags))
        except Exception as exc:  # one bad file must not take the batch down
            out.append((path, f"{type(exc).__name__}: {exc}"))
    return out


def parse_many(
    jobs: Sequence[tuple[str, str, bytes]],
    registry: LanguageRegistry,
    *,
    workers: int,
    config_dirs: Sequence[str],
    query_dirs: Sequence[str],
    max_signature_lines: int,
    match_limit: int,
) -> Iterable[tuple[str, FileTags | str]]:
    """Parse ``(path, language, bytes)`` jobs; yields ``(path, tags or error text)``.

    With ``workers <= 1`` everything runs in-process with ``registry``.
    """
    if workers <= 1:
        yield from _parse_serial(jobs, registry, max_signature_lines, match_limit)
        return
    # Interleave by size so batches cost about the same.
    ordered = sorted(jobs, key=lambda j: len(j[2]), reverse=True)
    batch_count = workers * 8
    batches = [ordered[i::batch_count] for i in range(batch_count)]
    ctx_kwargs: dict[str, Any] = {}
    try:
        import multiprocessing

        ctx_kwargs["mp_context"] = multiprocessing.get_context("forkserver")
    except ValueError:  # pragma: no cover - platforms without forkserver
        pass
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_worker_init,
        initargs=(list(config_dirs), list(query_dirs)), **ctx_kwargs,
    ) as pool:
        futures = [pool.submit(_worker_parse, b, max_signature_lines, match_limit) for b in batches if b]
        for future in futures:
            yield from future.result()


def _parse_serial(jobs: Sequence[tuple[str, str, bytes]], registry: LanguageRegistry,
                  max_sig: int, match_limit: int) -> Iterable[tuple[str, FileTags | str]]:
    for path, language, data in jobs:
        try:
            yield path, extract_tags(registry.compiled(language), data,
                                     max_signature_lines=max_sig, match_limit=match_limit)
        except Exception as exc:
            yield path, f"{type(exc).__name__}: {exc}"


def default_workers(setting: int) -> int:
    if setting > 0:
        return setting
    return max(1, min(8, os.cpu_count() or 1))
