"""Several roots as one map's inputs: each root's snapshot and views, their paths prefixed by the
root's name, made one. Pure.

A map over several roots (:mod:`hybridmap.api.roots`) keeps one map per root (its own trust,
settings, ignore rules, servers) and ranks them together: the base views are joined (so names
used in one root link to definitions in another, as name matches), the refining views of the same
source are joined too. A use a root's server resolved to nothing inside *its* root may well be in
another root, so such an empty resolution is left out of the joined view (name matching stands
for it); a use resolved inside its root keeps its targets. Co-change is per repository history
and is not joined (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ...model import Diagnostic, ServerReport
from ...sources.base import SourceView
from ...workspace.state import FileState, Snapshot


def prefixed(name: str, path: str) -> str:
    """``path`` of root ``name`` as the joined map spells it."""
    return f"{name}/{path}" if path not in ("", ".") else name


def _diagnostic(name: str, diagnostic: Diagnostic) -> Diagnostic:
    return replace(diagnostic, path=prefixed(name, diagnostic.path))


def join_snapshots(snapshots: Mapping[str, Snapshot], root: Path) -> Snapshot:
    """One snapshot of every root's files (``root``: what the joined map names as its root)."""
    files: dict[str, FileState] = {}
    special: list[str] = []
    diagnostics: list[Diagnostic] = []
    stats: dict[str, float] = {}
    for name, snapshot in snapshots.items():
        for path, state in snapshot.files.items():
            if state.diagnostics:
                state = replace(state, diagnostics=tuple(_diagnostic(name, d) for d in state.diagnostics))
            files[prefixed(name, path)] = state
        special.extend(prefixed(name, p) for p in snapshot.special_files)
        diagnostics.extend(_diagnostic(name, d) for d in snapshot.diagnostics)
        for key, value in snapshot.stats.items():
            stats[key] = stats.get(key, 0.0) + float(value)
    generation = hash(tuple((name, s.generation, id(s)) for name, s in snapshots.items()))
    return Snapshot(root, files, tuple(special), tuple(diagnostics), stats, generation)


def join_views(views: Mapping[str, SourceView]) -> SourceView:
    """One view of the same source over every root (its name is the first view's)."""
    first = next(iter(views.values()))
    tags = {prefixed(name, path): t for name, view in views.items() for path, t in view.tags.items()}
    resolved = {
        (prefixed(name, src), ident): frozenset(prefixed(name, target) for target in targets)
        for name, view in views.items()
        for (src, ident), targets in view.resolved.items()
        if targets  # resolved to nothing in its root: perhaps in another; name matching decides
    }
    details = {
        (prefixed(name, path), line, col): text
        for name, view in views.items()
        for (path, line, col), text in view.details.items()
    }
    diagnostics = tuple(_diagnostic(name, d) for name, view in views.items() for d in view.diagnostics)
    stats: dict[str, float] = {}
    for view in views.values():
        for key, value in view.stats.items():
            stats[key] = stats.get(key, 0.0) + float(value)
    version = hash(tuple((name, view.version, id(view.tags)) for name, view in views.items()))
    return SourceView(first.name, tags, resolved, details, diagnostics, stats, version)


def join_servers(servers: Mapping[str, Mapping[str, ServerReport]]) -> dict[str, ServerReport]:
    """Each root's server reports, keyed ``ROOT/LANGUAGE``."""
    return {
        prefixed(name, language): report for name, reports in servers.items() for language, report in reports.items()
    }
