"""A file the next process reads, replaced whole: never seen half written, never readable by others;
read back bounded.

What a process keeps for the next (the files' states, the lexical models) is written to a private
temporary file beside its place (``mkstemp``: 0600, in a directory made 0700), then renamed over
it: a reader meets the old file or the new one. Best effort: a disk that refuses leaves the old
file, or none, and nothing behind. :func:`read_bounded` (or :func:`read_within`, for a reader of
its own) reads one back, refusing one larger than its bound: the buffer is sized from the file,
not from the bound (``read(bound + 1)`` asked the allocator for the bound, 6 GB for a lexicon at
``max_files`` 200,000, a ``MemoryError`` where memory is not overcommitted).
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import BinaryIO, TypeVar

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
