"""hybridmap's own tree-sitter query predicate, and the check that a query names no other.

``(#hm-ancestors? @capture "REGEX")``: a match counts only when, for each node of the capture,
the types of its ancestors from the root down to its parent, joined by ``/``
(``module/if_statement/block``), fully match REGEX. A query cannot say "at module level or in a
module-level ``if``" or "not inside a class body" but with one pattern per parent, and tree-sitter
compiles an alternation of parents slowly: as one pattern per parent, C++'s free functions,
prototypes and globals took 0.8-1.0 s to compile and Python's definitions 80-100 ms; with this
predicate about a third and a tenth of that, and the tags are the same on every file compared
(``docs/benchmarks.md``, "Compiling the tag queries").
The compile is one call that holds the GIL: it stalled an agent's event loop during a first map.

A predicate tree-sitter does not know is kept, unevaluated, with the pattern: ``#hm-ancestors?``
is applied to the matches afterwards (:func:`ancestor_checks`, :func:`passes`), and any other
would silently keep every match, so :func:`check` refuses a query that names one.
"""

from __future__ import annotations

import functools
import re
from typing import Any

ANCESTORS = "hm-ancestors?"

#: The predicates py-tree-sitter 0.25 evaluates itself (``docs/adding-a-language.md``); any other
#: (``#strip!``, ``#select-adjacent!``) it leaves unevaluated: every match would pass.
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
#: ``(#hm-ancestors? @capture "REGEX")``: the capture and the expression, read as written.
_ANCESTORS_ARGS = re.compile(r'\(#hm-ancestors\?\s+@([\w.-]+)\s+"((?:[^"\\]|\\.)*)"\s*\)')


def check(source: str) -> str | None:
    """What is wrong with ``source``'s predicates (one not known, a regular expression of
    ``#hm-ancestors?`` that does not compile or a call of the wrong shape), or None."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(";"))
    for name in _PREDICATE.findall(code):
        if name not in BUILT_IN and name != ANCESTORS:
            return f"unknown predicate #{name} (hybridmap adds only #{ANCESTORS})"
    calls = _ANCESTORS_ARGS.findall(code)
    if len(calls) != code.count("#" + ANCESTORS):
        return f'#{ANCESTORS} takes one capture and one string: (#{ANCESTORS} @capture "REGEX")'
    for _, pattern in calls:
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


#: Per pattern index: the (capture, regular expression) pairs its ``#hm-ancestors?`` name.
AncestorChecks = dict[int, tuple[tuple[str, "re.Pattern[str]"], ...]]


def ancestor_checks(query: Any, source: str) -> AncestorChecks:
    """The ``#hm-ancestors?`` of each pattern of ``query`` (compiled from ``source``), read from
    the pattern's own text. They are applied to the matches afterwards (:func:`passes`), not in
    a predicate callback: a Ctrl-C raised inside a Python callback that tree-sitter's C code
    called comes out as a ``SystemError`` with the ``KeyboardInterrupt`` lost (py-tree-sitter
    0.25), and a map would go on instead of stopping."""
    data = source.encode()
    checks: AncestorChecks = {}
    for index in range(query.pattern_count):
        text = data[query.start_byte_for_pattern(index) : query.end_byte_for_pattern(index)].decode()
        found = _ANCESTORS_ARGS.findall(text)
        if found:
            checks[index] = tuple((capture, _regex(pattern)) for capture, pattern in found)
    return checks


def passes(
    checks: tuple[tuple[str, re.Pattern[str]], ...], captures: dict[str, list[Any]], seen: dict[int, str]
) -> bool:
    """Whether a match's captures meet its pattern's ``#hm-ancestors?``. ``seen`` holds the
    ancestor types already read in this tree, by node id: one definition node is offered to
    each pattern of its type (a Python ``def`` to the function and the method pattern), and
    walking its parents was about 5 % of the standard library's extraction (cProfile)."""
    for capture, regex in checks:
        for node in captures.get(capture, ()):
            types = seen.get(node.id)
            if types is None:
                types = seen[node.id] = ancestor_types(node)
            if regex.fullmatch(types) is None:
                return False
    return True
