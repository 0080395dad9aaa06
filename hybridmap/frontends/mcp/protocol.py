"""What the server does at the protocol's level, around the SDK's tools and resources.

- :class:`Subscriptions`: ``resources/subscribe`` and ``resources/unsubscribe`` (clients that
  negotiate a 2025 protocol by the ``initialize`` handshake). Only a subscribed resource is
  announced, once per change; a client that never subscribed hears nothing (the spec's
  contract, which the SDK leaves to the server). Clients of the 2026-07-28 protocol listen
  through the SDK's own ``subscriptions/listen`` stream (its subscription bus) instead.
- :func:`tool_list_middleware`: the tool list every conversation pays for, kept small, and
  the arguments each tool takes made strict (an unknown argument is a tool error naming it,
  not silently dropped). pydantic's schemas repeat each property's name as a ``title``, spell
  an optional value as ``anyOf [X, null]`` and the output schemas alone cost more than the rest
  of the list (3,946 of 7,634 cl100k tokens, measured on the eleven tools); the structured
  results stay the same whether or not their schema is listed (``--output-schemas`` lists it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

#: JSON-RPC's code for invalid parameters: a subscription to a resource we do not serve.
INVALID_PARAMS = -32602

log = logging.getLogger("hybridmap.mcp")


class Subscriptions:
    """Which resources the client asked to hear about, and the session to tell it through.

    ``hybridmap mcp`` serves one client over stdio, so one subscriber per resource: the SDK
    makes a session object per request, all of one connection, and a notification sent through
    any of them goes on that connection's own channel."""

    def __init__(self, known: Callable[[str], bool]) -> None:
        self._known = known
        self._subscribers: dict[str, Any] = {}

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        if not self._known(params.uri):
            raise MCPError(code=INVALID_PARAMS, message=f"no resource {params.uri!r}")
        self._subscribers[params.uri] = ctx.session
        log.info("resources/subscribe %s", params.uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        self._subscribers.pop(params.uri, None)
        log.info("resources/unsubscribe %s", params.uri)
        return EmptyResult()

    async def updated(self, uri: str) -> None:
        """Tell the subscriber of ``uri``, if there is one, that it changed (best effort)."""
        session = self._subscribers.get(uri)
        if session is None:
            return
        try:
            await session.send_resource_updated(uri)
        except Exception:  # noqa: BLE001 - the client is gone: it is not told again
            self._subscribers.pop(uri, None)


# --- the tool list -------------------------------------------------------------------------------


#: Defaults that say what leaving the argument out says anyway.
_EMPTY_DEFAULTS: tuple[object, ...] = ([], "", False, None)


def compact_schema(schema: Any) -> Any:
    """A JSON schema with the same meaning in fewer tokens: no ``title`` beside a property
    name, ``anyOf [X, {"type": "null"}]`` as X (an argument left out means the same as null
    here: every nullable argument defaults to null), no empty default, and objects closed to
    unknown keys."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: {name: compact_schema(sub) for name, sub in value.items()}
        if key in ("properties", "$defs") and isinstance(value, dict)  # names, not keywords
        else compact_schema(value)
        for key, value in schema.items()
        if key != "title"
    }
    if "default" in out and any(
        out["default"] == empty and type(out["default"]) is type(empty) for empty in _EMPTY_DEFAULTS
    ):
        del out["default"]
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [option for option in options if option != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out}
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


def compact_tool(tool: dict[str, Any], *, output_schemas: bool) -> dict[str, Any]:
    """One ``tools/list`` entry, compacted; the annotations' title repeats the tool's own."""
    out = dict(tool)
    out["inputSchema"] = compact_schema(tool["inputSchema"])
    if not output_schemas:
        out.pop("outputSchema", None)
    annotations = out.get("annotations")
    if isinstance(annotations, dict):
        # The spec: destructive and idempotent hints mean something only when not read-only.
        dropped = {"title"} if annotations.get("title") == out.get("title") else set()
        if annotations.get("readOnlyHint") is True:
            dropped |= {"destructiveHint", "idempotentHint"}
        out["annotations"] = {k: v for k, v in annotations.items() if k not in dropped}
    if isinstance(out.get("description"), str):
        out["description"] = " ".join(out["description"].split())  # docstring indentation
    return out


def unknown_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    return sorted(name for name in arguments if name not in properties)


def _refused_arguments(schemas: Mapping[str, Mapping[str, Any]], params: Mapping[str, Any]) -> str | None:
    """Why a ``tools/call`` is refused for its argument names (None: it is not)."""
    name = params.get("name")
    arguments = params.get("arguments") or {}
    schema = schemas.get(name) if isinstance(name, str) else None
    if schema is None or not isinstance(arguments, Mapping):
        return None  # an unknown tool or a malformed call: the SDK's own error says so
    unknown = unknown_arguments(schema, arguments)
    if not unknown:
        return None
    takes = ", ".join(sorted(schema.get("properties", {}))) or "none"
    text = f"unknown argument {', '.join(map(repr, unknown))} for {name}; it takes: {takes}"
    log.info("%s: error: %s", name, text)
    return text


def tool_list_middleware(list_tools: Callable[[], Any], *, output_schemas: bool) -> Any:
    """Middleware: ``tools/list`` compacted; a ``tools/call`` with an argument no tool takes is
    a tool error (``isError``, so the model reads and corrects it, as the spec asks of input
    validation errors) that names the argument and the ones the tool takes."""
    schemas: dict[str, Mapping[str, Any]] = {}

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and isinstance(ctx.params, Mapping):
            if not schemas:
                schemas.update({tool.name: tool.input_schema for tool in await list_tools()})
            if (refusal := _refused_arguments(schemas, ctx.params)) is not None:
                return {"content": [{"type": "text", "text": refusal}], "isError": True}
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            result["tools"] = [compact_tool(tool, output_schemas=output_schemas) for tool in result["tools"]]
        return result

    return middleware


# --- progress ------------------------------------------------------------------------------------

#: Least seconds between two progress notifications of one request (the last one always goes).
PROGRESS_INTERVAL = 0.5


class ProgressReporter:
    """``notifications/progress`` for one tool call, from a ``progress(phase, done, total)``
    callback called on any thread; a no-op when the client sent no progress token (the SDK's
    rule). Throttled, so a file-by-file callback is a few notifications a second; in order,
    since each is sent by one task after the one before."""

    def __init__(self, report: Callable[[float, float | None, str | None], Awaitable[None]]) -> None:
        self._report = report
        self._loop = asyncio.get_running_loop()
        self._last = 0.0
        self._sending: asyncio.Future[None] | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        self._loop.call_soon_threadsafe(self._send, phase, done, total)

    def _send(self, phase: str, done: int, total: int) -> None:
        before = self._sending

        async def send() -> None:
            if before is not None:
                await asyncio.gather(before, return_exceptions=True)
            try:
                await self._report(float(done), float(total), f"{phase}: {done}/{total}")
            except Exception:  # a client that went away: the tool's answer still counts
                log.debug("progress not sent", exc_info=True)

        self._sending = asyncio.ensure_future(send())

    async def drain(self) -> None:
        """Wait for the notifications already scheduled (before the tool's result goes)."""
        await asyncio.sleep(0)  # run callbacks scheduled from a worker thread just before
        if self._sending is not None:
            await asyncio.gather(self._sending, return_exceptions=True)
