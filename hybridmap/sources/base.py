"""The symbol-source seam: what every source of symbols and edges implements and hands the merge.

A source is one object per repository, named (its name is the provenance it writes on every
symbol and edge), that refines the base view of the files:

* the **base source** is tree-sitter (:class:`~.static_index.TreeSitterSource`): it answers for
  every file at once and is the only one that lists *references*, so it always comes first;
* **refining sources** (language servers: :class:`~.lsp.source.LspSource`; a SCIP index:
  :class:`~.scip.source.ScipSource`) describe some files better (``tags``: authoritative symbol
  lists, ``details``) and resolve some uses to the files they really mean (``resolved``).

Every source implements :class:`SymbolSource`; :class:`PassiveSource` gives the no-op defaults,
so a source that only reads something (an index, a database) writes one method, :meth:`view`.
``hybridmap/sources/registry.py`` names the sources a map may use and builds them;
:func:`hybridmap.pipeline.merge.merge_views` combines their views in the configured precedence. Nothing
downstream knows which source said what except through the provenance it wrote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..model import Diagnostic, FileTags, HoverKey, Pair, ServerReport

if TYPE_CHECKING:
    from ..workspace.state import ChangeSet, Snapshot

__all__ = ["HoverKey", "Pair", "PassiveSource", "SourceRequest", "SourceView", "SymbolSource"]


@dataclass(frozen=True, slots=True)
class SourceView:
    """What one source knows now about the current snapshot.

    ``tags`` maps a relative path to its :class:`FileTags` (a file absent from it was not
    described by this source); ``resolved`` maps (source path, identifier) to the repository
    files its uses resolve to (an empty set: only outside the repository). ``version`` changes
    whenever ``tags`` or ``resolved`` do, so later stages can tell a view they have seen.
    """

    name: str
    tags: Mapping[str, FileTags] = field(default_factory=dict)
    resolved: Mapping[Pair, frozenset[str]] = field(default_factory=dict)
    details: Mapping[HoverKey, str] = field(default_factory=dict)
    """(path, name line, name column) -> a one-line declaration, for symbols with no detail."""
    diagnostics: tuple[Diagnostic, ...] = ()
    stats: Mapping[str, float] = field(default_factory=dict)
    version: int = 0
    keys: Mapping[str, str] = field(default_factory=dict)
    """path -> what its tags were made from, when they are a parse of its content alone (the
    base source: the cache key of content, grammar, query and options); the lexical models kept
    between processes name each file's words by it (:mod:`hybridmap.store.lexicon`)."""


@dataclass(frozen=True, slots=True)
class SourceRequest:
    """What a map asks of the refining sources before it is built."""

    wait: float
    """Seconds the caller lets sources work (start servers, answer) before the map is built."""
    focus: tuple[str, ...] = ()
    """Files whose answers matter first: chat files, then the previous map's files."""
    definers: Mapping[str, int] = field(default_factory=dict)
    """identifier -> number of files defining it (which uses are ambiguous enough to resolve)."""
    generation: int = 0
    """Changes whenever the base tags do (sources re-plan their work then)."""


@runtime_checkable
class SymbolSource(Protocol):
    """A source of symbols and edges (see the module docstring)."""

    name: str

    async def update(self, snapshot: Snapshot, changes: ChangeSet, base: SourceView, request: SourceRequest) -> None:
        """Take the repository's new snapshot and what changed since the last one; start work.

        Called before every map; may wait up to ``request.wait`` seconds for answers."""
        ...

    def view(self, snapshot: Snapshot, base: SourceView) -> SourceView:
        """What this source knows now about ``snapshot`` (``base``: the tree-sitter view)."""
        ...

    async def follow_up(self, shown: Sequence[str], undescribed: Sequence[HoverKey], deadline: float) -> bool:
        """After a map was built: learn about the files it shows and the symbols it left
        undescribed, until ``deadline`` (``time.monotonic()``); True when :meth:`view` changed."""
        ...

    def after_map(
        self, snapshot: Snapshot, base: SourceView, request: SourceRequest, undescribed: Sequence[HoverKey] = ()
    ) -> None:
        """A map was delivered without waiting: background work may start now (``undescribed``:
        the shown symbols no source has described yet)."""
        ...

    def reports(self, languages: Sequence[str]) -> dict[str, ServerReport]:
        """Per-language state of what this source runs (servers); empty when it runs nothing."""
        ...

    def health(self) -> list[Diagnostic]:
        """Problems to say on the map (a server alive but timing out, a stale index...)."""
        ...

    async def aclose(self) -> None:
        """Release what the source holds (processes, files)."""
        ...


class PassiveSource:
    """Defaults for a source that does no background work: it only answers :meth:`view`."""

    name = "passive"

    async def update(self, snapshot: Snapshot, changes: ChangeSet, base: SourceView, request: SourceRequest) -> None:
        return None

    def view(self, snapshot: Snapshot, base: SourceView) -> SourceView:  # pragma: no cover - overridden
        raise NotImplementedError

    async def follow_up(self, shown: Sequence[str], undescribed: Sequence[HoverKey], deadline: float) -> bool:
        return False

    def after_map(
        self, snapshot: Snapshot, base: SourceView, request: SourceRequest, undescribed: Sequence[HoverKey] = ()
    ) -> None:
        return None

    def reports(self, languages: Sequence[str]) -> dict[str, ServerReport]:
        return {}

    def health(self) -> list[Diagnostic]:
        return []

    async def aclose(self) -> None:
        return None
