"""A real (tiny) language server that misbehaves on purpose, speaking JSON-RPC over stdio.

    python fault_server.py MODE

Modes: ``ok`` (answers definition with a fixed location), ``crash-on-request`` (exits when
the first definition request arrives), ``hang`` (never answers definition), ``exit-now``
(exits before initialize), ``flood-stderr`` (writes megabytes to stderr, then behaves),
``spawn-child`` (starts a sleeping grandchild first, to test process-tree cleanup).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time


def read_message() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(sys.stdin.buffer.read(length))


def send(payload: dict) -> None:
    body = json.dumps(payload).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit-now":
        sys.exit(3)
    if mode == "spawn-child":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if mode == "flood-stderr":
        chunk = "x" * 1023 + "\n"
        for _ in range(4096):  # 4 MiB: far beyond a pipe buffer
            sys.stderr.write(chunk)
        sys.stderr.flush()
    while True:
        msg = read_message()
        if msg is None:
            return
        method = msg.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "capabilities": {"definitionProvider": True, "positionEncoding": "utf-16"},
                "serverInfo": {"name": "fault", "version": mode}}})
        elif method == "textDocument/definition":
            if mode == "crash-on-request":
                sys.exit(7)
            if mode == "hang":
                continue
            uri = msg["params"]["textDocument"]["uri"]
            send({"jsonrpc": "2.0", "id": msg["id"], "result": [
                {"uri": uri, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}]})
        elif method == "shutdown":
            if mode == "hang":
                time.sleep(600)  # never answers shutdown either
            send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": None})


if __name__ == "__main__":
    main()
