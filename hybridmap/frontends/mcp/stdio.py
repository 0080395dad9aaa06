"""The stdio transport with stdin read on the event loop, so a stopped server stops at once.

The SDK's ``stdio_server()`` reads stdin through ``anyio.wrap_file``: every line is a blocking
``readline()`` in a worker thread, which cancellation cannot interrupt (anyio waits for the
thread). A server told to stop (SIGTERM) while its client keeps the pipe open and says nothing
therefore waited for the client's next line, forever (issue 23). Here the loop watches the
descriptor (``add_reader``) and ``os.read`` runs only once it is readable, so it never blocks
and the wait is cancelled like any other. Descriptors the loop cannot watch (a regular file, the
null device: ``epoll`` refuses them) never block for long either: the SDK reads those itself.

Like the SDK, fd 0 is pointed at the null device while serving (children read EOF, never the
protocol) and restored afterwards; stdout is left to the SDK (fd 1 diverted to stderr).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

#: Bytes read per readable event: the SDK gets a line as soon as its last chunk arrived.
CHUNK = 1 << 16


class LoopStdin:
    """Lines (with their ``\\n``; UTF-8, bad bytes replaced, as the SDK decodes) from a
    descriptor the event loop watches. Read only as the server asks for lines: no read-ahead
    beyond one chunk, so a client that sends faster than we serve is held back by the pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        parts: list[str] = []  # the line so far: a long line arrives in many chunks, joined once
        while chunk := await self._read():
            *complete, rest = decoder.decode(chunk).split("\n")
            for piece in complete:
                parts.append(piece)
                yield "".join(parts) + "\n"
                parts = []
            if rest:
                parts.append(rest)
        if tail := "".join(parts) + decoder.decode(b"", final=True):
            yield tail  # a last line without its newline, as readline() returns it

    async def _read(self) -> bytes:
        """The next chunk, b"" at the end (or when the descriptor fails: the client is gone)."""
        loop = asyncio.get_running_loop()
        while True:
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self.fd, _ready, readable)
            try:
                await readable  # cancellation lands here, never in a read
            finally:
                loop.remove_reader(self.fd)
            try:
                return os.read(self.fd, CHUNK)  # readable: returns at once
            except BlockingIOError:  # another reader of a shared non-blocking descriptor was first
                continue
            except OSError:  # EIO from a hung-up terminal, and the like
                return b""


def _ready(readable: asyncio.Future[None]) -> None:
    if not readable.done():
        readable.set_result(None)


def _watchable(fd: int) -> bool:
    """Can the loop wait on ``fd``? (epoll refuses regular files and the null device.)"""
    loop = asyncio.get_running_loop()
    try:
        loop.add_reader(fd, lambda: None)
    except (OSError, ValueError):
        return False
    loop.remove_reader(fd)
    return True


@contextlib.contextmanager
def _claim_stdin() -> Iterator[LoopStdin | None]:
    """A :class:`LoopStdin` on a private duplicate of fd 0, with fd 0 pointed at the null
    device until the end; None (nothing claimed: the SDK reads fd 0) when the loop cannot
    watch stdin or fd 0 is closed."""
    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3) if _watchable(0) else None
    except OSError:
        private = None
    if private is None:
        yield None
        return
    diverted = False
    with contextlib.suppress(OSError):  # not diverted: still read on the loop, through the duplicate
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
            diverted = True
        finally:
            os.close(null)
    try:
        yield LoopStdin(private)
    finally:
        if diverted:
            with contextlib.suppress(OSError):
                os.dup2(private, 0)
        os.close(private)


async def run_stdio(server: MCPServer[Any]) -> None:
    """``server.run_stdio_async()``, with stdin read on the loop: returns when the client closes
    stdin; cancelling it (a signal) ends it at once, whatever the client does."""
    lowlevel = server._lowlevel_server  # run_stdio_async takes no streams: this is its body, with ours
    with _claim_stdin() as stdin:
        # The SDK only iterates stdin (``async for line in stdin``): any async iterable of lines does.
        async with stdio_server(stdin=cast("anyio.AsyncFile[str] | None", stdin)) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
