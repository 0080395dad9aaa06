"""Which definitions a commit changed: tree-sitter spans ∩ the diff's changed lines, on both sides.

Counted kinds: functions, methods, constructors, classes (and structs,
interfaces, enums, traits, impls, macros). A changed line counts for the
*innermost* such definition containing it, so editing a method's body changes
that method, not also its class:

* an old-side line (removed or rewritten) counts for the innermost definition
  of the parent that contains it;
* a new-side line (added or rewritten) counts for the innermost definition of
  the commit's version that contains it, carried back to the parent by its
  qualified name (the names of its enclosing definitions, then its own). A
  definition that does not exist in the parent (a new method) hands the change
  to its nearest enclosing definition that does (the class gains a method); one
  with no such ancestor (a new top-level function) changes nothing.

Only definitions of the parent are ever reported: a map of the parent can only
show those. Lines added to the end of a function body land in it on the new
side, which an old-side-only rule (insertion between two old lines) would miss.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...languages.registry import LanguageRegistry
from ...model import FileStatus, FileTags, Symbol
from ...settings import Settings
from ...sources.treesitter import extract_tags
from ...workspace.walk import HEAD_BYTES, classify
from .diffs import Hunk

#: Definition kinds whose bodies a commit can touch (variables, fields and constants are not counted).
CHANGED_DEFINITION_KINDS = frozenset(
    {"function", "method", "constructor", "class", "interface", "struct", "enum", "trait", "implementation", "macro"}
)


@dataclass(frozen=True, slots=True, order=True)
class ChangedDefinition:
    path: str
    name: str
    kind: str
    line: int
    """1-based line of the definition's name in the parent."""

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "name": self.name, "kind": self.kind, "line": self.line}


def _innermost(symbols: tuple[Symbol, ...], line: int) -> int:
    """Index of the smallest counted definition whose span covers 0-based ``line``, or -1."""
    best = -1
    for i, sym in enumerate(symbols):
        span = sym.span
        if (
            sym.kind in CHANGED_DEFINITION_KINDS
            and span.start_line <= line <= span.end_line
            and (
                best < 0
                or (span.end_line - span.start_line) < (symbols[best].span.end_line - symbols[best].span.start_line)
            )
        ):
            best = i
    return best


def _qualified(symbols: tuple[Symbol, ...], index: int) -> tuple[str, ...]:
    names = []
    while index >= 0:
        names.append(symbols[index].name)
        index = symbols[index].parent
    return tuple(reversed(names))


def changed_definitions(
    path: str, old: FileTags, new: FileTags | None, hunks: Iterable[Hunk]
) -> tuple[ChangedDefinition, ...]:
    """The parent's definitions in ``path`` that the hunks change (see the module docstring)."""
    old_symbols = old.symbols
    by_name: dict[tuple[str, ...], int] = {}
    for i in range(len(old_symbols)):
        by_name.setdefault(_qualified(old_symbols, i), i)
    touched: set[int] = set()
    for hunk in hunks:
        for line in hunk.old_lines:
            i = _innermost(old_symbols, line - 1)
            if i >= 0:
                touched.add(i)
        if new is None:
            continue
        for line in hunk.new_lines:
            j = _innermost(new.symbols, line - 1)
            while j >= 0:
                found = by_name.get(_qualified(new.symbols, j))
                if found is not None:
                    if old_symbols[found].kind in CHANGED_DEFINITION_KINDS:
                        touched.add(found)
                    break
                j = new.symbols[j].parent
    return tuple(
        sorted(
            ChangedDefinition(path, old_symbols[i].name, old_symbols[i].kind, old_symbols[i].name_line + 1)
            for i in touched
        )
    )


def parse_source(registry: LanguageRegistry, settings: Settings, path: str, data: bytes) -> FileTags | None:
    """Tags of one file's bytes, read and parsed as the map would; None if it would be skipped."""
    language = registry.language_for(path, lambda _: data[:HEAD_BYTES])
    if language is None:
        return None
    read = classify(data, settings)
    if read.status is not FileStatus.OK or len(read.data) > settings.max_file_bytes:
        return None
    try:
        return extract_tags(
            registry.compiled(language),
            read.data,
            max_signature_lines=settings.max_signature_lines,
            match_limit=settings.query_match_limit,
        )
    except Exception:  # noqa: BLE001 - a file the parser cannot handle: only its old side counts
        return None
