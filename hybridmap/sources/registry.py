"""The refining sources a map may use, by name: where a new source registers.

Adding a source is one module that implements :class:`~.base.SymbolSource` (subclass
:class:`~.base.PassiveSource` if it only reads something) plus one entry in
:data:`REFINING_SOURCES`: a factory that builds it from the :class:`SourceContext`, or returns
``None`` when its inputs are missing (then it is simply not used). The ``source_precedence``
setting picks the sources and their order; tree-sitter is always the base.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..languages.registry import LanguageRegistry
from ..model import Diagnostic
from ..settings import Settings
from ..store.cache import Cache
from .base import SymbolSource


@dataclass(frozen=True, slots=True)
class SourceContext:
    """What a source may be built from (one per repository map)."""

    root: Path
    settings: Settings
    registry: LanguageRegistry
    cache: Cache
    environ: Mapping[str, str] | None = None
    start_servers: bool = True
    """False for a one-shot call that does not wait for servers: start none."""


SourceFactory = Callable[[SourceContext], SymbolSource | None]


def _lsp(context: SourceContext) -> SymbolSource:
    from .lsp.source import LspSource

    return LspSource(
        context.registry, context.root, context.cache, context.settings, context.environ, context.start_servers
    )


def _scip(context: SourceContext) -> SymbolSource | None:
    if not context.settings.scip_index:
        return None  # no index configured: the source is off (and its modules are not imported)
    from .scip.loaded import configured_index
    from .scip.source import ScipSource

    path = configured_index(context.root, context.settings)
    return None if path is None else ScipSource(context.root, context.settings, path)


#: name -> factory. Names are the provenance the source writes on its symbols and edges.
REFINING_SOURCES: dict[str, SourceFactory] = {"lsp": _lsp, "scip": _scip}


def build_sources(context: SourceContext) -> tuple[list[SymbolSource], list[Diagnostic]]:
    """The refining sources of ``source_precedence`` that can run here, best first."""
    sources: list[SymbolSource] = []
    problems: list[Diagnostic] = []
    for name in dict.fromkeys(context.settings.source_precedence):
        factory = REFINING_SOURCES.get(name)
        if factory is None:
            known = ", ".join(sorted(REFINING_SOURCES))
            problems.append(Diagnostic(".", "unknown_source", f"source_precedence names '{name}'; known: {known}"))
            continue
        source = factory(context)
        if source is not None:
            sources.append(source)
    return sources, problems
