"""A server's answer, asked once and cached only when it can be trusted.

Every question we put to a server (a file's symbols, a hover, where a name points) follows the
same rule: look in the cache; else ask; store the answer only if the server was ready both
when asked and when it answered. A server still indexing may answer from half a project
("outside the repository", no symbols yet), and a cached answer is never asked again: such an
answer is used for this map but kept out of the cache, and the question is asked again once
the server is ready (the caller sees ``complete=False``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ...store.cache import Cache

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Answer(Generic[V]):
    value: V
    complete: bool
    """From a server ready when asked and when it answered (or from the cache): final."""
    cached: bool
    """Read from the cache: nothing was asked."""


def _same(value: V) -> object:
    return value


async def cached_answer(
    cache: Cache,
    key: str,
    ask: Callable[[], Awaitable[V | None]],
    ready: Callable[[], bool],
    decode: Callable[[object], V | None],
    encode: Callable[[V], object | None] = _same,
) -> Answer[V] | None:
    """The answer under ``key``: from the cache when ``decode`` accepts what is there, else from
    ``ask()`` (which opens the file and asks; None: nothing could be asked). It is stored as
    ``encode(value)`` (None: not worth storing) only when ``ready()`` held before and after
    asking. A :class:`~hybridmap.errors.ServerError` from ``ask`` reaches the caller."""
    # Asked on the event loop: the local cache is a SQLite read (~20 µs, less than a thread hop),
    # but a shared cache is a network round trip, up to its timeout: never on the caller's loop.
    hits = await asyncio.to_thread(cache.get_many, [key]) if cache.remote else cache.get_many([key])
    hit = hits.get(key)
    if hit is not None:
        value = decode(hit)
        if value is not None:
            return Answer(value, complete=True, cached=True)
    ready_when_asked = ready()
    value = await ask()
    if value is None:
        return None
    complete = ready_when_asked and ready()
    if complete and (stored := encode(value)) is not None:
        if cache.remote:
            await asyncio.to_thread(cache.set_many, {key: stored})
        else:
            cache.set_many({key: stored})
    return Answer(value, complete=complete, cached=False)
