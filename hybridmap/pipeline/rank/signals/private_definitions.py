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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ....infra.patched import changed_positions
from ....languages.visibility import Visibility
from ....model import FileTags
from ...graph.repo_graph import RepoGraph
from ..context import RankContext, Signal
from .directory_proximity import directory_tree

#: Per graph, which symbols are private (computed once: conventions do not change with requests).
_PRIVATE: weakref.WeakKeyDictionary[RepoGraph, tuple[object, np.ndarray]] = weakref.WeakKeyDictionary()
FileFlags = dict[str, tuple[FileTags, np.ndarray]]
"""path -> (the tags the flags were read from, one bool per symbol of them)."""


@dataclass(frozen=True)
class _Flags:
    """The last mask's flags: per file, and end to end in the graph's file order (``offsets``:
    where each file's start), with the tags and file list they were read for."""

    conventions: tuple[tuple[str, str | None], ...]
    files: tuple[str, ...]
    tags: Mapping[str, FileTags]
    per_file: FileFlags
    flat: np.ndarray
    offsets: np.ndarray


#: The last mask's flags (one repository's files at a time: bounded by its size). After an edit
#: only the edited files' symbols are read again and spliced in (the whole standard library's
#: take ~45 ms, more than the rest of an edit's map; a pass over every file at 100,000 files
#: was ~150 ms of one).
_LAST: list[_Flags] = []
_NO_FLAGS = (FileTags((), ()), np.zeros(0, dtype=bool))


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
        last = _LAST[0] if _LAST else None
        if last is not None and last.conventions == conventions and last.files is graph.files:
            flags = _spliced(last, ctx.tags, visibility, graph.index)
        else:
            flags = _read(graph.files, ctx.tags, visibility, conventions, last)
        _LAST[:] = [flags]
        flat = flags.flat
        mask = flat[flags.offsets[graph.symbol_file] + graph.symbol_local] if len(flat) else flat
    _PRIVATE[graph] = (key, mask)
    return mask


def _file_flags(path: str, file_tags: FileTags | None, visibility: Visibility) -> tuple[FileTags, np.ndarray]:
    if file_tags is None:
        return _NO_FLAGS
    symbols = file_tags.symbols
    return file_tags, np.array([visibility.private(path, symbols, i) for i in range(len(symbols))], dtype=bool)


def _read(
    files: tuple[str, ...],
    tags: Mapping[str, FileTags],
    visibility: Visibility,
    conventions: tuple[tuple[str, str | None], ...],
    last: _Flags | None,
) -> _Flags:
    """Every file's flags, those of the last mask's files with the same tags object reused."""
    before = last.per_file if last is not None and last.conventions == conventions else {}
    per_file: FileFlags = {}
    for path in files:
        file_tags = tags.get(path)
        known = before.get(path)
        if known is None or known[0] is not file_tags:
            known = _file_flags(path, file_tags, visibility)
        per_file[path] = known
    arrays = [per_file[path][1] for path in files]
    offsets = np.zeros(len(files) + 1, np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=bool)
    return _Flags(conventions, files, tags, per_file, flat, offsets)


def _spliced(last: _Flags, tags: Mapping[str, FileTags], visibility: Visibility, index: Mapping[str, int]) -> _Flags:
    """The last flags with the files whose tags moved (:func:`changed_keys`) read again: the
    same file list, so each such file's run of the flat flags is replaced in place."""
    changed = changed_positions(last.tags, tags, index)
    if not changed:
        return replace(last, tags=tags)
    files, per_file = last.files, dict(last.per_file)
    pieces: list[np.ndarray] = []
    lengths = np.diff(last.offsets)
    start = 0
    for fi in changed:
        path = files[fi]
        per_file[path] = read = _file_flags(path, tags.get(path), visibility)
        pieces += [last.flat[last.offsets[start] : last.offsets[fi]], read[1]]
        lengths[fi] = len(read[1])
        start = fi + 1
    pieces.append(last.flat[last.offsets[start] :])
    offsets = np.zeros(len(files) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _Flags(last.conventions, files, tags, per_file, np.concatenate(pieces), offsets)


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
