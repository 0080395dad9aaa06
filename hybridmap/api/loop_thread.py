"""A private event loop in a daemon thread, for the synchronous facade (:mod:`.sync`).

The facade's calls are coroutines of the async map run on this loop and waited for from the
caller's thread, so the facade works from plain code and from inside someone else's running
loop alike. One owner: everything the async map holds lives on this loop's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import CancelledError, Future
from typing import Any, TypeVar

from ..errors import RequestError

_T = TypeVar("_T")


async def _now(function: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    return function(*args, **kwargs)


class LoopThread:
    """An event loop running in its own daemon thread, and the calls waiting on it."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._calls: set[Future[Any]] = set()
        """Calls other threads are waiting on; :meth:`close` ends them."""
        self._calls_lock = threading.Lock()
        self._closing = False
        self._thread.start()

    def start(self, make: Callable[[], _T]) -> _T:
        """``make()`` run on the loop (what it builds belongs to the loop's thread); the loop is
        stopped if it fails."""
        try:
            return self.call(_now(make))
        except BaseException:
            self._stop()
            raise

    def call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` on the loop and wait for it; :class:`RequestError` once closed."""
        with self._calls_lock:
            if self._closing or self._loop.is_closed():
                coro.close()
                raise RequestError("this map is closed")
            future: Future[_T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
            self._calls.add(future)
        try:
            return future.result()
        except CancelledError:
            if self._closing:  # close() from another thread ended this call
                raise RequestError("this map was closed while the call was running") from None
            raise
        finally:
            with self._calls_lock:
                self._calls.discard(future)

    def on_loop(self, function: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """A plain function run on the loop's thread and waited for."""
        return self.call(_now(function, *args, **kwargs))

    def close(self, last: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Cancel the calls being waited on (they end at once with :class:`RequestError`), run
        ``last()`` on the loop, then stop it. A second close does nothing."""
        with self._calls_lock:
            if self._closing or self._loop.is_closed():
                return
            self._closing = True
            running = list(self._calls)
        for future in running:
            future.cancel()
        try:
            asyncio.run_coroutine_threadsafe(last(), self._loop).result()
        finally:
            self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
