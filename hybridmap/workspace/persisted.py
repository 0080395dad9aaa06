"""The last snapshot's trusted file states, kept on disk for the next process.

A one-shot map (the CLI without its daemon) starts with no snapshot, so its refresh read and
hashed every file: 28 % of a warm one-shot map of 100,000 files (docs/benchmarks.md). At the end
of a process the workspace's states that carry a stat signature are written here (path, language,
content sha256, the signature); the next process's first refresh trusts a file whose signature is
still the same, as a long-lived map trusts its own last refresh (``workspace.state``), and reads
the rest. A state read with a diagnostic (transcoded, unreadable) is not kept: it is read again.

The file lives in the cache directory (used only when it is the user's alone: ``store.cache``),
named by the root's path, in our own layout, by column: a small JSON header (the root, the count,
the languages), the paths NUL-separated, the hashes end to end (64 hex digits each), each file's
language number and its four signature numbers as little-endian arrays. (Rows of JSON were
0.55 s of a warm one-shot map at 100,000 files, most of it checking each row's fields.) Anything
else, a count or size that is not the header's, a language number out of range, or a root that is
not this one, and it is ignored whole (the refresh reads every file, as without it). Whoever can
write the cache directory can make a map trust a wrong hash, as they can plant a wrong parse: the
same trust, nothing executed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from functools import partial
from pathlib import Path

import numpy as np

from ..infra.replace import TABLE_SEPARATOR, kept_header, kept_path, load_kept, nul_table, replace_file
from .state import FileState

MAGIC = b"HMST"
FORMAT = 2
_HEAD = struct.Struct("<4sBQ")
"""Magic, format, the JSON header's length."""
#: Bytes read per listed file at most (a path, a hash, five numbers): with ``max_files`` it bounds
#: what a load reads.
BYTES_PER_FILE = 4_096
_SHA = 64
_LANGUAGE = np.dtype("<u2")
_SIGNATURE = np.dtype("<u8")
_SIGNATURE_FIELDS = 4


def states_path(cache_dir: Path, root: Path) -> Path:
    """Where ``root``'s states are kept under ``cache_dir``."""
    return kept_path(cache_dir, "snapshots", str(root))


def load_states(path: Path, root: Path, max_files: int) -> dict[str, FileState]:
    """The states kept at ``path`` for ``root``; empty when there are none or they are not ours."""
    states = load_kept(path, max_files * BYTES_PER_FILE, _HEAD, partial(_decoded, root=str(root), max_files=max_files))
    return states if states is not None else {}


def _decoded(head: bytes, data: bytes, root: str, max_files: int) -> dict[str, FileState]:
    """``head``: the fixed header and the JSON; ``data``: the tables and arrays after it."""
    header = kept_header(head, _HEAD, MAGIC, FORMAT, root)
    if header is None:
        return {}
    n, languages, paths_size = header["files"], header["languages"], header["paths"]
    if type(n) is not int or not 0 < n <= max_files or type(paths_size) is not int or paths_size < 0:
        return {}
    if type(languages) is not list or not all(type(name) is str and name for name in languages):
        return {}
    at = 0
    sizes = (paths_size, _SHA * n, _LANGUAGE.itemsize * n, _SIGNATURE.itemsize * _SIGNATURE_FIELDS * n)
    if at + sum(sizes) != len(data):
        return {}
    paths = data[at : at + paths_size].decode("utf-8", "surrogatepass").split(TABLE_SEPARATOR)
    at += paths_size
    hashes = data[at : at + _SHA * n].decode("ascii")
    at += _SHA * n
    numbers = np.frombuffer(data, _LANGUAGE, n, at)
    at += _LANGUAGE.itemsize * n
    signatures = np.frombuffer(data, _SIGNATURE, _SIGNATURE_FIELDS * n, at).reshape(n, _SIGNATURE_FIELDS)
    if len(paths) != n or "" in paths or int(numbers.max()) >= len(languages):
        return {}
    if int(signatures.max()) >= 2**63:  # a signature is os.stat's: non-negative int64s
        return {}
    names = map(languages.__getitem__, numbers.tolist())
    shas = map(hashes.__getitem__, map(slice, range(0, _SHA * n, _SHA), range(_SHA, _SHA * n + 1, _SHA)))
    return dict(zip(paths, map(FileState, names, shas, map(tuple, signatures.tolist())), strict=True))


def save_states(path: Path, root: Path, files: Mapping[str, FileState]) -> None:
    """Keep the states of ``files`` that carry a signature and no diagnostic (best effort: a
    failure leaves the next process to read every file)."""
    kept = [
        (rel, state)
        for rel, state in files.items()
        if len(state.sha256) == _SHA
        and state.sha256.isascii()
        and len(state.signature) == _SIGNATURE_FIELDS
        and all(0 <= v < 2**63 for v in state.signature)
        and not state.diagnostics
        and TABLE_SEPARATOR not in rel
    ]
    paths = nul_table(rel for rel, _ in kept)
    if not kept or paths is None:
        return
    languages = sorted({state.language for _, state in kept})
    number = {name: i for i, name in enumerate(languages)}
    header = {"root": str(root), "files": len(kept), "languages": languages, "paths": len(paths)}
    head = json.dumps(header, separators=(",", ":")).encode("utf-8", "surrogatepass")
    replace_file(
        path,
        [
            _HEAD.pack(MAGIC, FORMAT, len(head)),
            head,
            paths,
            "".join(state.sha256 for _, state in kept).encode("ascii"),
            np.fromiter((number[state.language] for _, state in kept), _LANGUAGE, len(kept)).tobytes(),
            np.array([state.signature for _, state in kept], _SIGNATURE).tobytes(),
        ],
    )
