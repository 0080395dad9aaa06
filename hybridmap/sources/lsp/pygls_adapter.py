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

import functools
import json
import threading
from typing import Any

from cattrs import Converter, transform_error
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


#: Serializes building and preparing the process's one converter: two servers starting at once
#: each prepare it in a worker thread, and lsprotocol's ``get_converter`` resolving its forward
#: references in two threads at once raised "dictionary changed size during iteration".
_CONVERTER_LOCK = threading.Lock()


def shared_converter() -> Converter:
    """lsprotocol's converter, one per process. ``get_converter()`` builds a new one per call, and
    cattrs generates (and compiles) a function per message type in each converter at its first
    use: one converter per session made every server start pay it again on the event loop
    (measured: 60 regenerations of one capability type for four servers). The converter holds
    only code derived from lsprotocol's types, so sharing it shares no repository state."""
    with _CONVERTER_LOCK:
        return _built_converter()


@functools.cache
def _built_converter() -> Converter:
    return get_converter()


class Codec:
    """JSON-RPC messages to bytes and back, typed by lsprotocol."""

    def __init__(self) -> None:
        self._converter = shared_converter()

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


#: Every method the client sends or reads (:mod:`.session`, :mod:`.wire`, :mod:`.dispatch`).
USED_METHODS = (
    T.INITIALIZE,
    T.INITIALIZED,
    T.SHUTDOWN,
    T.EXIT,
    T.TEXT_DOCUMENT_DID_OPEN,
    T.TEXT_DOCUMENT_DID_CHANGE,
    T.TEXT_DOCUMENT_DID_CLOSE,
    T.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
    T.TEXT_DOCUMENT_DEFINITION,
    T.TEXT_DOCUMENT_IMPLEMENTATION,
    T.TEXT_DOCUMENT_REFERENCES,
    T.TEXT_DOCUMENT_HOVER,
    T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
    T.WORKSPACE_SYMBOL,
    T.WORKSPACE_DID_CHANGE_WATCHED_FILES,
    T.WORKSPACE_CONFIGURATION,
    T.WORKSPACE_WORKSPACE_FOLDERS,
    T.WORKSPACE_APPLY_EDIT,
    T.WINDOW_WORK_DONE_PROGRESS_CREATE,
    T.WINDOW_SHOW_MESSAGE_REQUEST,
    T.WINDOW_SHOW_MESSAGE,
    T.WINDOW_LOG_MESSAGE,
    T.CLIENT_REGISTER_CAPABILITY,
    T.CLIENT_UNREGISTER_CAPABILITY,
    T.PROGRESS,
)


def prepare_codec() -> None:
    """Generate the converter's code for every message type we use, now (call it in a worker
    thread). cattrs writes and compiles a function per type at its first use; on the event loop
    that stalled a first hybrid map's loop ~0.3 s (measured with four servers starting), on top of
    the ~0.5 s import of lsprotocol's types, which importing this module does. Once per process."""
    with _CONVERTER_LOCK:
        _prepare_once(_built_converter())


@functools.cache
def _prepare_once(converter: Converter) -> None:
    # Twice: cattrs 24 clears its whole hook cache whenever it meets a new sequence or mapping
    # type, so the first pass leaves most of the hooks it made uncached; the second one finds
    # every such type registered and fills the cache for good (measured: a first unstructure of
    # InitializeParams generated 82 functions after one pass, none after two).
    for _ in range(2):
        for method in USED_METHODS:
            for kind in T.METHOD_TO_TYPES.get(method, ())[:3]:  # message, response, params
                if kind is not None:
                    converter.get_structure_hook(kind)
                    converter.get_unstructure_hook(kind)
