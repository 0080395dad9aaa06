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


@dataclass(frozen=True)
class _Flags:
    """The last mask's flags, one bool per symbol end to end in the graph's file order
    (``offsets``: where each file's start), with the tags and file list (and its index) they were
    read for: a file whose tags are the same object keeps its run."""

    conventions: tuple[tuple[str, str | None], ...]
    files: tuple[str, ...]
    index: Mapping[str, int]
    tags: Mapping[str, FileTags]
    flat: np.ndarray
    offsets: np.ndarray

    def kept(self, path: str, file_tags: FileTags | None) -> np.ndarray | None:
        """``path``'s flags when they were read from ``file_tags``, else None."""
        fi = self.index.get(path)
        if fi is None or self.tags.get(path) is not file_tags:
            return None
        return self.flat[self.offsets[fi] : self.offsets[fi + 1]]


#: The last mask's flags (one repository's files at a time: bounded by its size). After an edit
#: only the edited files' symbols are read again and spliced in (the whole standard library's
#: take ~45 ms, more than the rest of an edit's map; a pass over every file at 100,000 files
#: was ~150 ms of one).
_LAST: list[_Flags] = []
_NO_FLAGS = np.zeros(0, dtype=bool)


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
            flags = _read(graph.files, graph.index, ctx.tags, visibility, conventions, last)
        _LAST[:] = [flags]
        flat = flags.flat
        mask = flat[flags.offsets[graph.symbol_file] + graph.symbol_local] if len(flat) else flat
    _PRIVATE[graph] = (key, mask)
    return mask


def known_private_mask(graph: RepoGraph, conventions: object) -> np.ndarray | None:
    """The mask :func:`private_mask` made for ``graph`` under ``conventions`` (the pipeline's
    object), if it made one: what a kept graph carries to the next process."""
    held = _PRIVATE.get(graph)
    return held[1] if held is not None and held[0] is conventions else None


def remember_private_mask(graph: RepoGraph, conventions: object, mask: np.ndarray) -> None:
    """Give ``graph`` the mask a kept graph carried (made under ``conventions``, the pipeline's
    object): :func:`private_mask` then reads no file's symbols for it."""
    _PRIVATE[graph] = (conventions, mask)


def _file_flags(path: str, file_tags: FileTags | None, visibility: Visibility) -> np.ndarray:
    if file_tags is None:
        return _NO_FLAGS
    return np.array(visibility.private_flags(path, file_tags.symbols), dtype=bool)


def _read(
    files: tuple[str, ...],
    index: Mapping[str, int],
    tags: Mapping[str, FileTags],
    visibility: Visibility,
    conventions: tuple[tuple[str, str | None], ...],
    last: _Flags | None,
) -> _Flags:
    """Every file's flags, the last mask's runs kept for files with the same tags object."""
    held = last if last is not None and last.conventions == conventions else None
    arrays = []
    for path in files:
        file_tags = tags.get(path)
        known = held.kept(path, file_tags) if held is not None else None
        arrays.append(known if known is not None else _file_flags(path, file_tags, visibility))
    offsets = np.zeros(len(files) + 1, np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=bool)
    return _Flags(conventions, files, index, tags, flat, offsets)


def _spliced(last: _Flags, tags: Mapping[str, FileTags], visibility: Visibility, index: Mapping[str, int]) -> _Flags:
    """The last flags with the files whose tags moved (:func:`changed_keys`) read again: the
    same file list, so each such file's run of the flat flags is replaced in place (no copy of a
    per-file mapping: at 100,000 files that copy was most of an edit's ~25 ms here)."""
    changed = changed_positions(last.tags, tags, index)
    if not changed:
        return replace(last, tags=tags)
    files = last.files
    pieces: list[np.ndarray] = []
    lengths = np.diff(last.offsets)
    start = 0
    for fi in changed:
        read = _file_flags(files[fi], tags.get(files[fi]), visibility)
        pieces += [last.flat[last.offsets[start] : last.offsets[fi]], read]
        lengths[fi] = len(read)
        start = fi + 1
    pieces.append(last.flat[last.offsets[start] :])
    offsets = np.zeros(len(files) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _Flags(last.conventions, files, index, tags, np.concatenate(pieces), offsets)


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
