"""A static map's graph, kept on disk for the next process on the same files.

A one-shot map (the CLI without its daemon) of a repository nobody changed since the last one
still rebuilt the graph from every file's tags, and so decoded every file's tags first: at
100,000 files most of a warm one-shot map (docs/benchmarks.md). When a process built a static
graph (no server's answers in it), it writes the graph here at its end: the arrays as they are,
the file, identifier, symbol-name and provenance tables, the private-definition flags the ranking
read, and a *digest* of what the graph was built from (each file's path and the cache key of its
tags, the settings, the languages' visibility conventions: :mod:`hybridmap.pipeline.graph.kept`).
The next one-shot process adopts it when its own digest is the same; its tags are then decoded
only for the files a map shows.

The file lives in the cache directory (used only when it is the user's alone: ``store.cache``),
named by the root's path, in our own layout (a fixed header, a JSON header, the tables as
NUL-separated UTF-8, then little-endian arrays), checked whole before use: another magic or
format, a root or digest that is not this one, a size that is not the header's, a table whose
count is not the header's (a name holding a NUL: such a graph is simply not kept), an index out
of range or edges out of order, and the file is ignored (the graph is built, as without it).
Whoever can write the cache directory can make a map rank with a wrong graph, as they can plant
a wrong parse: the same trust, nothing executed.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..infra.replace import TABLE_SEPARATOR, kept_header, kept_path, load_kept, nul_table, save_kept

MAGIC = b"HMGR"
FORMAT = 1
_HEAD = struct.Struct("<4sBQ")
"""Magic, format, the JSON header's length."""
#: Bytes a kept graph may take per file the settings allow (``max_files``) before it is not read
#: at all: the 100,000-file monorepo's is about 700 bytes per file.
BYTES_PER_FILE = 16_384
#: The arrays, in the file's order, with their types (little-endian) and what counts them.
ARRAYS: tuple[tuple[str, str, str], ...] = (
    ("edge_src", "<i4", "edges"),
    ("edge_dst", "<i4", "edges"),
    ("edge_ident", "<i4", "edges"),
    ("edge_count", "<i4", "edges"),
    ("edge_weight", "<f8", "edges"),
    ("edge_provenance", "<i2", "edges"),
    ("symbol_file", "<i4", "symbols"),
    ("symbol_local", "<i4", "symbols"),
    ("symbol_ident", "<i8", "symbols"),
    ("symbol_name", "<i4", "symbols"),
    ("private", "|b1", "private"),
)
_TABLES = ("files", "idents", "names", "provenances")


@dataclass(frozen=True, slots=True, eq=False)
class KeptGraph:
    """A graph's tables and arrays as kept, and what it was built from."""

    digest: str
    """What the graph was built from (:func:`hybridmap.pipeline.graph.kept.graph_digest`)."""
    files: tuple[str, ...]
    idents: tuple[str, ...]
    names: tuple[str, ...]
    """The symbol names' table, numbered in order."""
    provenances: tuple[str, ...]
    arrays: dict[str, np.ndarray]
    """Each of :data:`ARRAYS` by name; ``private`` is empty when the ranking never read it. Read
    from a file, they are views of its bytes (read-only): nothing is copied."""
    resolved_pairs: int
    """(file, identifier) pairs the policies resolved for this graph (the map's stats say it)."""


def kept_graph_path(cache_dir: Path, root: str) -> Path:
    """Where the graph of ``root`` (its path, or the joined paths of several roots) is kept."""
    return kept_path(cache_dir, "graphs", root)


def save_graph(path: Path, root: str, graph: KeptGraph) -> None:
    """Write ``graph`` for ``root`` (best effort: a failure leaves the next process to build)."""
    save_kept(path, encode_graph(root, graph))


def load_graph(path: Path, root: str, digest: str, max_files: int) -> KeptGraph | None:
    """The graph kept at ``path`` for ``root`` when it was built from ``digest``; else None."""
    return load_kept(path, max_files * BYTES_PER_FILE, _HEAD, partial(_decoded, root=root, digest=digest))


def encode_graph(root: str, graph: KeptGraph) -> list[bytes | memoryview] | None:
    """The file's bytes, in pieces (arrays as views of the graph's own memory when their type is
    the file's); None when a table's string holds a NUL (such a graph is not kept)."""
    tables = []
    for name in _TABLES:
        table = nul_table(getattr(graph, name))
        if table is None:
            return None
        tables.append(table)
    arrays = [np.ascontiguousarray(graph.arrays[name], dtype=dtype) for name, dtype, _ in ARRAYS]
    header = {
        "root": root,
        "digest": graph.digest,
        "counts": {name: len(getattr(graph, name)) for name in _TABLES},
        "tables": [len(table) for table in tables],
        "edges": len(graph.arrays["edge_src"]),
        "symbols": len(graph.arrays["symbol_file"]),
        "private": len(graph.arrays["private"]),
        "resolved_pairs": graph.resolved_pairs,
    }
    head = json.dumps(header, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return [_HEAD.pack(MAGIC, FORMAT, len(head)), head, *tables, *(a.data.cast("B") for a in arrays)]


def _decoded(head: bytes, body: bytes, root: str, digest: str) -> KeptGraph | None:
    header = kept_header(head, _HEAD, MAGIC, FORMAT, root)
    if header is None or header.get("digest") != digest:
        return None
    counts, lengths = header["counts"], header["tables"]
    sizes = {name: header[name] for name in ("edges", "symbols", "private")}
    resolved_pairs = header["resolved_pairs"]
    numbers = [*lengths, *sizes.values(), resolved_pairs, *(counts[name] for name in _TABLES)]
    if type(lengths) is not list or len(lengths) != len(_TABLES) or not all(type(n) is int and n >= 0 for n in numbers):
        return None
    if sizes["private"] not in (0, sizes["symbols"]):
        return None
    tables: dict[str, tuple[str, ...]] = {}
    offset = 0
    for name, length in zip(_TABLES, lengths, strict=True):
        if length > len(body) - offset:
            return None
        text = body[offset : offset + length].decode("utf-8", "surrogatepass")
        values = tuple(text.split(TABLE_SEPARATOR)) if counts[name] else ()
        if len(values) != counts[name]:
            return None
        tables[name] = values
        offset += length
    arrays: dict[str, np.ndarray] = {}
    for name, dtype, counted in ARRAYS:
        n, kind = sizes[counted], np.dtype(dtype)
        if offset + n * kind.itemsize > len(body):
            return None
        arrays[name] = np.frombuffer(body, kind, n, offset)
        offset += n * kind.itemsize
    if offset != len(body) or not _in_range(arrays, {name: len(values) for name, values in tables.items()}):
        return None
    return KeptGraph(
        digest, tables["files"], tables["idents"], tables["names"], tables["provenances"], arrays, resolved_pairs
    )


def _in_range(arrays: dict[str, np.ndarray], counts: dict[str, int]) -> bool:
    """Every index within its table, the edges grouped by source file and the symbols by file
    (what the graph's offsets assume), the weights finite."""

    def within(values: np.ndarray, low: int, high: int) -> bool:
        return not len(values) or (int(values.min()) >= low and int(values.max()) < high)

    n_files, n_idents = counts["files"], counts["idents"]
    return (
        within(arrays["edge_src"], 0, n_files)
        and within(arrays["edge_dst"], 0, n_files)
        and within(arrays["edge_ident"], 0, n_idents)
        and within(arrays["edge_provenance"], 0, counts["provenances"])
        and within(arrays["symbol_file"], 0, n_files)
        and within(arrays["symbol_local"], 0, 2**31 - 1)
        and within(arrays["symbol_ident"], -1, n_idents)
        and within(arrays["symbol_name"], 0, counts["names"])
        and bool(np.all(np.diff(arrays["edge_src"]) >= 0))
        and bool(np.all(np.diff(arrays["symbol_file"]) >= 0))
        and bool(np.isfinite(arrays["edge_weight"]).all())
    )
