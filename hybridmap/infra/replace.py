"""A file the next process reads, replaced whole: never seen half written, never readable by others;
read back bounded.

What a process keeps for the next (the files' states, the lexical models) is written to a private
temporary file beside its place (``mkstemp``: 0600, in a directory made 0700), then renamed over
it: a reader meets the old file or the new one. Best effort: a disk that refuses leaves the old
file, or none, and nothing behind. :func:`read_bounded` (or :func:`read_within`, for a reader of
its own) reads one back, refusing one larger than its bound: the buffer is sized from the file,
not from the bound (``read(bound + 1)`` asked the allocator for the bound, 6 GB for a lexicon at
``max_files`` 200,000, a ``MemoryError`` where memory is not overcommitted).

What every kept file of a root shares is here once: where it lives (:func:`kept_path`), its head
checked (:func:`kept_header`: magic, format, the root it was kept for), a decoder's failure read as
"not ours" (:func:`load_kept`), the NUL-separated tables (:func:`nul_table`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

T = TypeVar("T")


def read_within(path: Path, bound: int, read: Callable[[BinaryIO, int], T | None]) -> T | None:
    """``read(file, size)`` of ``path``, open; None when it cannot be read or holds more than
    ``bound`` bytes (the size is checked before anything is read)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            return read(fh, size) if size <= bound else None
    except OSError:
        return None


def read_bounded(path: Path, bound: int) -> bytes | None:
    """``path``'s bytes; None when it cannot be read or holds more than ``bound`` bytes."""
    return read_within(path, bound, _whole)


def _whole(fh: BinaryIO, size: int) -> bytes | None:
    data = fh.read(size + 1)  # one byte more: a file grown since the stat is seen
    return data if len(data) <= size else None


def read_head_and_body(path: Path, bound: int, head: struct.Struct) -> tuple[bytes, bytes] | None:
    """``path`` read in two parts: its head (``head``, whose last field is the length of the JSON
    header after it, and that header) and the rest. A caller's arrays are views of the second, so
    the first is freed once decoded instead of being held with them. None when it cannot be read,
    holds more than ``bound`` bytes, is shorter than its head says or changed size while read."""
    return read_within(path, bound, partial(_head_and_body, head))


def _head_and_body(head: struct.Struct, fh: BinaryIO, size: int) -> tuple[bytes, bytes] | None:
    if size < head.size:
        return None
    first = fh.read(head.size)
    try:
        json_size = head.unpack(first)[-1]
    except struct.error:  # shorter than its stat said
        return None
    if head.size + json_size > size:
        return None
    whole_head = first + fh.read(json_size)
    body = fh.read(size - len(whole_head) + 1)  # one byte more: a file grown since the stat is seen
    return (whole_head, body) if len(whole_head) + len(body) == size else None


def kept_path(cache_dir: Path, kind: str, root: str) -> Path:
    """Where one root's kept file of ``kind`` lives in ``cache_dir``: named by the root's path
    (or the joined paths of several roots), hashed."""
    name = hashlib.sha256(root.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir / kind / f"{name}.bin"


#: What a malformed kept file raises while decoded; each makes it ignored whole.
DECODE_ERRORS = (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, RecursionError, struct.error)


def load_kept(path: Path, bound: int, head: struct.Struct, decode: Callable[[bytes, bytes], T | None]) -> T | None:
    """``decode(head, body)`` of the kept file at ``path`` (:func:`read_head_and_body`); None when
    it cannot be read, is larger than ``bound`` or does not decode (:data:`DECODE_ERRORS`)."""
    parts = read_head_and_body(path, bound, head)
    if parts is None:
        return None
    try:
        return decode(*parts)
    except DECODE_ERRORS:
        return None


def kept_header(head: bytes, layout: struct.Struct, magic: bytes, version: int, root: str) -> dict[str, Any] | None:
    """The JSON header of a kept file's ``head`` (``layout``: magic, format, the JSON's length;
    then the JSON) when its magic and format are these and it was kept for ``root``; else None."""
    found, found_version, size = layout.unpack_from(head)
    if found != magic or found_version != version or layout.size + size != len(head):
        return None
    header = json.loads(head[layout.size :].decode("utf-8", "surrogatepass"))
    return header if type(header) is dict and header.get("root") == root else None


def save_kept(path: Path, pieces: Iterable[bytes | memoryview] | None) -> None:
    """:func:`replace_file` of a kept file's ``pieces``; nothing when there are none (None: its
    encoder would not keep it)."""
    if pieces is not None:
        replace_file(path, pieces)


#: What separates the strings of a table in a kept file (a path, a name or a key never holds it).
TABLE_SEPARATOR = "\0"


def nul_table(values: Iterable[str]) -> bytes | None:
    """``values`` as one NUL-separated UTF-8 table; None when one holds a NUL (not ours to keep)."""
    joined = list(values)
    if any(TABLE_SEPARATOR in value for value in joined):
        return None
    return TABLE_SEPARATOR.join(joined).encode("utf-8", "surrogatepass")


def replace_file(path: Path, chunks: Iterable[bytes | memoryview]) -> None:
    """``path``'s content made ``chunks``, written in order (see the module docstring)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            os.replace(part, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(part)
