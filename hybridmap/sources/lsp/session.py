"""One language server process, owned by one :class:`LspSession`.

This is the only module that spawns, talks to and kills a server. It fixes the
pygls 2.1.1 traps measured in ``LSP-SERVERS.md``: stderr is drained into a
bounded ring (an undrained pipe stalls chatty servers); server-to-client
requests are answered (configuration, progress creation, registration);
every request has a timeout and is cancelled with ``$/cancelRequest`` when it
expires; ``ContentModified`` is retried; shutdown is shutdown → exit →
SIGTERM → SIGKILL of the whole process group (wrappers such as
``basedpyright-langserver`` leave node children behind otherwise), and the
server gets ``PR_SET_PDEATHSIG`` so it dies with us even if we are killed.

Every pygls/OS error is translated here into :class:`~hybridmap.errors.ServerError`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import psutil
from lsprotocol import types as T
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCResponseMessage

from ...boundaries import absolute_path_entries
from ...errors import ServerError
from ...git import git_config_environment
from ...logs import guard_library_logging
from ...model import ServerState
from ...settings import Settings
from .config import ServerConfig
from .framing import SAMPLE_BYTES, Frame, FrameReader, ids_in_sample

# pygls logs every message it sends (whole files) and every quirk of a server: its records carry
# no body, and stay out of a host's INFO logs (hybridmap/logs.py). What matters reaches the user
# as a server state or detail.
guard_library_logging()

#: Environment variables passed from the user's environment to every server.
#: Anything else reaches a server only when its config names it (``environment``).
ENV_ALLOWLIST = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "TZ",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
    "GOPATH",
    "GOROOT",
    "GOCACHE",
    "GOMODCACHE",
    "VIRTUAL_ENV",
    "NODE_PATH",
)

#: stderr of a command that exists but whose real program does not (rustup proxies, shims).
_NOT_INSTALLED = re.compile(r"unknown binary|is not installed|not installed for|command not found", re.I)

_PROJECT_DIR = Path(__file__).resolve().parents[3]
#: True when hybridmap runs from a source tree (a checkout, an editable install, a benchmark's
#: extracted commit), whose scripts/install-servers fills .venv and .servers beside the package;
#: False for an installed wheel, whose package sits in site-packages.
FROM_SOURCE_TREE = _PROJECT_DIR.name not in ("site-packages", "dist-packages")


def user_servers_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/hybridmap/servers`` (default ``~/.local/share/...``): servers a user of an
    installed hybridmap puts there, laid out like a checkout's ``.servers``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):  # the XDG spec ignores a relative value; a relative PATH entry
        base = os.path.join(os.path.expanduser("~"), ".local", "share")  # would find repo programs
    return Path(base) / "hybridmap" / "servers"


def _server_dirs(servers: Path) -> tuple[Path, ...]:
    return (
        servers / "node" / "node_modules" / ".bin",
        servers / "bin",  # links with our own names (tsgo → TypeScript 7's tsc)
        servers / "go" / "bin",  # gopls built with the machine's Go
    )


#: In a config's initializationOptions, "{servers}" stands for our own install directory, so a
#: config can name a file we installed (typescript-language-server's tsserver.path) without the
#: server looking for it in the repository: the checkout's ``.servers``, else the user's.
SERVERS_DIR = _PROJECT_DIR / ".servers" if FROM_SOURCE_TREE else user_servers_dir()

#: Where servers are looked for, in order, before the absolute entries of PATH: the interpreter's
#: own bin (servers pip-installed beside hybridmap), then a source tree's .venv and .servers, then
#: the per-user directory. Documented in docs/language-servers.md ("Where servers are found").
_SOURCE_TREE_DIRS = (_PROJECT_DIR / ".venv" / "bin", *_server_dirs(_PROJECT_DIR / ".servers"))
INSTALL_DIRS = (
    Path(sys.prefix) / "bin",
    *(_SOURCE_TREE_DIRS if FROM_SOURCE_TREE else ()),
    *_server_dirs(user_servers_dir()),
)


def expand_install_dir(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("{servers}", str(SERVERS_DIR))
    if isinstance(value, dict):
        return {k: expand_install_dir(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_install_dir(v) for v in value]
    return value


def find_command(
    command: str, extra_dirs: Sequence[Path] = INSTALL_DIRS, environ: Mapping[str, str] | None = None
) -> str | None:
    """Absolute path of ``command`` (a name or a path), or None."""
    env = os.environ if environ is None else environ
    if os.sep in command:
        path = Path(command).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    # Absolute PATH entries only: '.' would find a program the repository ships when we run in it.
    user_path = absolute_path_entries(env.get("PATH"))
    return shutil.which(command, path=os.pathsep.join([*(str(d) for d in extra_dirs), *user_path]))


def command_problem(command: str) -> str:
    """Why :func:`find_command` found nothing, in words a user can act on."""
    if os.sep not in command:
        return f"'{command}' not installed (not in our install directories or on PATH)"
    path = Path(command).expanduser()
    if not path.exists():
        return f"'{command}' does not exist"
    if path.is_dir():
        return f"'{command}' is a directory, not a program"
    if not os.access(path, os.X_OK):
        return f"'{command}' is not executable (chmod +x?)"
    return f"'{command}' cannot be run"


#: Set in every server's environment to a token of its own session. Every process the server
#: starts inherits it, also one that double-forks and calls setsid (leaving our process group,
#: session and ancestry): at stop, processes carrying the token are found in /proc and killed.
TOKEN_VARIABLE = "HYBRIDMAP_SERVER_TOKEN"  # noqa: S105 - an environment variable's name, no secret


def server_environment(
    config: ServerConfig,
    environ: Mapping[str, str] | None = None,
    extra_dirs: Sequence[Path] = INSTALL_DIRS,
    token: str = "",
) -> dict[str, str]:
    env = os.environ if environ is None else environ
    out = {k: env[k] for k in ENV_ALLOWLIST if k in env}
    # Node wrappers installed by our setup need to find `node` and each other. Relative entries
    # ('.', '') are dropped: a server runs in the repository, where they would find its programs.
    user_path = absolute_path_entries(out.get("PATH"))
    out["PATH"] = os.pathsep.join([*(str(d) for d in extra_dirs), *user_path])
    out.update(config.environment)
    # A server may run git itself (gopls through the go command): the same overrides as ours,
    # as command-line-level configuration, so the repository's hooks and fsmonitor never run.
    out.update(git_config_environment())
    if token:
        out[TOKEN_VARIABLE] = token  # after the config's table: a config cannot hide a process
    return out


class _TolerantProtocol(LanguageServerProtocol):
    """Keep a response whose result lsprotocol cannot structure, as a plain dict.

    pygls 2.1.1 with cattrs >= 25 drops the initialize reply of pylsp and ty and
    the request never resolves; we pin cattrs < 25 and keep this as a safety net.
    """

    def structure_message(self, data: Any) -> Any:
        try:
            return super().structure_message(data)
        except Exception:
            if isinstance(data, dict) and "id" in data and "method" not in data and "error" not in data:
                return JsonRPCResponseMessage(
                    id=data["id"], jsonrpc=data.get("jsonrpc", "2.0"), result=data.get("result")
                )
            raise


def _set_pdeathsig() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001, S110 - between fork and exec nothing can be reported; the server starts anyway
        pass


class _StdinWriter:
    """The server's stdin as pygls' writer. Writes after the server exited are dropped: asyncio
    would log "pipe closed by peer" on stderr (the agent's terminal) for each of them."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    def write(self, data: bytes) -> None:
        stdin = self._process.stdin
        if self._process.returncode is None and stdin is not None and not stdin.is_closing():
            stdin.write(data)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()


class _Client(LanguageClient):
    protocol: _TolerantProtocol  # protocol_cls below

    def __init__(self, session: LspSession) -> None:
        super().__init__("hybridmap", "0.1", protocol_cls=_TolerantProtocol)
        self._session = session

    async def start_io(self, cmd: str, *args: Any, **kwargs: Any) -> None:
        """pygls' ``start_io`` with our reader (``LspSession._read_messages``) in place of pygls'
        ``run_async``, which trusts ``Content-Length`` blindly (see ``framing.py``)."""
        server = await asyncio.create_subprocess_exec(
            cmd,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            **kwargs,
        )
        if server.stdin is None or server.stdout is None:  # both were asked for as PIPE
            raise RuntimeError("the server process has no stdin/stdout pipe")
        self.protocol.set_writer(_StdinWriter(server))
        self._server = server
        self._async_tasks.extend(
            [
                asyncio.create_task(self._session._read_messages(server.stdout)),
                asyncio.create_task(self._watch_exit(server)),
            ]
        )

    async def _watch_exit(self, server: asyncio.subprocess.Process) -> None:
        """Notice the server's exit at once. pygls awaits ``process.wait()``, which (Python 3.11)
        also waits until every pipe is closed: a child still holding stdout hides the death."""
        while server.returncode is None:  # noqa: ASYNC110 - polled on purpose, see above
            await asyncio.sleep(0.1)
        reason = f"Server process {server.pid} exited with return code: {server.returncode}"
        for future in list(self.protocol._request_futures.values()):  # pygls 2.1.1 internals (pinned)
            if not future.done():
                future.set_exception(RuntimeError(reason))
        await self.server_exit(server)
        self._stop_event.set()

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self._session._on_exit(server.returncode)

    def report_server_error(self, error: Exception, source: Any) -> None:
        self._session._note(f"protocol error: {type(error).__name__}: {error}")


def _client_capabilities() -> T.ClientCapabilities:
    return T.ClientCapabilities(
        general=T.GeneralClientCapabilities(
            position_encodings=[T.PositionEncodingKind.Utf8, T.PositionEncodingKind.Utf16]
        ),
        window=T.WindowClientCapabilities(work_done_progress=True),
        workspace=T.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            symbol=T.WorkspaceSymbolClientCapabilities(),
            # We tell servers what changed on disk between maps (Documents.refresh).
            did_change_watched_files=T.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        ),
        text_document=T.TextDocumentClientCapabilities(
            synchronization=T.TextDocumentSyncClientCapabilities(did_save=False),
            document_symbol=T.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True,
                symbol_kind=T.ClientSymbolKindOptions(value_set=list(T.SymbolKind)),
            ),
            definition=T.DefinitionClientCapabilities(link_support=False),
            implementation=T.ImplementationClientCapabilities(link_support=False),
            references=T.ReferenceClientCapabilities(),
            hover=T.HoverClientCapabilities(content_format=[T.MarkupKind.PlainText, T.MarkupKind.Markdown]),
        ),
    )


class LspSession:
    """The life of one server process: start, answer, track readiness, stop."""

    STDERR_LINES = 200
    PROGRESS_START_GRACE = 5.0
    """With ``ready = "progress"``: a server that starts no progress this long after
    its first opened file is taken as ready (some servers report nothing for small projects)."""

    def __init__(
        self,
        config: ServerConfig,
        language: str,
        root: Path,
        *,
        environ: Mapping[str, str] | None = None,
        memory_limit_mb: float = 0.0,
        settings: Settings | None = None,
    ) -> None:
        self.config = config
        self.language = language
        self.root = root
        self.state = ServerState.STARTING
        self.detail = ""
        self.version = ""
        self.position_encoding = "utf-16"
        self.capabilities: Any = None
        self.stderr_tail: deque[str] = deque(maxlen=self.STDERR_LINES)
        self.events: list[str] = []
        self.started_at = 0.0
        self.ready_at: float | None = None
        self._environ = environ
        self._token = f"{os.getpid()}-{os.urandom(8).hex()}"
        self._memory_limit = memory_limit_mb
        self._client: _Client | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._ready = asyncio.Event()
        self._exited = asyncio.Event()
        self._progress_open: set[str] = set()
        self._progress_seen = False
        self._first_open_at: float | None = None
        self._opened: dict[str, int] = {}
        self._closing = False
        self._settings = settings if settings is not None else Settings()
        self.failed_at: float | None = None
        self.troubles: dict[str, str] = {}
        """Trouble that did not stop the server, the latest of each kind (timeouts, bad messages...)."""
        self._bad_messages = 0
        self._noise_lines = 0
        self._unknown_replies = 0
        self._timeouts = 0
        self._in_flight = 0
        self._busy_since = 0.0
        self._last_message_at = 0.0
        self._frames: FrameReader | None = None

    # --- status ---------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_ready(self) -> bool:
        return self.state is ServerState.READY

    @property
    def alive(self) -> bool:
        return self.state in (ServerState.STARTING, ServerState.INDEXING, ServerState.READY)

    def seconds_to_ready(self) -> float | None:
        return None if self.ready_at is None else round(self.ready_at - self.started_at, 3)

    def health(self) -> str:
        """What a report adds to a live server's state: a readiness that never came, the last trouble."""
        notes = []
        waited = time.monotonic() - self.started_at
        if self.state is ServerState.STARTING and self.started_at:
            notes.append(
                f"waiting for its answer to initialize ({waited:.0f}s so far, "
                f"ready-timeout {self.config.ready_timeout:g}s)"
            )
        elif self.state is ServerState.INDEXING and waited <= self.config.ready_timeout:
            notes.append(
                f"waiting for its readiness signal (ready = {self.config.ready}"
                + (f", {len(self._progress_open)} progress report(s) open)" if self._progress_open else ")")
            )
        if self.state is ServerState.INDEXING and self.started_at and waited > self.config.ready_timeout:
            why = (
                f"{len(self._progress_open)} progress report(s) never ended"
                if self._progress_open
                else "no readiness signal"
            )
            notes.append(f"not ready after {waited:.0f}s ({why}); answers are used but not cached")
        notes.extend(self.troubles.values())
        return "; ".join(notes)

    def _note(self, event: str) -> None:
        self.events.append(event)
        del self.events[:-50]

    def _mark_ready(self, why: str) -> None:
        if self.state in (ServerState.STARTING, ServerState.INDEXING):
            self.state = ServerState.READY
            self.ready_at = time.monotonic()
            self._note(f"ready ({why})")
            self._ready.set()

    def _fail(self, detail: str) -> None:
        if self.state is not ServerState.FAILED:
            self.state = ServerState.FAILED
            self.detail = detail
            self.failed_at = time.monotonic()
            self._note(f"failed: {detail}")
        self._ready.set()  # wake waiters: the answer is "not ready"

    def _on_exit(self, returncode: int | None) -> None:
        self._exited.set()
        if not self._closing:
            tail = " | ".join(list(self.stderr_tail)[-3:])
            self._fail(f"server exited with code {returncode}" + (f": {tail}" if tail else ""))
            self._tasks.append(asyncio.create_task(self._kill_tree()))  # the children it left behind

    # --- start ------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn and initialize; on failure the state says why (never raises)."""
        self.started_at = self._last_message_at = time.monotonic()
        executable = find_command(self.config.command, environ=self._environ)
        if executable is None:
            self.state = ServerState.MISSING
            self.detail = command_problem(self.config.command) + (
                f"; install with: {self.config.install}" if self.config.install else ""
            )
            self._ready.set()
            return
        client = self._client = _Client(self)
        self._register_handlers(client)
        try:
            await client.start_io(
                executable,
                *self.config.args,
                cwd=str(self.root),
                env=server_environment(self.config, self._environ, token=self._token),
                start_new_session=True,
                preexec_fn=_set_pdeathsig,
            )
        except OSError as exc:  # not executable, exec format error...
            self._fail(f"cannot start '{executable}': {exc.strerror or exc}")
            return
        finally:
            _LIVE.add(self)  # from here on something may run: killed at exit even without aclose
        self._process = client._server
        if self._process is None or self._process.stderr is None:  # started with stderr=PIPE
            raise RuntimeError("the server process has no stderr pipe")
        self._tasks.append(asyncio.create_task(self._drain_stderr(self._process.stderr)))
        if self._memory_limit > 0:
            self._tasks.append(asyncio.create_task(self._watch_memory()))
        params = T.InitializeParams(
            process_id=os.getpid(),
            root_uri=self.root.as_uri(),
            root_path=str(self.root),
            workspace_folders=[T.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
            capabilities=_client_capabilities(),
            initialization_options=expand_install_dir(dict(self.config.init_options)) or None,
            client_info=T.ClientInfo(name="hybridmap", version="0.1"),
        )
        try:
            result = await self._call(client.initialize_async(params), self.config.ready_timeout, "initialize")
        except ServerError as exc:
            await asyncio.sleep(0.05)  # let the stderr drain catch the last words
            if self._exited.is_set() and _NOT_INSTALLED.search(" ".join(self.stderr_tail)):
                # e.g. rustup's proxy for a component that is not installed
                self.state = ServerState.MISSING
                self.detail = " ".join(self.stderr_tail)[-300:] + (
                    f"; install with: {self.config.install}" if self.config.install else ""
                )
            else:
                self._fail(str(exc))
            await self.aclose()
            return
        self._read_initialize_result(result)
        client.initialized(T.InitializedParams())
        self.state = ServerState.INDEXING
        if self.config.ready == "initialized":
            self._mark_ready("initialized")

    def _read_initialize_result(self, result: Any) -> None:
        caps = getattr(result, "capabilities", None)
        if caps is None and isinstance(result, dict):
            caps = result.get("capabilities")
        self.capabilities = caps
        encoding = getattr(caps, "position_encoding", None) if caps is not None else None
        if isinstance(caps, dict):
            encoding = caps.get("positionEncoding")
        self.position_encoding = "utf-8" if str(encoding) in ("utf-8", "PositionEncodingKind.Utf8") else "utf-16"
        info = getattr(result, "server_info", None)
        if info is not None:
            version = info.version or ""
            if version.startswith("{"):  # gopls puts its build info JSON here
                match = re.search(r'"Version":"([^"]*)"\}?$', version)
                version = match.group(1) if match else ""
            # clangd's version already starts with its name ("clangd version 22.1.1 ...").
            name = "" if version.lower().startswith(info.name.lower()) else info.name
            self.version = f"{name} {version}".strip()[:80]
        elif isinstance(result, dict) and isinstance(result.get("serverInfo"), dict):
            si = result["serverInfo"]
            self.version = f"{si.get('name', '')} {si.get('version', '')}".strip()

    def supports(self, capability: str) -> bool:
        caps = self.capabilities
        if caps is None:
            return False
        if isinstance(caps, dict):
            camel = "".join(w if i == 0 else w.capitalize() for i, w in enumerate(capability.split("_")))
            return bool(caps.get(camel))
        return bool(getattr(caps, capability, None))

    def _register_handlers(self, client: _Client) -> None:
        session = self

        @client.feature(T.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _create(params: Any) -> None:
            return None

        @client.feature(T.WORKSPACE_CONFIGURATION)
        def _configuration(params: T.ConfigurationParams) -> list[Any]:
            return [session._setting(item.section) for item in params.items]

        @client.feature(T.CLIENT_REGISTER_CAPABILITY)
        def _register(params: Any) -> None:
            return None

        @client.feature(T.CLIENT_UNREGISTER_CAPABILITY)
        def _unregister(params: Any) -> None:
            return None

        @client.feature(T.WORKSPACE_WORKSPACE_FOLDERS)
        def _folders(params: Any) -> list[T.WorkspaceFolder]:
            return [T.WorkspaceFolder(uri=session.root.as_uri(), name=session.root.name)]

        @client.feature(T.WINDOW_SHOW_MESSAGE_REQUEST)
        def _show_request(params: Any) -> None:
            return None

        @client.feature(T.WORKSPACE_APPLY_EDIT)
        def _apply(params: Any) -> T.ApplyWorkspaceEditResult:
            return T.ApplyWorkspaceEditResult(applied=False, failure_reason="hybridmap is read-only")

        @client.feature(T.PROGRESS)
        def _progress(params: T.ProgressParams) -> None:
            session._on_progress(params)

        @client.feature(T.WINDOW_LOG_MESSAGE)
        def _log(params: T.LogMessageParams) -> None:
            session._on_log(params.message)

        @client.feature(T.WINDOW_SHOW_MESSAGE)
        def _show(params: T.ShowMessageParams) -> None:
            session._on_log(params.message)

        @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: Any) -> None:
            return None

        @client.feature("$/typescriptVersion")
        def _ts_version(params: Any) -> None:
            return None

    def _setting(self, section: str | None) -> Any:
        value: Any = dict(self.config.settings)
        if not section:
            return value
        for part in section.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        return value

    def _on_progress(self, params: T.ProgressParams) -> None:
        value = params.value if isinstance(params.value, dict) else {}
        kind = value.get("kind")
        token = str(params.token)
        if kind == "begin":
            self._progress_seen = True
            self._progress_open.add(token)
        elif kind == "end":
            self._progress_open.discard(token)
            if self.config.ready == "progress" and self._progress_seen and not self._progress_open:
                self._mark_ready("progress ended")

    def _on_log(self, message: str) -> None:
        self.stderr_tail.append(message[:500])
        pattern = self.config.ready_log_pattern
        if pattern is not None and pattern.search(message):
            self._mark_ready("log matched")

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        # Chunks, not readline(): a line over the stream limit (64 KiB) makes readline raise,
        # and a drain that stops leaves the server blocked on a full pipe.
        pending = b""
        with contextlib.suppress(Exception):
            while True:
                chunk = await stream.read(1 << 16)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-4096:]  # keep a bounded piece of an endless line
                for line in lines:
                    self._on_log(line.decode("utf-8", "replace").rstrip())
        if pending:
            self._on_log(pending.decode("utf-8", "replace").rstrip())

    async def _watch_memory(self) -> None:
        while self.alive and self._process is not None:
            await asyncio.sleep(2.0)
            rss = tree_rss_mb(self._process.pid)
            if rss > self._memory_limit:
                self._fail(f"memory ceiling exceeded: {rss:.0f} MB > {self._memory_limit:.0f} MB")
                await self._kill_tree()
                return

    # --- the server's stdout ------------------------------------------------------------

    async def _read_messages(self, stdout: asyncio.StreamReader) -> None:
        """Read and dispatch messages until the output ends (replaces pygls' reader)."""
        client = self._client
        if client is None:  # the reader is started by the client it reads for
            raise RuntimeError("reading messages without a client")
        frames = self._frames = FrameReader(stdout, self._settings.server_max_message_bytes, self._on_noise)
        while not client.stopped:
            try:
                frame = await frames.next()
                if frame is None:
                    if frames.partial is not None:
                        self._note(f"output ended inside a message ({frames.partial[0]} of {frames.partial[1]} bytes)")
                    break
                await self._dispatch(client.protocol, frame)
            except Exception as exc:  # noqa: BLE001 - a reader that dies quietly leaves a live but deaf session
                self._abandon(f"reading its output failed: {type(exc).__name__}: {exc}")
                return
        if self._closing or client.stopped:
            return
        # The output is closed: normally the process is exiting (its exit code tells why).
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exited.wait(), 1.0)
        if not self._exited.is_set():
            self._abandon("the server closed its output but kept running")

    async def _dispatch(self, protocol: LanguageServerProtocol, frame: Frame) -> None:
        if frame.body is None:
            self._last_message_at = time.monotonic()  # it is talking, just too much
            limit = self._settings.server_max_message_bytes
            what = (
                f"discarded a {frame.size / 2**20:.1f} MiB message "
                f"(over server_max_message_bytes = {limit / 2**20:g} MiB)"
            )
            self.troubles["discarded"] = what
            self._note(what)
            for msg_id in ids_in_sample(frame.sample):
                if self._fail_request(protocol, msg_id, what):
                    break
            return
        # Big bodies are parsed off the event loop so maps keep their deadlines meanwhile.
        off_loop = frame.size > _OFF_LOOP_BYTES
        try:
            data = await asyncio.to_thread(_decode, frame.body) if off_loop else _decode(frame.body)
        except (ValueError, RecursionError) as exc:
            what = f"not JSON ({exc}): {frame.body[:60]!r}"
            self._bad_message(what)
            for msg_id in ids_in_sample(frame.body[:SAMPLE_BYTES] + b"\n" + frame.body[-SAMPLE_BYTES:]):
                if self._fail_request(protocol, msg_id, f"unreadable reply: {what}"):
                    break  # the request it answered fails now instead of timing out
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            self._bad_message(f"not a JSON-RPC 2.0 message: {frame.body[:60]!r}")
            return
        self._last_message_at = time.monotonic()
        message_id = data.get("id")
        asked = isinstance(message_id, (str, int)) and message_id in protocol._request_futures
        if "method" not in data and not asked:
            self._unknown_replies += 1  # JSON-RPC says ignore; pygls would only log a warning
            self.troubles["unknown"] = (
                f"{self._unknown_replies} replies to ids never asked ignored, last: {message_id!r}"
            )
            return
        try:
            message = (
                await asyncio.to_thread(protocol.structure_message, data)
                if off_loop
                else protocol.structure_message(data)
            )
        except JsonRpcException as exc:  # valid JSON-RPC whose params lsprotocol cannot read
            self._note(f"unreadable {data.get('method') or 'response'}: {exc}")
            if "id" in data and "method" in data:  # the server waits for an answer: say why not
                error = JsonRpcInvalidParams(message=f"hybridmap could not read the params of {data['method']}")
                with contextlib.suppress(Exception):
                    protocol._send_response(data["id"], None, error.to_response_error())
            elif "id" in data:
                self._fail_request(protocol, data["id"], f"unreadable response: {exc}")
            return
        if "method" not in data and isinstance(message_id, (str, int)):
            # pygls forgets a request's result type only when it succeeds: every error reply
            # (ContentModified on each edit, for one) would leave its entry behind for good.
            protocol._result_types.pop(message_id, None)
        try:
            protocol.handle_message(message)
        except Exception as exc:  # noqa: BLE001 - a handler's bug must not stop the reader
            self._note(f"handling {data.get('method') or 'a response'} failed: {type(exc).__name__}: {exc}")

    def _fail_request(self, protocol: LanguageServerProtocol, msg_id: Any, why: str) -> bool:
        """Fail our pending request ``msg_id`` now instead of letting it time out."""
        future = protocol._request_futures.pop(msg_id, None)  # pygls 2.1.1 internals (pinned)
        protocol._result_types.pop(msg_id, None)
        if future is None or future.done():
            return False
        future.set_exception(JsonRpcInternalError(message=why))
        return True

    def _bad_message(self, what: str) -> None:
        self._bad_messages += 1
        self.troubles["bad"] = f"{self._bad_messages} unreadable message(s), last: {what}"
        self._note(self.troubles["bad"])
        limit = self._settings.server_max_bad_messages
        if limit and self._bad_messages >= limit:
            self._abandon(
                f"protocol error: {self._bad_messages} unreadable messages "
                f"(server_max_bad_messages = {limit}); last: {what}"
            )

    def _on_noise(self, data: bytes) -> None:
        self._noise_lines += 1
        self.troubles["noise"] = f"{self._noise_lines} line(s) on stdout that are not LSP headers, last: {data[:80]!r}"
        if self._noise_lines <= 20:  # a banner is worth seeing; an endless stream is not
            self.stderr_tail.append(f"stdout: {data[:200].decode('utf-8', 'replace')}")

    def _abandon(self, detail: str) -> None:
        """Fail and kill the process tree (in the background: callers may be sync)."""
        if not self.alive:
            return
        self._fail(detail)
        self._tasks.append(asyncio.create_task(self._kill_tree()))

    # --- readiness --------------------------------------------------------------------

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the server's readiness signal."""
        deadline = time.monotonic() + max(0.0, timeout)
        while not self.is_ready and self.alive:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._check_progress_grace()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready.wait(), min(remaining, 0.25))
        self._check_progress_grace()
        return self.is_ready

    def _check_progress_grace(self) -> None:
        if (
            self.config.ready == "progress"
            and not self._progress_seen
            and self._first_open_at is not None
            and time.monotonic() - self._first_open_at > self.PROGRESS_START_GRACE
        ):
            self._mark_ready("no progress reported")

    def note_answer(self, non_empty: bool) -> None:
        if non_empty and self.config.ready == "first-answer":
            self._mark_ready("first non-empty answer")

    # --- requests ---------------------------------------------------------------------

    async def _call(self, awaitable: Any, timeout: float, what: str) -> Any:
        try:
            return await asyncio.wait_for(awaitable, timeout)
        except TimeoutError as exc:
            raise ServerError(f"{self.config.name}: {what} timed out after {timeout:g}s") from exc
        except JsonRpcException as exc:
            raise ServerError(f"{self.config.name}: {what} failed: {exc}") from exc
        except RuntimeError as exc:  # pygls: "Client has been stopped", "Server process N exited"
            raise ServerError(f"{self.config.name}: {what}: {exc}") from exc

    async def request(self, method: str, params: Any, timeout: float | None = None, retries: int = 5) -> Any:
        """Send a request; time it out (and cancel it) per config; retry ContentModified."""
        if self._client is None or not self.alive:
            raise ServerError(f"{self.config.name}: not running ({self.state})")
        limit = self.config.timeout if timeout is None else timeout
        for attempt in range(retries + 1):
            msg_id = f"hm-{os.urandom(6).hex()}"
            future = self._client.protocol.send_request_async(method, params, msg_id=msg_id)
            # Never cancel pygls' own future (a late reply to a cancelled one makes pygls log an
            # InvalidStateError); a late answer or error is consumed and dropped instead.
            future.add_done_callback(_consume)
            if self._in_flight == 0:
                self._busy_since = time.monotonic()
            self._in_flight += 1
            try:
                return await asyncio.wait_for(asyncio.shield(future), limit)
            except TimeoutError as exc:
                with contextlib.suppress(Exception):
                    self._client.protocol.notify(T.CANCEL_REQUEST, T.CancelParams(id=msg_id))
                self._timed_out(method, limit)
                raise ServerError(f"{self.config.name}: {method} timed out after {limit:g}s") from exc
            except JsonRpcException as exc:
                # pygls maps -32801 to JsonRpcContentModified only in some versions: check the code.
                modified = isinstance(exc, JsonRpcContentModified) or getattr(exc, "code", None) == -32801
                if not modified:
                    raise ServerError(f"{self.config.name}: {method} failed: {exc}") from exc
                if attempt == retries:
                    raise ServerError(f"{self.config.name}: {method}: content modified") from exc
                await asyncio.sleep(0.05 * 2**attempt)
            except (RuntimeError, OSError) as exc:  # pygls: "Server process N exited"; a closed pipe
                raise ServerError(f"{self.config.name}: {method}: {exc}") from exc
            finally:
                self._in_flight -= 1
        raise ServerError(f"{self.config.name}: {method}: no answer")  # pragma: no cover

    def _timed_out(self, method: str, limit: float) -> None:
        """Note a timeout; a server silent for ``server_silence_limit`` while asked is hung or deaf."""
        self._timeouts += 1
        self.troubles["timeouts"] = f"{self._timeouts} request(s) timed out, last: {method} after {limit:g}s"
        silence_limit = self._settings.server_silence_limit
        now = time.monotonic()
        silent = now - max(self._last_message_at, self._busy_since)
        if silence_limit <= 0 or silent < silence_limit:
            return
        where = ""
        if self._frames is not None and self._frames.partial is not None:
            got, size = self._frames.partial
            where = f"; stuck inside a message: {got} of the {size} bytes its Content-Length announced"
        self._abandon(
            f"unresponsive: requests time out and nothing came from the server for "
            f"{silent:.1f}s (server_silence_limit = {silence_limit:g}s){where}"
        )

    def did_open(self, uri: str, language_id: str, text: str) -> None:
        if self._client is None or not self.alive or uri in self._opened:
            return
        self._opened[uri] = 1
        if self._first_open_at is None:
            self._first_open_at = time.monotonic()
        self._client.text_document_did_open(
            T.DidOpenTextDocumentParams(
                text_document=T.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)
            )
        )

    def did_change(self, uri: str, text: str) -> None:
        """Replace an open document's text (used when a file changed between maps)."""
        if self._client is None or not self.alive or uri not in self._opened:
            return
        version = self._opened[uri] = self._opened[uri] + 1
        self._client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def is_open(self, uri: str) -> bool:
        return uri in self._opened

    def did_close(self, uri: str) -> None:
        if self._client is None or not self.alive or uri not in self._opened:
            return
        del self._opened[uri]
        self._client.text_document_did_close(
            T.DidCloseTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri))
        )

    def did_change_watched_files(self, events: list[T.FileEvent]) -> None:
        """Tell the server which files were created, changed or deleted on disk."""
        if self._client is None or not self.alive or not events:
            return
        self._client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(changes=events))

    # --- stop -------------------------------------------------------------------------

    async def aclose(self, grace: float = 2.0) -> None:
        """shutdown → exit → SIGTERM → SIGKILL of the process group. Idempotent."""
        if self._closing:
            return
        self._closing = True
        client, process = self._client, self._process
        # A failed server gets no polite shutdown, and one that did not answer shutdown is not
        # waited for again: both go straight to the signals. Nor does one that never answered
        # initialize: it owes us nothing, and would only make close wait the grace for nothing.
        initialized = self.state in (ServerState.INDEXING, ServerState.READY)
        if client is not None and process is not None and process.returncode is None and initialized:
            exit_sent = False
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), grace)
                client.exit(None)
                exit_sent = True
            if exit_sent:  # polled: process.wait() also waits for pipes a child may hold
                deadline = time.monotonic() + grace
                while process.returncode is None and time.monotonic() < deadline:  # noqa: ASYNC110 - see above
                    await asyncio.sleep(0.05)
        await self._kill_tree()
        _LIVE.discard(self)
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.stop(), grace)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        if self.state not in (ServerState.FAILED, ServerState.MISSING, ServerState.READY):
            self.state = ServerState.DISABLED

    async def _kill_tree(self) -> None:
        process = self._process
        if process is None and self._client is not None:
            process = self._client._server  # cancelled between spawn and bookkeeping
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = await asyncio.to_thread(self._tree, process.pid)
            _signal_all(process.pid, pids, sig)
            # Not process.wait(): it also waits for the pipes, which a surviving child holds.
            deadline = time.monotonic() + 1.0
            while True:
                gone = (
                    process.returncode is not None and not group_alive(process.pid) and not any(_alive(p) for p in pids)
                )
                if gone:
                    break
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            if gone:
                break

    def _tree(self, pid: int) -> set[int]:
        """Every process this server started: its descendants, its session and group (a child
        that left the group keeps the session), and whatever carries our token (a daemon that
        double-forked and called setsid keeps only that)."""
        return set(descendants(pid)) | processes_of(pid, self._token)

    def kill_now(self) -> None:
        """At interpreter exit (no loop to wait on): SIGKILL everything this server started."""
        process = self._process
        if process is not None:
            _signal_all(process.pid, self._tree(process.pid), signal.SIGKILL)
        else:
            _signal_all(None, processes_of(None, self._token), signal.SIGKILL)


#: LSP languageId per hybridmap language name, where they differ.
_LANGUAGE_IDS = {"tsx": "typescriptreact", "bash": "shellscript"}


def language_id(language: str) -> str:
    return _LANGUAGE_IDS.get(language, language)


#: Bodies larger than this are parsed in a thread (measured: 12 MB of locations takes 1.4 s).
_OFF_LOOP_BYTES = 1 << 20


def _decode(body: bytes) -> Any:
    # Invalid UTF-8 inside a string (a hover of a Latin-1 file) costs a character, not the message.
    return json.loads(body.decode("utf-8", "replace"))


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _alive(pid: int) -> bool:
    try:
        zombie: str = psutil.STATUS_ZOMBIE  # psutil ships no types
        return bool(psutil.Process(pid).status() != zombie)
    except psutil.Error:
        return False


def group_alive(pgid: int) -> bool:
    """Is a live (non-zombie) process left in process group ``pgid``?"""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for proc in psutil.process_iter(["status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        with contextlib.suppress(ProcessLookupError, psutil.Error):
            if os.getpgid(proc.pid) == pgid:
                return True
    return False


#: Sessions that may have processes running; what is left of them is killed at exit.
_LIVE: set[LspSession] = set()


@atexit.register
def _kill_leftovers() -> None:
    # A caller that never closed its map (or was interrupted) still leaves nothing behind:
    # PR_SET_PDEATHSIG covers the server itself, not the daemons it started.
    for session in list(_LIVE):
        with contextlib.suppress(Exception):
            session.kill_now()


def _signal_all(leader: int | None, pids: set[int] | list[int], sig: int) -> None:
    if leader is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, sig)  # the server leads its own session/group
    for pid in pids:
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def processes_of(leader: int | None, token: str) -> set[int]:
    """Pids in session or group ``leader``, or whose environment holds ``token`` (a /proc scan:
    only our own user's processes are readable, which is all a server can start)."""
    found: set[int] = set()
    needle = f"{TOKEN_VARIABLE}={token}".encode() + b"\0"
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        try:
            if leader is not None and leader in (os.getsid(pid), os.getpgid(pid)):
                found.add(pid)
                continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if needle in fh.read() + b"\0":
                    found.add(pid)
        except (OSError, ValueError):
            continue  # gone, or not ours
    return found


def descendants(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def tree_rss_mb(pid: int) -> float:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total / 2**20
