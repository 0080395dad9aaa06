"""A real (tiny) language server that misbehaves on purpose, speaking JSON-RPC over stdio.

    python fault_server.py MODE [--child] [--pid-file PATH] [--log PATH] [--env-file PATH]

It behaves (``ok``) unless MODE says otherwise: ``initialize`` advertises definition,
documentSymbol and hover; a definition is answered with ``store/disk.py`` line 4 of the
workspace (so a working session shows up as ``lsp`` edges in the fixture); documentSymbol
with ``[]``; hover with ``null``. Options: ``--pid-file`` appends the pids this server
starts (itself, children) so a test can check that none survives; ``--log`` appends every
method received (and a didOpen's ``languageId`` and ``uri``); ``--env-file`` writes the environment the
server got, as JSON; ``--child`` starts a sleeping grandchild first, which inherits
stdin/stdout/stderr (process-tree cleanup, and a server whose death is hidden by a child still
holding its pipes).

Modes (the fault is on the first ``textDocument/definition`` unless said otherwise):

=====================  ===================================================================
exit-now               exits (code 3) before reading anything
crash-on-initialize    reads ``initialize``, says so on stderr, exits (code 4)
crash-on-request       exits (code 7) when a definition request arrives
crash-mid-reply        writes half a reply to a definition, then exits (code 8)
hang                   never answers definition, documentSymbol, hover nor shutdown
hang-symbols           never answers documentSymbol (definition works)
hang-shutdown          never answers shutdown, ignores ``exit`` and SIGTERM
progress-forever       begins a ``$/progress`` after ``initialized`` that never ends
flood-stderr           4 MiB of stderr lines first, 1 MiB more per definition
flood-stderr-line      4 MiB of stderr with no newline at all, first
invalid-json           answers every definition with a framed body that is not JSON
short-length           the first reply's Content-Length is 10 bytes short
long-length            the first reply's Content-Length is 100 bytes long; then silence
huge-response          answers the first definition with ~40 MiB of locations
unknown-ids            sends replies to ids nobody asked before each real reply
unknown-request        sends a request the client has no handler for; answers definitions
                       only once the client replied to it (with an error)
stdout-noise           prints a banner and a stray line on stdout between messages
spawn-child            ``ok --child``
content-modified       answers each distinct request (method and params) first with the
                       error ContentModified (-32801), as servers do when a file changes under
                       a request, and properly when it is asked again
never-initialize       reads every message and answers none (``initialize`` included)
setsid-daemon          ``ok``, after double-forking a daemon that calls ``setsid`` (a new
                       session and group, reparented away from us) and sleeps; its pid goes
                       to ``--pid-file`` too
malformed-result       answers definitions with a location lsprotocol cannot read (its range
                       end has no ``character``), hovers with a ``MarkupContent`` without its ``value``
error-replies          answers definition with InternalError (-32603) "fault: boom",
                       documentSymbol with an error of a code no spec knows (4242), hover
                       with an error reply whose ``error`` is a string
client-calls           after ``initialized``, sends what only a client may send a server: an
                       ``exit`` notification and a ``shutdown`` request; then a
                       ``workspace/configuration`` request whose params lsprotocol cannot
                       read; then behaves (the client's answers go to stderr)
progress-ends          begins two ``$/progress`` reports after ``initialized``, reports on
                       them, and ends both when the first document is opened
lookups                also offers workspaceSymbolProvider and referencesProvider, and answers
                       them with hostile locations (:data:`HOSTILE_URIS`: outside the root,
                       through a symlink ``escape`` in it, ``..``, other schemes, a virtualenv
                       in the root) beside real ones: workspace/symbol with ``store/disk.py``'s
                       ``load`` (line 4), ``unlisted/extra.py``'s ``far_away`` (line 1), a
                       name with a bidi override on ``store/disk.py``'s line 1 and ``load``
                       on ``app.py``'s import line; references with the
                       asked position itself (the declaration) and the hostile locations only
hang-lookups           offers workspaceSymbolProvider and referencesProvider and never answers
                       workspace/symbol nor textDocument/references (the rest works)
escape                 ``ok``, after trying (at ``initialize``) what its sandbox must refuse:
                       run the repository's ``tools/evil.sh``, write into the repository and
                       into ``--probe-home``, connect to ``--probe-port`` on 127.0.0.1; what
                       happened to each is its ``serverInfo.version``
=====================  ===================================================================
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import signal
import socket
import subprocess
import sys
from typing import Any
from urllib.parse import unquote, urlparse

MODES = (
    "ok",
    "exit-now",
    "crash-on-initialize",
    "crash-on-request",
    "crash-mid-reply",
    "hang",
    "hang-symbols",
    "hang-shutdown",
    "progress-forever",
    "flood-stderr",
    "flood-stderr-line",
    "invalid-json",
    "short-length",
    "long-length",
    "huge-response",
    "unknown-ids",
    "unknown-request",
    "stdout-noise",
    "spawn-child",
    "content-modified",
    "never-initialize",
    "setsid-daemon",
    "malformed-result",
    "error-replies",
    "client-calls",
    "progress-ends",
    "lookups",
    "hang-lookups",
    "escape",
)
#: Locations a ``lookups`` server names that a client must never report (``{root}``: the
#: workspace root it was given).
HOSTILE_URIS = (
    "file:///etc/passwd",
    "file://{root}/../outside.py",
    "file://{root}/escape/evil.py",
    "file://{root}/.venv/lib/site.py",
    "untitled:Untitled-1",
    "https://example.invalid/x.py",
    "file://{root}",
)
HUGE_BYTES = 40 * 2**20


def read_message() -> dict[str, Any] | None:
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


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def send(payload: dict[str, Any]) -> None:
    write(frame(json.dumps(payload).encode()))


def location(uri: str) -> dict[str, Any]:
    return {"uri": uri, "range": span(3, 4, 3, 8)}


def span(line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": col}, "end": {"line": end_line, "character": end_col}}


class Server:
    def __init__(self, mode: str, log: str | None) -> None:
        self.mode = mode
        self.log = log
        self.root = ""
        self.definitions = 0
        self.silent = False  # long-length: after the broken reply nothing more is written
        self.held: list[dict[str, Any]] = []  # unknown-request: definitions waiting for the reply
        self.client_replied = False
        self.asked: set[str] = set()  # content-modified: requests already refused once
        self.opened = False  # progress-ends: a document was opened
        self.probe: dict[str, str] = {}  # escape: where to try to write and connect

    def note(self, text: str) -> None:
        if self.log:
            with open(self.log, "a") as fh:
                fh.write(text + "\n")

    def target(self) -> str:
        return f"file://{self.root}/store/disk.py"

    def run(self) -> None:
        while True:
            msg = read_message()
            if msg is None:
                return
            method = msg.get("method")
            self.note(method or f"reply:{msg.get('id')}:{'error' if 'error' in msg else 'result'}")
            if method == "textDocument/didOpen":  # and what the client called the document's language
                document = msg.get("params", {}).get("textDocument", {})
                self.note(f"languageId:{document.get('languageId')}")
                self.note(f"opened:{document.get('uri')}")
            if method is None:
                self.on_client_reply(msg)
            elif method == "exit":
                if self.mode == "hang-shutdown":
                    continue
                return
            elif self.silent or self.mode == "never-initialize":
                continue
            elif "id" in msg:
                self.on_request(msg)
            elif method == "initialized":
                self.on_initialized()
            elif method == "textDocument/didOpen" and self.mode == "progress-ends" and not self.opened:
                self.opened = True
                for token in ("load", "index"):
                    send(
                        {"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": {"kind": "end"}}}
                    )

    def on_client_reply(self, msg: dict[str, Any]) -> None:
        if self.mode == "client-calls":
            answer = msg.get("error", {}).get("code") if "error" in msg else json.dumps(msg.get("result"))
            sys.stderr.write(f"client answered {msg.get('id')}: {answer}\n")
            sys.stderr.flush()
        if msg.get("id") == "srv-unknown":
            code = (msg.get("error") or {}).get("code")
            sys.stderr.write(f"client answered custom/notAMethod with error code {code}\n")
            sys.stderr.flush()
            self.client_replied = True
            for held in self.held:
                self.on_request(held)
            self.held = []

    def on_initialized(self) -> None:
        if self.mode == "progress-forever":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": "srv-progress",
                    "method": "window/workDoneProgress/create",
                    "params": {"token": "forever"},
                }
            )
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "$/progress",
                    "params": {"token": "forever", "value": {"kind": "begin", "title": "indexing forever"}},
                }
            )
        elif self.mode == "unknown-request":
            send({"jsonrpc": "2.0", "id": "srv-unknown", "method": "custom/notAMethod", "params": {}})
        elif self.mode == "client-calls":
            send({"jsonrpc": "2.0", "method": "exit"})
            send({"jsonrpc": "2.0", "id": "srv-shutdown", "method": "shutdown"})
            send({"jsonrpc": "2.0", "id": "srv-config", "method": "workspace/configuration", "params": {"items": 7}})
        elif self.mode == "progress-ends":
            for token in ("load", "index"):
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": f"srv-{token}",
                        "method": "window/workDoneProgress/create",
                        "params": {"token": token},
                    }
                )
                begin = {"kind": "begin", "title": token}
                send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": begin}})
            report = {"kind": "report", "message": "1/2"}
            send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "load", "value": report}})
        elif self.mode == "stdout-noise":
            write(b"fault server: a stray line on stdout\n")

    def on_request(self, msg: dict[str, Any]) -> None:
        method, msg_id = msg["method"], msg["id"]
        mode = self.mode
        if mode == "content-modified" and method not in ("initialize", "shutdown"):
            key = json.dumps([method, msg.get("params")], sort_keys=True)
            if key not in self.asked:
                self.asked.add(key)
                sys.stderr.write(f"content modified #{len(self.asked)}\n")
                sys.stderr.flush()
                send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32801, "message": "content modified"}})
                return
        if method == "initialize":
            if mode == "crash-on-initialize":
                sys.stderr.write("fault server: crashing in initialize\n")
                sys.stderr.flush()
                sys.exit(4)
            uri = msg["params"].get("rootUri") or ""
            self.root = unquote(urlparse(uri).path)
            capabilities: dict[str, Any] = {
                "definitionProvider": True,
                "documentSymbolProvider": True,
                "hoverProvider": True,
                "positionEncoding": "utf-16",
            }
            if mode in ("lookups", "hang-lookups"):
                capabilities.update(workspaceSymbolProvider=True, referencesProvider=True)
            version = escape(self.root, self.probe) if mode == "escape" else mode
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {"capabilities": capabilities, "serverInfo": {"name": "fault", "version": version}},
                }
            )
        elif method in ("workspace/symbol", "textDocument/references") and mode in ("lookups", "hang-lookups"):
            if mode == "lookups":
                self.on_lookup(msg)
        elif method == "textDocument/definition" and mode == "error-replies":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "fault: boom"}})
        elif method == "textDocument/documentSymbol" and mode == "error-replies":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": 4242, "message": "fault: odd code"}})
        elif method == "textDocument/hover" and mode == "error-replies":
            send({"jsonrpc": "2.0", "id": msg_id, "error": "fault: not an error object"})
        elif method == "textDocument/hover" and mode == "malformed-result":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"contents": {"kind": "plaintext"}}})
        elif method == "textDocument/definition":
            self.on_definition(msg)
        elif method == "textDocument/documentSymbol":
            if mode in ("hang", "hang-symbols"):
                return
            send({"jsonrpc": "2.0", "id": msg_id, "result": []})
        elif method == "textDocument/hover":
            if mode == "hang":
                return
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        elif method == "shutdown":
            if mode in ("hang", "hang-shutdown"):
                return  # never answered
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        else:
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})

    def hostile(self) -> list[dict[str, Any]]:
        return [location(uri.format(root=self.root)) for uri in HOSTILE_URIS]

    def on_lookup(self, msg: dict[str, Any]) -> None:
        """``lookups``: real locations beside every hostile one."""
        params = msg.get("params") or {}
        if msg["method"] == "workspace/symbol":

            def symbol(name: str, where: dict[str, Any], kind: int = 12) -> dict[str, Any]:
                return {"name": name, "kind": kind, "location": where}

            disk = f"file://{self.root}/store/disk.py"
            found = [symbol("load", {"uri": disk, "range": span(3, 0, 5, 37)})]
            extra = f"file://{self.root}/unlisted/extra.py"
            found.append(symbol("far_away", {"uri": extra, "range": span(0, 0, 1, 12)}))
            found.append(symbol("ev\u202eil", {"uri": disk, "range": span(0, 0, 0, 12)}))
            # app.py's first line imports load: a binding, not a definition (tsgo lists such).
            found.append(symbol("load", {"uri": f"file://{self.root}/app.py", "range": span(0, 23, 0, 27)}, 13))
            found += [symbol("load", where) for where in self.hostile()]
            send({"jsonrpc": "2.0", "id": msg["id"], "result": found})
            return
        asked = params.get("position") or {"line": 0, "character": 0}
        uri = (params.get("textDocument") or {}).get("uri", "")
        line, col = asked["line"], asked["character"]
        found = [{"uri": uri, "range": span(line, col, line, col + 1)}, *self.hostile()]
        send({"jsonrpc": "2.0", "id": msg["id"], "result": found})

    def on_definition(self, msg: dict[str, Any]) -> None:
        mode, msg_id = self.mode, msg["id"]
        self.definitions += 1
        first = self.definitions == 1
        reply = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": [location(self.target())]}).encode()
        if mode == "malformed-result":
            broken = location(self.target())
            del broken["range"]["end"]["character"]
            reply = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": [broken]}).encode()
        if mode == "crash-on-request":
            sys.exit(7)
        if mode == "crash-mid-reply":
            write(frame(reply)[: len(reply) // 2])
            os._exit(8)
        if mode == "hang":
            return
        if mode == "flood-stderr":
            sys.stderr.write(("y" * 1023 + "\n") * 1024)
            sys.stderr.flush()
        if mode == "invalid-json":
            write(frame(b'{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id).encode() + b", result: [oops"))
            return
        if mode == "short-length" and first:
            write(frame(reply, len(reply) - 10))
            return
        if mode == "long-length" and first:
            write(frame(reply, len(reply) + 100))
            self.silent = True
            return
        if mode == "huge-response" and first:
            one = json.dumps(location(self.target())).encode()
            count = HUGE_BYTES // (len(one) + 1)
            body = (
                b'{"jsonrpc": "2.0", "id": '
                + json.dumps(msg_id).encode()
                + b', "result": ['
                + b",".join([one] * count)
                + b"]}"
            )
            write(frame(body))
            return
        if mode == "unknown-ids":
            send({"jsonrpc": "2.0", "id": "no-such-request", "result": [location(self.target())]})
            send({"jsonrpc": "2.0", "id": 987654, "result": None})
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        if mode == "unknown-request" and not self.client_replied:
            self.held.append(msg)
            return
        if mode == "stdout-noise":
            write(b"fault server: more noise between messages\n")
        write(frame(reply))


def escape(root: str, probe: dict[str, str]) -> str:
    """``escape`` mode: try what a sandboxed server must not be able to do, and say what
    happened to each (``name=ok`` or ``name=<errno name>``): run the repository's
    ``tools/evil.sh``, write into the repository, write into ``probe["home"]`` (the user's
    home), connect to ``probe["port"]`` on 127.0.0.1."""

    def attempt(name: str, action: Any) -> str:
        try:
            action()
        except OSError as exc:
            return f"{name}={errno.errorcode.get(exc.errno or 0, exc.errno)}"
        return f"{name}=ok"

    def run() -> None:
        subprocess.run([os.path.join(root, "tools", "evil.sh")], check=False, timeout=10)

    def write(path: str) -> None:
        with open(path, "w") as fh:
            fh.write("written by the server\n")

    def connect() -> None:
        with socket.create_connection(("127.0.0.1", int(probe["port"])), timeout=5) as conn:
            conn.sendall(b"exfiltrated")

    return " ".join(
        [
            attempt("exec", run),
            attempt("write_repo", lambda: write(os.path.join(root, "written-by-server"))),
            attempt("write_home", lambda: write(probe["home"])),
            attempt("connect", connect),
        ]
    )


def daemonize(pid_file: str | None) -> None:
    """Double fork + setsid, as daemons do: the grandchild leaves our session, our process
    group and our ancestry (its parent exits, so it is reparented to init or a subreaper)."""
    if os.fork() > 0:
        os.wait()  # the intermediate child exits at once
        return
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    if pid_file:
        with open(pid_file, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL ends it
    import time

    time.sleep(600)
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--pid-file")
    parser.add_argument("--log")
    parser.add_argument("--env-file")
    parser.add_argument("--probe-home", default="", help="escape: a file to try to write in the user's home")
    parser.add_argument("--probe-port", default="0", help="escape: a port on 127.0.0.1 to try to connect to")
    args = parser.parse_args()
    pids = [os.getpid()]
    if args.mode == "spawn-child" or args.child:
        pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)
    if args.pid_file:
        with open(args.pid_file, "a") as fh:
            fh.write("".join(f"{pid}\n" for pid in pids))
    if args.env_file:
        with open(args.env_file, "w") as fh:
            json.dump(dict(os.environ), fh)
    if args.mode == "exit-now":
        sys.exit(3)
    if args.mode == "setsid-daemon":
        daemonize(args.pid_file)
    if args.mode == "hang-shutdown":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.mode == "flood-stderr":
        sys.stderr.write(("x" * 1023 + "\n") * 4096)  # 4 MiB: far beyond a pipe buffer
        sys.stderr.flush()
    if args.mode == "flood-stderr-line":
        sys.stderr.write("z" * (4 * 2**20))  # one 4 MiB line: a reader that wants lines chokes
        sys.stderr.flush()
    if args.mode == "stdout-noise":
        write(b"Starting fault server (a banner some wrappers print)\n")
    server = Server(args.mode, args.log)
    server.probe = {"home": args.probe_home, "port": args.probe_port}
    server.run()


if __name__ == "__main__":
    main()
