"""JSON-RPC over a server's stdout and stdin: our requests and their replies, the server's
requests and notifications, and what could not be read.

Framing is :mod:`.framing` (pygls' reader trusts ``Content-Length``); typing is
:mod:`.pygls_adapter`. What this layer adds:

- **Correlation.** Each request we send is pending under its id until its reply, an unreadable
  reply that names it, the server's exit (:meth:`Channel.fail_all`) or our cancel. A reply to an
  id we never sent is ignored and counted; one to an id we cancelled is dropped quietly.
- **Bad messages.** A body that is not JSON-RPC costs only itself; the request it answered (its
  id found in the text) fails at once instead of timing out. A body over the size limit was
  never buffered (:class:`~.framing.FrameReader`); its request fails the same way.
- **The server's requests** are answered from :class:`~.handlers.ClientHandlers`, or with
  ``MethodNotFound``; params lsprotocol cannot read get ``InvalidParams``. A handler's bug
  answers ``InternalError`` and never stops the reader.
- Bodies over 1 MiB are parsed and typed off the event loop (12 MB of locations: 1.4 s).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .framing import SAMPLE_BYTES, Frame, FrameReader, ids_in_sample
from .handlers import ClientHandlers
from .pygls_adapter import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, Codec, MsgId, Unreadable, lost
from .readiness import Health

#: Bodies larger than this are parsed in a thread.
_OFF_LOOP_BYTES = 1 << 20
#: Ids of cancelled requests remembered, so that their late replies are not "unknown".
_CANCELLED_KEPT = 256


@dataclass(slots=True)
class _Pending:
    method: str
    future: asyncio.Future[Any]


class Channel:
    def __init__(
        self,
        write: Callable[[bytes], None],
        handlers: ClientHandlers,
        health: Health,
        max_message_bytes: int,
        note: Callable[[str], None],
    ) -> None:
        self._write = write
        self._codec = Codec()
        self._handlers = handlers
        self._health = health
        self._max_bytes = max_message_bytes
        self._note = note
        self._pending: dict[MsgId, _Pending] = {}
        self._cancelled: deque[MsgId] = deque(maxlen=_CANCELLED_KEPT)
        self.frames: FrameReader | None = None

    @property
    def pending(self) -> int:
        """Requests sent and not yet answered, failed or cancelled."""
        return len(self._pending)

    # --- what we send -----------------------------------------------------------------

    def request(self, method: str, params: Any) -> tuple[MsgId, asyncio.Future[Any]]:
        msg_id = f"hm-{os.urandom(6).hex()}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = _Pending(method, future)
        try:
            self._write(self._codec.request(msg_id, method, params))
        except BaseException:
            del self._pending[msg_id]
            raise
        return msg_id, future

    def notify(self, method: str, params: Any) -> None:
        self._write(self._codec.notification(method, params))

    def cancel(self, msg_id: MsgId) -> None:
        """Stop waiting for ``msg_id`` and ask the server to drop it (``$/cancelRequest``)."""
        pending = self._pending.pop(msg_id, None)
        if pending is None:
            return
        self._cancelled.append(msg_id)
        if not pending.future.done():
            pending.future.cancel()
        self.notify("$/cancelRequest", {"id": msg_id})

    def fail(self, msg_id: object, error: BaseException) -> bool:
        """Fail our pending request ``msg_id`` now instead of letting it time out."""
        pending = self._pending.pop(msg_id, None) if isinstance(msg_id, (str, int)) else None
        if pending is None or pending.future.done():
            return False
        pending.future.set_exception(error)
        return True

    def fail_all(self, error: BaseException) -> None:
        for msg_id in list(self._pending):
            self.fail(msg_id, error)

    # --- what the server sends ----------------------------------------------------------

    async def read(self, stdout: asyncio.StreamReader) -> None:
        """Read and handle messages until the output ends (exceptions: the reader is broken)."""
        frames = self.frames = FrameReader(stdout, self._max_bytes, self._health.noise)
        while True:
            frame = await frames.next()
            if frame is None:
                if frames.partial is not None:
                    self._note(f"output ended inside a message ({frames.partial[0]} of {frames.partial[1]} bytes)")
                return
            await self._dispatch(frame)

    async def _dispatch(self, frame: Frame) -> None:
        if frame.body is None:
            self._health.heard()  # it is talking, just too much
            what = self._health.discarded(frame.size)
            self._fail_named(frame.sample, what)
            return
        off_loop = frame.size > _OFF_LOOP_BYTES
        try:
            data = await asyncio.to_thread(_decode, frame.body) if off_loop else _decode(frame.body)
        except (ValueError, RecursionError) as exc:
            what = f"not JSON ({exc}): {frame.body[:60]!r}"
            self._health.bad_message(what)
            self._fail_named(
                frame.body[:SAMPLE_BYTES] + b"\n" + frame.body[-SAMPLE_BYTES:], f"unreadable reply: {what}"
            )
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            self._health.bad_message(f"not a JSON-RPC 2.0 message: {frame.body[:60]!r}")
            return
        self._health.heard()
        if "method" not in data:
            await self._on_reply(data, off_loop)
        elif "id" in data:
            self._on_request(data)
        else:
            self._on_notification(data)

    def _fail_named(self, sample: bytes, why: str) -> None:
        for msg_id in ids_in_sample(sample):
            if self.fail(msg_id, lost(why)):
                return  # the request it answered fails now instead of timing out

    async def _on_reply(self, data: dict[str, Any], off_loop: bool) -> None:
        message_id = data.get("id")
        pending = self._pending.pop(message_id, None) if isinstance(message_id, (str, int)) else None
        if pending is None:
            if message_id not in self._cancelled:
                self._health.unknown_reply(message_id)
            return
        if pending.future.done():
            return
        if "error" in data:
            pending.future.set_exception(self._codec.error_of(data))
            return
        if off_loop:
            result, why = await asyncio.to_thread(self._codec.result_of, pending.method, data)
        else:
            result, why = self._codec.result_of(pending.method, data)
        if why:  # kept as plain JSON: every reader of results takes that too
            self._note(f"{pending.method}: result kept untyped ({why})")
        if not pending.future.done():
            pending.future.set_result(result)

    def _on_request(self, data: dict[str, Any]) -> None:
        method, msg_id = str(data["method"]), data["id"]
        handler = self._handlers.requests.get(method)
        if handler is None:
            self._write(self._codec.error(msg_id, METHOD_NOT_FOUND, f"Method Not Found: {method}"))
            return
        try:
            params = self._codec.params(data)
        except Unreadable as exc:  # the server waits for an answer: say why there is none
            self._note(f"unreadable {method}: {exc}")
            self._write(self._codec.error(msg_id, INVALID_PARAMS, f"hybridmap could not read the params of {method}"))
            return
        try:
            result = handler(params)
        except Exception as exc:  # noqa: BLE001 - a handler's bug must not stop the reader
            self._note(f"handling {method} failed: {type(exc).__name__}: {exc}")
            self._write(self._codec.error(msg_id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"))
            return
        self._write(self._codec.result(msg_id, result))

    def _on_notification(self, data: dict[str, Any]) -> None:
        method = str(data["method"])
        handler = self._handlers.notifications.get(method)
        if handler is None:
            return
        try:
            handler(self._codec.params(data))
        except Unreadable as exc:
            self._note(f"unreadable {method}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a handler's bug must not stop the reader
            self._note(f"handling {method} failed: {type(exc).__name__}: {exc}")


def _decode(body: bytes) -> Any:
    # Invalid UTF-8 inside a string (a hover of a Latin-1 file) costs a character, not the message.
    return json.loads(body.decode("utf-8", "replace"))
