"""The LSP base protocol on a byte stream: ``Content-Length`` headers, then a JSON body.

pygls 2.1.1 reads it trusting the server: a body shorter than its ``Content-Length``
swallows the next header and the reader never finds one again (the session looks
alive but is deaf); any ``Content-Length`` is buffered whole (a server can make us
allocate what it likes). :class:`FrameReader` is what ``session.py`` reads with instead:

- a line that is not a header is *noise* (a banner a wrapper printed, the tail of a
  body that was cut short): it is reported and skipped, and a ``Content-Length:``
  inside it resynchronizes the stream, so one bad message costs only itself;
- a body over ``max_bytes`` is read and thrown away in small chunks (memory stays
  bounded, the stream stays in sync) and only its first and last bytes are kept,
  so the caller can fail the request it answered;
- :attr:`FrameReader.partial` says how far a body that is still arriving got, so a
  caller that sees no message for long can say "stuck inside a message".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*(\d{1,12})[ \t]*$", re.I)
_OTHER_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:")
_CHUNK = 1 << 16
#: How many bytes of each end of a discarded body are kept (enough to find its ``"id"``).
SAMPLE_BYTES = 512


@dataclass(frozen=True, slots=True)
class Frame:
    """One message as framed on the wire."""

    size: int
    """Its ``Content-Length``."""
    body: bytes | None
    """The body, or None when it was larger than the reader's limit and was discarded."""
    sample: bytes = b""
    """For a discarded body: its first and last :data:`SAMPLE_BYTES` bytes."""


class FrameReader:
    """Read framed messages from ``stream``; see the module docstring for what it tolerates."""

    def __init__(
        self, stream: asyncio.StreamReader, max_bytes: int, on_noise: Callable[[bytes], None] | None = None
    ) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self._on_noise = on_noise
        self.partial: tuple[int, int] | None = None
        """(bytes received, bytes announced) of a body still arriving; None between messages."""

    async def next(self) -> Frame | None:
        """The next message, or None when the stream ends (between or inside a message)."""
        size = await self._headers()
        if size is None:
            return None
        if size <= self._max_bytes:
            body = await self._read_body(size)
            return None if body is None else Frame(size, body)
        sample = await self._discard_body(size)
        return None if sample is None else Frame(size, None, sample)

    async def _headers(self) -> int | None:
        size: int | None = None
        while True:
            try:
                line = await self._stream.readline()
            except ValueError:  # a line over the stream's limit: asyncio dropped it
                self._noise(b"<a line longer than the stream limit>")
                size = None
                continue
            if not line:
                return None
            text = line.rstrip(b"\r\n")
            if not text:
                if size is not None:
                    return size
                continue  # a blank line outside a header block
            match = _CONTENT_LENGTH.search(text)
            if match is not None:
                if match.start() > 0:
                    self._noise(text[: match.start()])
                size = int(match.group(1))
            elif _OTHER_HEADER.match(text) is None:
                self._noise(text)
                size = None  # whatever header we had belonged to the noise
            # other headers (Content-Type) are allowed and ignored

    async def _read_body(self, size: int) -> bytes | None:
        self.partial = (0, size)
        chunks: list[bytes] = []
        received = 0
        try:
            while received < size:
                chunk = await self._stream.read(min(_CHUNK, size - received))
                if not chunk:
                    return None
                chunks.append(chunk)
                received += len(chunk)
                self.partial = (received, size)
        finally:
            if received >= size:
                self.partial = None
        return b"".join(chunks)

    async def _discard_body(self, size: int) -> bytes | None:
        self.partial = (0, size)
        head = bytearray()
        tail = b""
        received = 0
        while received < size:
            chunk = await self._stream.read(min(_CHUNK, size - received))
            if not chunk:
                return None
            if len(head) < SAMPLE_BYTES:
                head += chunk[: SAMPLE_BYTES - len(head)]
            tail = (tail + chunk)[-SAMPLE_BYTES:]
            received += len(chunk)
            self.partial = (received, size)
        self.partial = None
        return bytes(head) + b"\n" + tail

    def _noise(self, data: bytes) -> None:
        if self._on_noise is not None:
            self._on_noise(data)


_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.){1,200}"|-?\d{1,18})')


def ids_in_sample(sample: bytes) -> list[str | int]:
    """Request ids a discarded response may carry (top-level ``"id"`` is at one end in practice)."""
    out: list[str | int] = []
    for match in _ID.finditer(sample):
        raw = match.group(1)
        out.append(raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw))
    return out
