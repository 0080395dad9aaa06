"""Which definitions a commit changed: tree-sitter spans of the parent ∩ the diff's old-side lines.

A changed line counts for the *innermost* function, method, class (or struct,
interface, enum, trait, impl, macro) whose span contains it, so editing a
method's body changes that method, not also its class. A pure insertion counts
for the innermost such definition that contains both neighbouring old lines
(a line added inside a body); one added between two definitions changes neither.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model import FileTags, Symbol
from .diffs import Hunk

#: Definition kinds whose bodies a commit can touch (variables, fields and constants are not counted).
CHANGED_DEFINITION_KINDS = frozenset(
    {"function", "method", "constructor", "class", "interface", "struct", "enum", "trait",
     "implementation", "macro"}
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


def _innermost(symbols: Iterable[Symbol], first: int, last: int) -> Symbol | None:
    """The smallest counted definition whose span covers 0-based lines ``first``..``last``."""
    best: Symbol | None = None
    for sym in symbols:
        span = sym.span
        if sym.kind in CHANGED_DEFINITION_KINDS and span.start_line <= first and last <= span.end_line:
            if best is None or (span.end_line - span.start_line) < (best.span.end_line - best.span.start_line):
                best = sym
    return best


def changed_definitions(path: str, tags: FileTags, hunks: Iterable[Hunk]) -> tuple[ChangedDefinition, ...]:
    touched: dict[tuple[int, int, str], Symbol] = {}
    for hunk in hunks:
        after = hunk.insertion_after
        ranges = [(after - 1, after)] if after is not None else [(line - 1, line - 1) for line in hunk.old_lines]
        for first, last in ranges:
            sym = _innermost(tags.symbols, first, last)
            if sym is not None:
                touched[(sym.span.start_line, sym.name_line, sym.name)] = sym
    return tuple(sorted(ChangedDefinition(path, s.name, s.kind, s.name_line + 1) for s in touched.values()))
