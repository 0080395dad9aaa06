"""Each file's tags key and problems, kept on disk for the next one-shot process on the same root.

A one-shot map that adopts a kept graph (:mod:`hybridmap.store.kept_graph`) reads the tags of the
files it shows; it still read every file's cache record to learn that the record is there and
what problems it holds: at 100,000 files a quarter of a warm one-shot map, most of it the SQLite
reads of about 900 MB of records (docs/benchmarks.md). When a one-shot process ends having looked
up records, the tree-sitter source writes here what they told it: each file's path, the cache key
of its tags (content, grammar, query, options), the problems of those that have some and whether
the record holds tags at all. The next process takes a file whose path and key are the same
without reading its record: its tags are fetched when first read, and parsed then if the record is
gone (:mod:`hybridmap.sources.unread_tags`). A key names its content, so what the record said of
its problems is what it says now.

The file lives in the cache directory (used only when it is the user's alone: ``store.cache``),
named by the root's path, in our own layout (a fixed header, a JSON header, the paths and keys as
NUL-separated UTF-8 tables, then the problems as JSON), checked whole before use: another magic or
format, a root that is not this one, a size that is not the header's, a table whose count is not
the header's, a path given twice, a problem of another shape or a file index out of range, and the
file is ignored (every record is read, as without it). Whoever can write the cache directory can
give a file wrong problems or a key of other contents, as they can plant a wrong parse: the same
trust, nothing executed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..infra.replace import TABLE_SEPARATOR, kept_header, kept_path, load_kept, nul_table, save_kept

MAGIC = b"HMTK"
FORMAT = 1
_HEAD = struct.Struct("<4sBQ")
"""Magic, format, the JSON header's length."""
#: Bytes the kept keys may take per file the settings allow (``max_files``) before they are not
#: read at all: the 100,000-file monorepo's are about 230 bytes per file.
BYTES_PER_FILE = 4_096

Problems = tuple[tuple[str, str], ...]
"""A record's problems: (kind, message) pairs, as the cache's parse outcomes hold them."""


@dataclass(frozen=True, slots=True, eq=False)
class KeptKeys:
    """Per file path, the cache key of its tags and the problems its record holds."""

    keys: Mapping[str, str]
    problems: Mapping[str, Problems]
    """Only the files with problems."""
    untagged: frozenset[str] = frozenset()
    """Files whose record holds problems and no tags (a file too large, a parse that failed)."""


def kept_keys_path(cache_dir: Path, root: str) -> Path:
    """Where the keys of ``root`` (its path, or the joined paths of several roots) are kept."""
    return kept_path(cache_dir, "keys", root)


def save_keys(path: Path, root: str, kept: KeptKeys) -> None:
    """Write ``kept`` for ``root`` (best effort: a failure leaves the next process to read)."""
    save_kept(path, encode_keys(root, kept))


def load_keys(path: Path, root: str, max_files: int) -> KeptKeys | None:
    """The keys kept at ``path`` for ``root``; None when there are none or they are not ours."""
    return load_kept(path, max_files * BYTES_PER_FILE, _HEAD, partial(_decoded, root=root))


def encode_keys(root: str, kept: KeptKeys) -> list[bytes] | None:
    """The file's bytes, in pieces; None when a path or key holds a NUL (not kept)."""
    paths = list(kept.keys)
    index = {path: i for i, path in enumerate(paths)}
    path_table = nul_table(paths)
    key_table = nul_table(kept.keys.values())
    if path_table is None or key_table is None or not kept.problems.keys() | kept.untagged <= index.keys():
        return None
    problems = json.dumps(
        [
            [index[path], [list(pair) for pair in kept.problems.get(path, ())], path not in kept.untagged]
            for path in sorted(kept.problems.keys() | kept.untagged, key=index.__getitem__)
        ],
        separators=(",", ":"),
    ).encode("utf-8", "surrogatepass")
    header = {"root": root, "files": len(paths), "tables": [len(path_table), len(key_table), len(problems)]}
    head = json.dumps(header, separators=(",", ":")).encode("utf-8", "surrogatepass")
    return [_HEAD.pack(MAGIC, FORMAT, len(head)), head, path_table, key_table, problems]


def _decoded(head: bytes, body: bytes, root: str) -> KeptKeys | None:
    header = kept_header(head, _HEAD, MAGIC, FORMAT, root)
    if header is None:
        return None
    files, lengths = header["files"], header["tables"]
    if type(files) is not int or files < 1 or type(lengths) is not list or len(lengths) != 3:
        return None
    if not all(type(n) is int and n >= 0 for n in lengths) or sum(lengths) != len(body):
        return None
    path_end, key_end = lengths[0], lengths[0] + lengths[1]
    paths = body[:path_end].decode("utf-8", "surrogatepass").split(TABLE_SEPARATOR)
    keys = body[path_end:key_end].decode("utf-8", "surrogatepass").split(TABLE_SEPARATOR)
    if len(paths) != files or len(keys) != files or "" in paths or "" in keys:
        return None
    by_path = dict(zip(paths, keys, strict=True))
    if len(by_path) != files:
        return None
    problems: dict[str, Problems] = {}
    untagged: set[str] = set()
    for entry in json.loads(body[key_end:].decode("utf-8", "surrogatepass")):
        i, pairs, tagged = entry
        if type(i) is not int or not 0 <= i < files or type(pairs) is not list or type(tagged) is not bool:
            return None
        if not all(type(p) is list and len(p) == 2 and type(p[0]) is str and type(p[1]) is str for p in pairs):
            return None
        if pairs:
            problems[paths[i]] = tuple((kind, message) for kind, message in pairs)
        if not tagged:
            untagged.add(paths[i])
    return KeptKeys(by_path, problems, frozenset(untagged))
