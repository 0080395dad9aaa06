"""A static graph handed to the next process (:mod:`hybridmap.store.kept_graph`), and taken back.

The kept graph is adopted only when the next process would build exactly it: the same files with
the same tags (each file's path and the cache key of its tags: content, grammar, query, options),
the same settings, the same visibility conventions and the same code building it (the bytes of
the modules below: a change to how edges are made must not meet a graph made the old way). That
is the :func:`graph_digest`; a graph taken back equals the built one array for array
(``tests/pipeline/test_kept_graph.py``), so the map is the same text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from functools import cache
from itertools import chain
from pathlib import Path

import numpy as np

from ...model import Provenance
from ...settings import Settings
from ...store.kept_graph import KeptGraph
from . import name_edges, repo_graph
from .repo_graph import NameTable, RepoGraph, definers_from_columns

#: Bumped when the meaning of a kept graph changes in a way the modules' bytes would not show.
VERSION = 1


def graph_digest(
    tags: Mapping[str, object], keys: Mapping[str, str], settings: Settings, conventions: Mapping[str, str | None]
) -> str | None:
    """What a static graph over ``tags`` is built from; None when some file's tags are not a
    parse of its content alone (no key: a graph of it is never kept)."""
    if len(keys) != len(tags):
        return None
    files = sorted(tags)
    try:
        pairs = "\0".join(chain.from_iterable(zip(files, map(keys.__getitem__, files), strict=True)))
    except KeyError:
        return None
    digest = hashlib.sha256(_code_fingerprint().encode())
    digest.update(repr((settings, sorted(conventions.items()))).encode("utf-8", "surrogatepass"))
    digest.update(pairs.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@cache
def _code_fingerprint() -> str:
    """The bytes of the modules that decide a static graph's edges and private flags."""
    from ...languages import visibility
    from .. import import_targets, policies, python_imports

    digest = hashlib.sha256(str(VERSION).encode())
    for module in (repo_graph, name_edges, policies, python_imports, import_targets, visibility):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()


def to_kept(graph: RepoGraph, digest: str, private: np.ndarray | None, resolved_pairs: int) -> KeptGraph:
    """``graph`` as kept (``private``: its private-definition flags, when the ranking read them)."""
    arrays = {
        name: getattr(graph, name)
        for name in ("edge_src", "edge_dst", "edge_ident", "edge_count", "edge_weight", "edge_provenance")
    }
    arrays.update(
        symbol_file=graph.symbol_file,
        symbol_local=graph.symbol_local,
        symbol_ident=graph.symbol_ident,
        symbol_name=graph.symbol_name,
        private=private if private is not None else np.zeros(0, bool),
    )
    provenances = tuple(str(p) for p in graph.provenances)
    return KeptGraph(digest, graph.files, graph.idents, tuple(graph.names.names), provenances, arrays, resolved_pairs)


def from_kept(kept: KeptGraph) -> tuple[RepoGraph, np.ndarray | None]:
    """The graph ``kept`` holds, and its private flags (None when not kept)."""
    arrays = kept.arrays
    table = NameTable({name: i for i, name in enumerate(kept.names)})
    known = {p.value: p for p in Provenance}
    graph = RepoGraph(
        files=kept.files,
        idents=kept.idents,
        edge_src=arrays["edge_src"],
        edge_dst=arrays["edge_dst"],
        edge_ident=arrays["edge_ident"],
        edge_count=arrays["edge_count"],
        edge_weight=arrays["edge_weight"],
        edge_provenance=arrays["edge_provenance"],
        definers=_KeptDefiners(arrays["symbol_name"], arrays["symbol_file"], len(kept.files), table),
        symbol_file=arrays["symbol_file"],
        symbol_local=arrays["symbol_local"],
        symbol_ident=arrays["symbol_ident"],
        symbol_name=arrays["symbol_name"],
        names=table,
        provenances=tuple(known.get(p, p) for p in kept.provenances),
    )
    private = arrays["private"]
    return graph, (private if len(private) == len(arrays["symbol_file"]) else None)


class _KeptDefiners(Mapping[str, tuple[int, ...]]):
    """identifier -> the files defining it, read from the symbol columns when first asked (what
    :func:`~hybridmap.pipeline.graph.repo_graph.build_graph` makes; a map that asks nothing of
    it, most one-shot maps, does not pay for the dictionary)."""

    def __init__(self, numbers: np.ndarray, owners: np.ndarray, n_files: int, table: NameTable) -> None:
        self._made: dict[str, tuple[int, ...]] | None = None
        self._from = (numbers, owners, n_files, table)

    def _made_definers(self) -> dict[str, tuple[int, ...]]:
        if self._made is None:
            numbers, owners, n_files, table = self._from
            self._made = definers_from_columns(numbers, np.bincount(owners, minlength=n_files), table)
        return self._made

    def __getitem__(self, name: str) -> tuple[int, ...]:
        return self._made_definers()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._made_definers())

    def __len__(self) -> int:
        return len(self._made_definers())
