"""Everything the LSP client takes from pygls, lsprotocol and cattrs, and the one place where
their exceptions become ours (:func:`translate`).

What we use, all of it public API:

- lsprotocol's types and ``METHOD_TO_TYPES`` (which message and result type a method has);
- lsprotocol's cattrs converter (``get_converter``, the one pygls uses) to structure what a
  server sends and unstructure what we send;
- pygls' exception tree: ``JsonRpcException.from_error`` picks the class for an error reply
  by its code.

What we do not use: pygls' client and protocol classes. ``LanguageClient`` runs pygls'
*server* protocol, whose built-in handlers a server can trigger: an ``exit`` notification from
the server called ``sys.exit`` in our process, and a ``shutdown`` request cancelled every
pending request and made the protocol drop all later messages (a session that looks ready and
is deaf). Its request bookkeeping (futures and result types per id) is private and was reached
into from four places. :mod:`.wire` does the correlation and dispatch itself, with this
module's :class:`Codec`.
"""

from __future__ import annotations

import json
from typing import Any

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import types as T
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from ...errors import ServerError

MsgId = str | int

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CONTENT_MODIFIED = -32801


class ContentModified(ServerError):
    """The server dropped a request because a document changed under it (-32801): ask again."""


class RequestTimeout(ServerError):
    """No answer within the request's time limit (it was cancelled with ``$/cancelRequest``)."""


class Unreadable(Exception):
    """A message lsprotocol cannot read (its params or result do not fit the method's type)."""


class Codec:
    """JSON-RPC messages to bytes and back, typed by lsprotocol."""

    def __init__(self) -> None:
        self._converter = get_converter()

    # --- what we send -----------------------------------------------------------------

    def request(self, msg_id: MsgId, method: str, params: Any) -> bytes:
        return self._message({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def notification(self, method: str, params: Any) -> bytes:
        return self._message({"jsonrpc": "2.0", "method": method, "params": params})

    def result(self, msg_id: MsgId, result: Any) -> bytes:
        return self._message({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def error(self, msg_id: MsgId, code: int, message: str) -> bytes:
        return self._message({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def _message(self, message: dict[str, Any]) -> bytes:
        for key in ("params", "result"):
            if key in message:
                message[key] = self._converter.unstructure(message[key])
        if message.get("params", 0) is None:
            del message["params"]  # JSON-RPC: omitted, not null (shutdown, exit)
        # ASCII escapes, as pygls sends: a lone surrogate (a file that is not UTF-8) stays sendable.
        body = json.dumps(message, default=self._converter.unstructure).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    # --- what a server sends ------------------------------------------------------------

    def params(self, data: dict[str, Any]) -> Any:
        """The params of a server's request or notification, typed; raises :class:`Unreadable`."""
        message_type = T.METHOD_TO_TYPES.get(str(data.get("method")), (None,))[0]
        if message_type is None:
            return data.get("params")
        try:
            return self._converter.structure(data, message_type).params
        except (BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
            raise Unreadable(_why(exc)) from exc

    def result_of(self, method: str, data: dict[str, Any]) -> tuple[Any, str]:
        """A reply's result, typed; when lsprotocol cannot read it, the plain JSON value and why.

        Kept rather than lost: pygls 2.1.1 with cattrs >= 25 could not read the initialize reply
        of pylsp and ty, and every reader of results also takes plain JSON."""
        response_type = T.METHOD_TO_TYPES.get(method, (None, None))[1]
        if response_type is None:
            return data.get("result"), ""
        try:
            return self._converter.structure(data, response_type).result, ""
        except (BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
            return data.get("result"), _why(exc)

    def error_of(self, data: dict[str, Any]) -> JsonRpcException:
        """The exception an error reply stands for (pygls picks its class by code)."""
        raw = data.get("error")
        try:
            error = self._converter.structure(raw, T.ResponseError)
        except (BaseValidationError, TypeError, ValueError, KeyError, AttributeError) as exc:
            return JsonRpcInternalError(message=f"unreadable error reply: {_why(exc)}: {str(raw)[:80]}")
        typed: JsonRpcException = JsonRpcException.from_error(error)
        return typed


def lost(why: str) -> JsonRpcException:
    """What a request fails with when its reply can never come (unreadable, discarded)."""
    return JsonRpcInternalError(message=why)


def translate(exc: BaseException, where: str, timeout: float | None = None) -> ServerError:
    """The one place where pygls/lsprotocol/cattrs/OS exceptions become :class:`ServerError`.

    ``where`` names the server and the method (``"ty: textDocument/definition"``)."""
    if isinstance(exc, ServerError):
        return exc
    if isinstance(exc, TimeoutError):
        return RequestTimeout(f"{where} timed out after {timeout or 0:g}s")
    if isinstance(exc, JsonRpcException):
        # pygls maps -32801 to JsonRpcContentModified only in some versions: check the code.
        if getattr(exc, "code", None) == CONTENT_MODIFIED:
            return ContentModified(f"{where}: content modified")
        return ServerError(f"{where} failed: {exc}")
    if isinstance(exc, (Unreadable, BaseValidationError)):
        return ServerError(f"{where}: unreadable: {_why(exc)}")
    if isinstance(exc, (RuntimeError, OSError)):  # the server exited; a closed pipe
        return ServerError(f"{where}: {exc}")
    return ServerError(f"{where}: {type(exc).__name__}: {exc}")


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseValidationError):  # cattrs: where in the message it did not fit
        return "; ".join(transform_error(exc))[:200]
    return f"{type(exc).__name__}: {exc}"[:200]
