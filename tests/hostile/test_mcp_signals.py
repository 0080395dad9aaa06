"""``hybridmap mcp`` stopped by a signal while its client keeps stdin open (issue 23, item 4).

A host that stops a server sends SIGTERM (or SIGHUP when its terminal goes, SIGINT on Ctrl-C)
without closing the pipe first. The real process, on a real repository with ty running behind
it, must exit within seconds with status 128 + the signal's number, after stopping the language
server: no process carrying a server token of ours is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from hybridmap.frontends.mcp.stdio import LoopStdin
from hybridmap.sources.lsp.launch import TOKEN_VARIABLE

from ..helpers import fixture_repo, require

#: Generous for a loaded 2-core machine: the close itself takes well under a second.
EXIT_WITHIN = 10.0


class Client:
    """Newline-delimited JSON-RPC over the child's pipes, read with a deadline."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.stdin = proc.stdin
        self.fd = proc.stdout.fileno()
        self.pending = b""
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:  # skip notifications and anything else until our answer
            message = self._line(deadline)
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message["result"]  # type: ignore[no-any-return]

    def _line(self, deadline: float) -> dict[str, Any]:
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            assert left > 0, "no answer from the server in time"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                assert chunk, f"the server closed stdout (exit {self.proc.poll()})"
                self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]


def _environ(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return {}
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def token_carriers(tokens: set[str] | None = None, ancestor: int | None = None) -> dict[int, str]:
    """pid -> server token of the live processes carrying one (``tokens``: only those), with
    ``ancestor`` in their parent chain when given."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        token = _environ(pid).get(TOKEN_VARIABLE)
        if token is None or (tokens is not None and token not in tokens) or not _alive(pid):
            continue
        if ancestor is not None:
            up: int | None = pid
            while up not in (None, 0, 1, ancestor):
                up = _parent(up)
            if up != ancestor:
                continue
        found[pid] = token
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_mcp_exits_on_a_signal_with_stdin_open_and_stops_its_servers(signum: signal.Signals, tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    with open(tmp_path / "server.log", "wb") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "cache")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
    servers: dict[int, str] = {}
    try:
        client = Client(proc)
        client.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
        )
        client.send({"method": "notifications/initialized"})
        result = client.request("tools/call", {"name": "repo_map", "arguments": {"server_wait": 60}})
        summary = result["structuredContent"]
        assert summary["servers"]["python"]["state"] == "ready", summary["servers"]
        servers = token_carriers(ancestor=proc.pid)
        assert servers, "ty is up: some process under the server carries a server token"

        started = time.monotonic()
        proc.send_signal(signum)  # stdin stays open: the client did not go away
        try:
            code = proc.wait(timeout=EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {EXIT_WITHIN:.0f} s after {signum.name} with stdin open")
        took = time.monotonic() - started
        assert code == 128 + signum, (code, (tmp_path / "server.log").read_text())
        left = token_carriers(set(servers.values()))
        assert not left, f"server processes left after {signum.name}: {left}"
        log = (tmp_path / "server.log").read_text()
        assert f"{signum.name}: stopping" in log and "closed: every language server stopped" in log, log
        assert "Traceback" not in log, log
        print(f"{signum.name}: exited {code} in {took:.2f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in token_carriers(set(servers.values())):  # a failed run leaves nothing on the machine
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()


def test_stdin_read_on_the_loop_gives_the_lines_readline_would() -> None:
    """Lines split anywhere across reads (a 300 kB one, a UTF-8 character cut in two), bad bytes
    replaced, CRLF kept for the JSON parser, the last line without its newline; and waiting for a
    line that never comes is cancelled at once."""
    long = "x" * 300_000
    data = f'{{"a": "{long}"}}\n'.encode() + "é€\n".encode() + b"\xff\r\n" + b"last"
    read_fd, write_fd = os.pipe()

    def writer() -> None:  # small writes: every line and the character are cut by reads
        for start in range(0, len(data), 7001):
            os.write(write_fd, data[start : start + 7001])
        os.close(write_fd)

    async def main() -> list[str]:
        thread = threading.Thread(target=writer)
        thread.start()
        lines = [line async for line in LoopStdin(read_fd)]
        thread.join()
        return lines

    try:
        assert asyncio.run(main()) == [f'{{"a": "{long}"}}\n', "é€\n", "\ufffd\r\n", "last"]
    finally:
        os.close(read_fd)

    silent_read, silent_write = os.pipe()  # a client that keeps the pipe open and says nothing

    async def first_line() -> str:
        async for line in LoopStdin(silent_read):
            return line
        return ""

    async def cancelled() -> float:
        task = asyncio.create_task(first_line())
        await asyncio.sleep(0.1)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    try:
        assert asyncio.run(cancelled()) < 1.0
    finally:
        os.close(silent_read)
        os.close(silent_write)
