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
import tempfile
from collections.abc import Callable, Iterable
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
