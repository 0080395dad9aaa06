"""The text-similarity signal's lexical models, kept on disk for the next process.

A one-shot map with a chat file (the CLI without its daemon) builds two BM25 models of every
file's words (:mod:`hybridmap.pipeline.rank.lexical`) before it can rank: at 100,000 files a
quarter of a warm one-shot map (docs/benchmarks.md). When a process ends having built them, each
model is written here compacted to its graph's file order, each file named by its path and the
key of the tags its words came from (the cache key: content, grammar, query, options); the next
process adopts the entries of every file whose path and key are the same, and counts only the
others' words. Its BM25 sums are bit-identical to a fresh build's (each file's entries are the
same values in the same order; a test checks it).

The file lives in the cache directory (used only when it is the user's alone: ``store.cache``),
named by the root's path, in our own layout (a small JSON header, the little-endian arrays, then
the words and each model's paths and keys as NUL-separated UTF-8: a JSON list of 100,000 pairs was
half of reading the file), checked whole before use: another magic or format, a root that is not
this one, a size that is not the header's, a table whose count is not the header's (a word, path
or key holding a NUL: such a lexicon is not kept), a word id out of range, a file's entries out of
order or a postings order that is not the stable sort of the ids, and the file is ignored (the
models are built, as without it). Whoever
can write the cache directory can make a map rank with wrong words, as they can plant a wrong
parse: the same trust, nothing executed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..infra.replace import DECODE_ERRORS, TABLE_SEPARATOR, kept_header, kept_path, load_kept, nul_table, replace_file

MAGIC = b"HMLX"
FORMAT = 2
_HEAD = struct.Struct("<4sBQ")
"""Magic, format, the JSON header's length."""
#: Bytes a kept lexicon may take per file the settings allow (``max_files``) before it is not
#: read at all: the 100,000-file monorepo's two models are about 1,500 bytes per file.
BYTES_PER_FILE = 32_768
_IDS = np.dtype("<i4")
_COUNTS = np.dtype("<i4")
_STARTS = np.dtype("<i8")
_ORDER = np.dtype("<i4")


@dataclass(frozen=True, slots=True, eq=False)
class KeptModel:
    """One model as kept: per file, in the saving graph's order, its path and the key of the tags
    its words came from ("" when unknown: never matched), and its entries end to end."""

    whole_text: bool
    files: tuple[tuple[str, str], ...]
    ids: np.ndarray
    """Word ids (int32), file after file."""
    counts: np.ndarray
    """Their counts (int32)."""
    starts: np.ndarray
    """File i's entries are ``ids[starts[i]:starts[i + 1]]`` (int64, len(files) + 1)."""
    order: np.ndarray | None = None
    """The entries' stable sort by word id (the model's postings), when the saver had it (int32).
    Read from a file, the int32 arrays are views of its bytes (read-only): nothing is copied."""


@dataclass(frozen=True, slots=True, eq=False)
class KeptLexicon:
    """The words (id i is ``words[i]``) and each kind of model of one root's last graph."""

    words: tuple[str, ...]
    models: tuple[KeptModel, ...]


def lexicon_path(cache_dir: Path, root: str) -> Path:
    """Where the lexicon of ``root`` (its path, or the joined paths of several roots) is kept."""
    return kept_path(cache_dir, "lexicons", root)


def save_lexicon(path: Path, root: str, lexicon: KeptLexicon) -> None:
    """Write ``lexicon`` for ``root`` (best effort: a failure leaves the next process to build)."""
    try:
        data = encode_lexicon(root, lexicon)
    except ValueError:
        return  # counts that are not small integers: not ours to keep
    replace_file(path, data)


def load_lexicon(path: Path, root: str, max_files: int) -> KeptLexicon | None:
    """The lexicon kept at ``path`` for ``root``; None when there is none or it is not ours."""
    return load_kept(path, max_files * BYTES_PER_FILE, _HEAD, partial(_decoded, root=root))


def encode_lexicon(root: str, lexicon: KeptLexicon) -> list[bytes | memoryview]:
    """The file's bytes, in pieces: each array is a view of the model's own memory when its type
    is the file's (the models' are: int32 ids, counts and order, int64 starts), so writing the
    file copies nothing. At 100,000 files, copying them (``astype`` then ``tobytes``: twice
    each) made the end of a cold one-shot map its peak, 1.72 -> 2.07 GB resident."""
    arrays: list[bytes | memoryview] = []
    models = []
    tables = [_table(lexicon.words)]
    for model in lexicon.models:
        counts = model.counts
        if len(counts) and (counts.min() < 0 or counts.max() >= 2**31 or not _whole_numbers(counts)):
            raise ValueError("counts out of range")
        arrays += [_raw(model.ids, _IDS), _raw(counts, _COUNTS), _raw(model.starts, _STARTS)]
        if model.order is not None:
            arrays.append(_raw(model.order, _ORDER))
        tables += [_table(path for path, _ in model.files), _table(key for _, key in model.files)]
        models.append(
            {
                "whole_text": model.whole_text,
                "files": len(model.files),
                "entries": len(model.ids),
                "postings": model.order is not None,
            }
        )
    header = {"root": root, "words": len(lexicon.words), "models": models, "tables": [len(t) for t in tables]}
    head = json.dumps(header, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return [_HEAD.pack(MAGIC, FORMAT, len(head)), head, *arrays, *tables]


def _table(values: Iterable[str]) -> bytes:
    """``values`` NUL-separated (ValueError when one holds a NUL: not ours to keep)."""
    table = nul_table(values)
    if table is None:
        raise ValueError("a NUL in a table's string")
    return table


def _raw(values: np.ndarray, dtype: np.dtype) -> memoryview:
    """``values``' bytes as ``dtype``: a view when they are that type already, else a copy."""
    return np.ascontiguousarray(values, dtype=dtype).data.cast("B")


def _whole_numbers(values: np.ndarray) -> bool:
    """Whether every value is an integer (an integer array is; a float one is checked)."""
    return values.dtype.kind in "iu" or bool(np.array_equal(values, np.floor(values)))


def decode_lexicon(data: bytes, root: str) -> KeptLexicon | None:
    """``data`` decoded and checked whole (see the module docstring), or None."""
    try:
        split = _HEAD.size + _HEAD.unpack_from(data)[2]
        return _decoded(data[:split], data[split:], root)
    except DECODE_ERRORS:
        return None


def _decoded(head: bytes, body: bytes, root: str) -> KeptLexicon | None:
    """``head``: the fixed header and the JSON; ``body``: the arrays, each model's in turn."""
    header = kept_header(head, _HEAD, MAGIC, FORMAT, root)
    if header is None:
        return None
    n_words, models, lengths = header["words"], header["models"], header["tables"]
    if (
        type(n_words) is not int
        or type(models) is not list
        or len({m.get("whole_text") for m in models}) != len(models)
    ):
        return None
    if (
        type(lengths) is not list
        or len(lengths) != 1 + 2 * len(models)
        or not all(type(n) is int and n >= 0 for n in lengths)
    ):
        return None
    tables_at = len(body) - sum(lengths)
    if tables_at < 0:
        return None
    tables = _tables(memoryview(body)[tables_at:], lengths)
    words = tables[0] if n_words else ()
    if len(words) != n_words or len(set(words)) != n_words:
        return None
    offset = 0
    kept: list[KeptModel] = []
    pairs: dict[tuple[int, int], tuple[tuple[str, str], ...] | None] = {}
    for i, entry in enumerate(models):
        paths, keys = tables[1 + 2 * i], tables[2 + 2 * i]
        if (id(paths), id(keys)) not in pairs:  # the models' files are the same tables: paired once
            pairs[id(paths), id(keys)] = _files(paths, keys)
        files = pairs[id(paths), id(keys)]
        model, offset = _model(entry, body, offset, n_words, files)
        if model is None:
            return None
        kept.append(model)
    if offset != tables_at:
        return None
    return KeptLexicon(words, tuple(kept))


def _tables(data: memoryview, lengths: list[int]) -> list[tuple[str, ...]]:
    """The NUL-separated tables of ``data``, in turn (each ``lengths`` bytes). A table whose bytes
    are an earlier one's is that one's tuple: the two models name the same files, and their
    strings are held once (interning each was 0.17 s at 100,000 files)."""
    out: list[tuple[str, ...]] = []
    read: list[tuple[memoryview, tuple[str, ...]]] = []
    offset = 0
    for length in lengths:
        raw = data[offset : offset + length]  # a view: the tables are not copied out of the file's bytes
        table = next((values for seen, values in read if seen == raw), None)
        if table is None:
            table = tuple(str(raw, "utf-8", "surrogatepass").split(TABLE_SEPARATOR))
            read.append((raw, table))
        out.append(table)
        offset += length
    return out


def _files(paths: tuple[str, ...], keys: tuple[str, ...]) -> tuple[tuple[str, str], ...] | None:
    """A model's (path, key) pairs; None when the tables do not pair (counts, an empty or a
    repeated path)."""
    if len(paths) != len(keys) or "" in paths or len(set(paths)) != len(paths):
        return None
    return tuple(zip(paths, keys, strict=True))


#: Entries per step of :func:`_stably_sorted`: its int64 temporaries are a few of these long.
#: Checked whole, the 100,000-file monorepo's two models made 100 MB of temporaries at the moment
#: the one-shot map's memory peaked (tracemalloc); 2**20 keeps them to about 8 MB each.
ORDER_CHECK_CHUNK = 1 << 20


def _stably_sorted(ids: np.ndarray, order: np.ndarray, n: int) -> bool:
    """Whether ``order`` is the stable sort of ``ids`` (and only it): (id, entry) strictly
    increasing along it. ``order``'s values are known to be in range."""
    for start in range(0, n - 1, ORDER_CHECK_CHUNK):
        part = order[start : start + ORDER_CHECK_CHUNK + 1]  # one past the step: the pairs across steps too
        if np.diff(ids[part].astype(np.int64) * n + part).min(initial=1) <= 0:
            return False
    return True


def _model(
    entry: object, data: bytes, offset: int, vocabulary: int, files: tuple[tuple[str, str], ...] | None
) -> tuple[KeptModel | None, int]:
    if type(entry) is not dict:
        return None, offset
    whole_text, n_files, n, postings = entry["whole_text"], entry["files"], entry["entries"], entry["postings"]
    if type(whole_text) is not bool or type(postings) is not bool or type(n) is not int or n < 0:
        return None, offset
    if type(n_files) is not int or not n_files:  # a model of no file is never kept
        return None, offset
    if files is None or len(files) != n_files:
        return None, offset
    sizes: list[tuple[np.dtype, int]] = [(_IDS, n), (_COUNTS, n), (_STARTS, n_files + 1)]
    if postings:
        sizes.append((_ORDER, n))
    arrays = []
    for dtype, count in sizes:
        end = offset + dtype.itemsize * count
        if end > len(data):
            return None, offset
        arrays.append(np.frombuffer(data, dtype, count, offset))
        offset = end
    ids, counts, starts = arrays[0], arrays[1], arrays[2].astype(np.int64)
    if n and (ids.min() < 0 or ids.max() >= vocabulary or counts.min() < 1):
        return None, offset
    if starts[0] != 0 or starts[-1] != n or (len(starts) > 1 and np.diff(starts).min() < 0):
        return None, offset
    order = None
    if postings:
        order = arrays[3]
        if n and (order.min() < 0 or order.max() >= n or not _stably_sorted(ids, order, n)):
            return None, offset
    return KeptModel(whole_text, files, ids, counts, starts, order), offset
