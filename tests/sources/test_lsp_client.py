"""The LSP client's own layers, driven through :class:`LspSession` against real misbehaving
servers (``tests/servers/fault_server.py MODE``): the error translation of the pygls adapter,
request correlation in the wire layer, and the readiness tracker."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cattrs.errors import ClassValidationError
from lsprotocol import types as T
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException

from hybridmap.errors import ServerError
from hybridmap.model import ServerState
from hybridmap.sources.lsp.config import SandboxNeeds, ServerConfig
from hybridmap.sources.lsp.pygls_adapter import ContentModified, RequestTimeout, translate
from hybridmap.sources.lsp.session import LspSession

from ..helpers import FAULT_SERVER, output_files


@contextlib.asynccontextmanager
async def session_for(
    tmp_path: Path, mode: str, *extra: str, ready: str = "initialized", ready_timeout: float = 5.0
) -> AsyncIterator[LspSession]:
    (tmp_path / "store").mkdir(exist_ok=True)
    (tmp_path / "store" / "disk.py").write_text("class Disk:\n    pass\n\n\ndef save(): ...\n")
    config = ServerConfig(
        name="fault",
        command=sys.executable,
        args=(str(FAULT_SERVER), mode, *extra),
        timeout=2.0,
        ready=ready,
        ready_timeout=ready_timeout,
        sandbox=SandboxNeeds(write=tuple(output_files(extra))),
    )
    session = LspSession(config, "python", tmp_path)
    try:
        await session.start()
        yield session
    finally:
        await session.aclose()


def _position(root: Path, line: int = 0) -> T.DefinitionParams:
    uri = (root / "store" / "disk.py").as_uri()
    return T.DefinitionParams(text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(line, 0))


def _hover(root: Path) -> T.HoverParams:
    uri = (root / "store" / "disk.py").as_uri()
    return T.HoverParams(text_document=T.TextDocumentIdentifier(uri=uri), position=T.Position(0, 0))


async def _stderr_says(session: LspSession, text: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if any(text in line for line in session.stderr_tail):
            return True
        await asyncio.sleep(0.05)
    return False


# --- the adapter: what the libraries raise becomes ServerError ---------------------------


def test_translate_maps_library_errors_to_server_errors() -> None:
    where = "srv: textDocument/definition"
    timeout = translate(TimeoutError(), where, 1.5)
    assert isinstance(timeout, RequestTimeout) and str(timeout) == f"{where} timed out after 1.5s"
    modified = translate(JsonRpcException(code=-32801, message="content modified"), where)
    assert isinstance(modified, ContentModified) and str(modified) == f"{where}: content modified"
    failed = translate(JsonRpcException(code=-32603, message="boom"), where)
    assert type(failed) is ServerError and str(failed) == f"{where} failed: boom"
    with pytest.raises(ClassValidationError) as cattrs_error:  # a location whose range end has no character
        get_converter().structure(
            {"uri": "u", "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1}}}, T.Location
        )
    unreadable = translate(cattrs_error.value, where)
    assert type(unreadable) is ServerError
    assert str(unreadable) == f"{where}: unreadable: required field missing @ $.range.end.character"
    exited = translate(RuntimeError("Server process 1 exited with return code: 7"), where)
    assert str(exited) == f"{where}: Server process 1 exited with return code: 7"
    assert translate(ValueError("odd"), where).args == (f"{where}: ValueError: odd",)


async def test_error_replies_fail_their_request_at_once(tmp_path: Path) -> None:
    async with session_for(tmp_path, "error-replies") as session:
        started = time.monotonic()
        with pytest.raises(ServerError) as definition:
            await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path))
        assert str(definition.value) == "fault: textDocument/definition failed: fault: boom"
        assert isinstance(definition.value.__cause__, JsonRpcException)
        symbols = T.DocumentSymbolParams(text_document=_position(tmp_path).text_document)
        with pytest.raises(ServerError, match="fault: odd code"):  # a code no spec knows
            await session.request(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL, symbols)
        with pytest.raises(ServerError, match="unreadable error reply"):  # "error" is a string
            await session.request(T.TEXT_DOCUMENT_HOVER, _hover(tmp_path))
        assert time.monotonic() - started < 1.5  # none waited for its 2 s timeout
        assert session.state is ServerState.READY and session.pending_requests == 0
        assert "timeouts" not in session.troubles


async def test_a_result_lsprotocol_cannot_read_is_kept_as_json(tmp_path: Path) -> None:
    async with session_for(tmp_path, "malformed-result") as session:
        result = await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path))
        assert isinstance(result, list) and result[0]["uri"].endswith("/store/disk.py")  # still usable
        assert await session.request(T.TEXT_DOCUMENT_HOVER, _hover(tmp_path)) == {"contents": {"kind": "plaintext"}}
        untyped = [e for e in session.events if "result kept untyped" in e]
        assert untyped[0] == (
            "textDocument/definition: result kept untyped (required field missing @ $.result.range.end.character)"
        )
        assert len(untyped) == 2 and untyped[1].startswith("textDocument/hover"), session.events
        assert session.state is ServerState.READY and session.pending_requests == 0


async def test_content_modified_is_asked_again(tmp_path: Path) -> None:
    async with session_for(tmp_path, "content-modified") as session:
        result = await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path))
        assert result[0].uri.endswith("/store/disk.py")  # typed: lsprotocol read it
        with pytest.raises(ContentModified):
            await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path, 1), retries=0)
        assert session.pending_requests == 0


# --- the wire: correlation -----------------------------------------------------------------


async def test_replies_to_ids_never_asked_are_counted_and_ignored(tmp_path: Path) -> None:
    async with session_for(tmp_path, "unknown-ids") as session:
        for line in range(3):
            result = await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path, line))
            assert result[0].uri.endswith("/store/disk.py")
        assert session.troubles["unknown"].startswith("9 replies to ids never asked ignored"), session.troubles
        assert session.state is ServerState.READY and session.pending_requests == 0


async def test_a_timed_out_request_is_cancelled_and_forgotten(tmp_path: Path) -> None:
    log = tmp_path / "methods.log"
    async with session_for(tmp_path, "hang", "--log", str(log)) as session:
        with pytest.raises(RequestTimeout, match=r"textDocument/definition timed out after 0.3s"):
            await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path), timeout=0.3)
        assert session.pending_requests == 0
        assert session.troubles["timeouts"] == "1 request(s) timed out, last: textDocument/definition after 0.3s"
        await asyncio.sleep(0.2)
    assert "$/cancelRequest" in log.read_text().split()


async def test_a_server_cannot_stop_or_deafen_the_client(tmp_path: Path) -> None:
    """pygls' client runs pygls' server protocol: a server's ``exit`` notification called
    sys.exit in our process, and its ``shutdown`` request made every later reply be dropped."""
    async with session_for(tmp_path, "client-calls") as session:
        assert await _stderr_says(session, "client answered srv-shutdown: -32601")  # not ours to take
        assert await _stderr_says(session, "client answered srv-config: -32602")  # params unreadable
        result = await session.request(T.TEXT_DOCUMENT_DEFINITION, _position(tmp_path))
        assert result[0].uri.endswith("/store/disk.py")  # still hears replies
        assert session.state is ServerState.READY
        assert any(e.startswith("unreadable workspace/configuration") for e in session.events), session.events


# --- readiness -------------------------------------------------------------------------------


async def test_progress_reports_hold_readiness_until_they_end(tmp_path: Path) -> None:
    async with session_for(tmp_path, "progress-ends", ready="progress") as session:
        assert session.state is ServerState.INDEXING
        assert not await session.wait_ready(0.5)  # both reports begun, one reported on
        assert "ready = progress, 2 progress report(s) open" in session.health()
        session.did_open((tmp_path / "store" / "disk.py").as_uri(), "python", "class Disk:\n    pass\n")
        assert await session.wait_ready(3.0)
        assert session.events[-1] == "ready (progress ended)"
        ready_after = session.seconds_to_ready()
        assert ready_after is not None and ready_after >= 0.5
        assert session.health() == ""


async def test_progress_that_never_ends_is_said_in_health(tmp_path: Path) -> None:
    async with session_for(tmp_path, "progress-forever", ready="progress", ready_timeout=0.5) as session:
        assert not await session.wait_ready(1.0)
        assert session.state is ServerState.INDEXING
        assert "(1 progress report(s) never ended); answers are used but not cached" in session.health()
