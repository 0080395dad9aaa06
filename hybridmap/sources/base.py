"""The symbol-source abstraction: what every source of symbols hands the merge step.

Two sources implement it: the tree-sitter source (``static_index.TreeSitterSource``:
every file, at once) and the language-server source (``lsp.source.LspSource``:
the files and names its servers have answered about so far). ``merge.py``
combines their results; nothing downstream knows which source said what except
through the provenance on each symbol and edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ..model import Diagnostic, FileTags


@dataclass(frozen=True, slots=True)
class SourceResult:
    """Per-file tags from one source, plus what went wrong.

    ``tags`` maps a relative path to its :class:`FileTags`; a file absent from it
    was not answered by this source. ``stats`` holds counters for timings and
    benchmarks (files parsed, cache hits...).
    """

    tags: dict[str, FileTags]
    languages: dict[str, str]
    diagnostics: tuple[Diagnostic, ...] = ()
    stats: dict[str, float] = field(default_factory=dict)
    special_files: tuple[str, ...] = ()
    shas: dict[str, str] = field(default_factory=dict)
    """sha256 of the content each path's tags were made from (cache keys for later sources)."""
    resolved: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    """(source path, identifier) → the files a server resolved those uses to (empty: outside
    the repository). Such pairs replace their name-matched edges in the graph."""
    details: dict[tuple[str, int, int], str] = field(default_factory=dict)
    """(path, name line, name column) → a declaration from hover, for symbols with no detail."""


class SymbolSource(Protocol):
    """A source of symbols and edges. ``base`` is the snapshot of the files every later
    source refines (``None`` for the first source, which makes it)."""

    name: str

    def snapshot(self, base: SourceResult) -> SourceResult: ...
