"""hybridmap's own tree-sitter query predicate, and the check that a query names no other.

``(#hm-ancestors? @capture "REGEX")``: a match counts only when, for each node of the capture,
the types of its ancestors from the root down to its parent, joined by ``/``
(``module/if_statement/block``), fully match REGEX. A query cannot say "at module level or in a
module-level ``if``" or "not inside a class body" but with one pattern per parent, and tree-sitter
compiles an alternation of parents slowly: as one pattern per parent, C++'s free functions,
prototypes and globals took 973 ms to compile and Python's definitions 84 ms; with this predicate
359 ms and 9 ms, and the tags are the same on every file of two C++ projects, ``/usr/include``
and six Python code bases (7,634 files; ``docs/benchmarks.md``, "Compiling the tag queries").
The compile is one call that holds the GIL: it stalled an agent's event loop during a first map.

A predicate tree-sitter does not know is handed to Python, and one hybridmap does not know would
silently keep every match: :func:`check` refuses a query that names one.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tree_sitter import Node

ANCESTORS = "hm-ancestors?"

#: The predicates py-tree-sitter 0.25 evaluates itself (``docs/adding-a-language.md``); any other
#: (``#strip!``, ``#select-adjacent!``) reaches :func:`evaluate`.
BUILT_IN = frozenset(
    {
        "eq?",
        "not-eq?",
        "any-eq?",
        "any-not-eq?",
        "match?",
        "not-match?",
        "any-match?",
        "any-not-match?",
        "any-of?",
        "not-any-of?",
        "is?",
        "is-not?",
        "set!",
    }
)

_PREDICATE = re.compile(r"\(#([\w.-]+[?!])")
_ANCESTORS_CALL = re.compile(r'\(#hm-ancestors\?\s+@[\w.-]+\s+"((?:[^"\\]|\\.)*)"\s*\)')


def check(source: str) -> str | None:
    """What is wrong with ``source``'s predicates (one not known, a regular expression of
    ``#hm-ancestors?`` that does not compile or a call of the wrong shape), or None."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(";"))
    for name in _PREDICATE.findall(code):
        if name not in BUILT_IN and name != ANCESTORS:
            return f"unknown predicate #{name} (hybridmap adds only #{ANCESTORS})"
    calls = _ANCESTORS_CALL.findall(code)
    if len(calls) != code.count("#" + ANCESTORS):
        return f'#{ANCESTORS} takes one capture and one string: (#{ANCESTORS} @capture "REGEX")'
    for pattern in calls:
        try:
            _regex(pattern)
        except re.error as exc:
            return f'#{ANCESTORS} "{pattern}": {exc}'
    return None


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def ancestor_types(node: Any) -> str:
    """The types of ``node``'s ancestors, from the root down to its parent, joined by ``/``."""
    types = []
    parent = node.parent
    while parent is not None:
        types.append(parent.type)
        parent = parent.parent
    return "/".join(reversed(types))


def evaluate(
    predicate: str,
    args: list[tuple[str, Literal["capture", "string"]]],
    pattern_index: int,
    captures: dict[str, list[Node]],
) -> bool:
    """tree-sitter's callback for the predicates it does not know (``QueryCursor.matches``):
    ``#hm-ancestors?`` (the only one :func:`check` lets through)."""
    if predicate != ANCESTORS:
        return False
    (capture, _), (pattern, _) = args
    regex = _regex(pattern)
    return all(regex.fullmatch(ancestor_types(node)) for node in captures.get(capture, ()))
