"""Private definitions matter less to other files: Go's ``privateThing`` under ``PublicThing``.

A definition the language's convention keeps private (:mod:`hybridmap.languages.visibility`: a leading
underscore in Python, a lowercase first letter in Go, no ``export`` in TypeScript, no ``pub`` in
Rust, ``private``/no ``public`` in Java and C#, ``defp`` in Elixir, ``static`` in C and C++...)
is something another file cannot call, so a map for editing another file has less
use for it. Aider weighs ``_private`` names 0.1 on the graph's edges (``private_ident_weight``);
this applies every language's convention to the definitions' scores.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....model import FileTags
from ...graph.repo_graph import RepoGraph
from ..context import RankContext, Signal
from .directory_proximity import directory_tree

#: Per graph, which symbols are private (computed once: conventions do not change with requests).
_PRIVATE: weakref.WeakKeyDictionary[RepoGraph, tuple[object, np.ndarray]] = weakref.WeakKeyDictionary()
FileFlags = dict[str, tuple[FileTags, np.ndarray]]
"""path -> (the tags the flags were read from, one bool per symbol of them)."""
#: The last mask's flags per file, per conventions: after an edit only the edited files' symbols
#: are read again (the whole standard library's take ~45 ms, more than the rest of an edit's map).
_LAST_FLAGS: dict[tuple[tuple[str, str | None], ...], FileFlags] = {}


def private_mask(ctx: RankContext) -> np.ndarray:
    """One bool per symbol of ``ctx.graph``: private by its file's language convention."""
    graph, visibility = ctx.graph, ctx.visibility
    # A graph's files keep their languages; the conventions are the pipeline's, one object.
    key = visibility.conventions if visibility is not None else None
    held = _PRIVATE.get(graph)
    if held is not None and held[0] is key:
        return held[1]
    if visibility is None:
        mask = np.zeros(len(graph.symbol_file), dtype=bool)
    else:
        conventions = tuple(sorted(visibility.conventions.items()))
        before = _LAST_FLAGS.get(conventions, {})
        flags: FileFlags = {}
        for path in graph.files:
            file_tags = ctx.tags.get(path)
            if file_tags is None:
                flags[path] = (FileTags((), ()), np.zeros(0, dtype=bool))
                continue
            known = before.get(path)
            if known is None or known[0] is not file_tags:
                symbols = file_tags.symbols
                read = [visibility.private(path, symbols, i) for i in range(len(symbols))]
                known = (file_tags, np.array(read, dtype=bool))
            flags[path] = known
        _LAST_FLAGS.clear()  # one repository's files at a time: bounded by its size
        _LAST_FLAGS[conventions] = flags
        arrays = [flags[path][1] for path in graph.files]
        offsets = np.concatenate([[0], np.cumsum([len(a) for a in arrays])]).astype(np.int64)
        flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=bool)
        mask = flat[offsets[graph.symbol_file] + graph.symbol_local] if len(flat) else flat
    _PRIVATE[graph] = (key, mask)
    return mask


@dataclass(frozen=True)
class PrivateDefinitions(Signal):
    """The score of a definition private by its language's convention is multiplied by
    ``private_definition_weight``, unless it is in a chat file's directory (a package's own
    files use its private names). It runs before the mentions' boosts, so a private definition
    the user named is still pinned first."""

    name: ClassVar[str] = "private_definitions"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        weight = ctx.settings.private_definition_weight
        if weight == 1.0 or ctx.visibility is None or not len(scores):
            return scores
        mask = private_mask(ctx)
        if ctx.chat:
            graph, tree = ctx.graph, directory_tree(ctx.graph)
            own = np.zeros(ctx.n, dtype=bool)
            for directory in {graph.files[fi].rpartition("/")[0] for fi in ctx.chat}:
                own[list(tree.files_in.get(directory, ()))] = True
            mask = mask & ~own[graph.symbol_file]
        scores[mask] *= weight
        return scores
