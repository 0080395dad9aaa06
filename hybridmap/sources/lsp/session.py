"""One language server, owned by one :class:`LspSession`: the handshake, requests, documents.

The session composes the client's parts, each in its own module (the map is in
``docs/reliability.md``, "The client, by module"):

- :mod:`.launch` finds the program and builds its environment;
- :mod:`.process` spawns it and owns its process tree, stderr, exit and memory;
- :mod:`.wire` speaks JSON-RPC over its pipes (framing in :mod:`.framing`, types and error
  translation in :mod:`.pygls_adapter`, the only module that imports pygls);
- :mod:`.handlers` answers what the server asks of us;
- :mod:`.readiness` tracks STARTING → INDEXING → READY and the troubles on the way.

What is left here: ``initialize`` (capabilities, position encoding, version) and
shutdown → exit → SIGTERM → SIGKILL; every request with a timeout, cancelled with
``$/cancelRequest`` when it expires, ``ContentModified`` retried; the documents we opened.
Every error reaches callers as :class:`~hybridmap.errors.ServerError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from ...errors import ServerError
from ...infra.logs import guard_library_logging
from ...model import ServerState
from ...settings import Settings
from .config import ServerConfig
from .confinement import confinement, kernel_support, scratch_for
from .handlers import ClientHandlers
from .launch import (
    ENV_ALLOWLIST,
    FROM_SOURCE_TREE,
    INSTALL_DIRS,
    SERVERS_DIR,
    TOKEN_VARIABLE,
    command_problem,
    expand_install_dir,
    find_command,
    outside_repository,
    server_environment,
    server_install_hint,
    user_servers_dir,
)
from .process import SandboxRefused, ServerProcess, descendants, group_alive, processes_of, tree_rss_mb
from .pygls_adapter import ContentModified, MsgId, RequestTimeout, translate
from .readiness import Health, Readiness
from .text_sync import TextSync
from .wire import Channel

# pygls (imported by the adapter) logs every quirk of a server; its records stay out of a host's
# INFO logs (hybridmap/infra/logs.py). What matters reaches the user as a server state or detail.
guard_library_logging()

__all__ = [  # what other modules import from here; the definitions live in launch and process
    "ENV_ALLOWLIST",
    "FROM_SOURCE_TREE",
    "INSTALL_DIRS",
    "SERVERS_DIR",
    "TOKEN_VARIABLE",
    "LspSession",
    "command_problem",
    "descendants",
    "expand_install_dir",
    "find_command",
    "group_alive",
    "processes_of",
    "server_environment",
    "tree_rss_mb",
    "user_servers_dir",
]

#: stderr of a command that exists but whose real program does not (rustup proxies, shims).
_NOT_INSTALLED = re.compile(r"unknown binary|is not installed|not installed for|command not found", re.I)


class LspSession(TextSync):
    """The life of one server process: start, answer, track readiness, stop."""

    STDERR_LINES = 200
    PROGRESS_START_GRACE = Readiness.PROGRESS_START_GRACE

    def __init__(
        self,
        config: ServerConfig,
        language: str,
        root: Path,
        *,
        environ: Mapping[str, str] | None = None,
        memory_limit_mb: float = 0.0,
        settings: Settings | None = None,
        repository: Path | None = None,
    ) -> None:
        self.config = config
        self.language = language
        self.root = root
        self.repository = root if repository is None else repository
        """The whole repository (``root`` is the server's project root inside it): read-only to it."""
        self.sandbox = ""
        """How the process is confined: ``landlock ABI N``, or why it is not ('' before start)."""
        self.version = ""
        self.position_encoding = "utf-16"
        self.capabilities: Any = None
        self.stderr_tail: deque[str] = deque(maxlen=self.STDERR_LINES)
        self._environ = environ
        self._memory_limit = memory_limit_mb
        self._settings = settings if settings is not None else Settings()
        self._readiness = Readiness(config)
        self._health = Health(self._settings, self._readiness.note, self.stderr_tail.append, self._abandon)
        self._process = ServerProcess(f"{os.getpid()}-{os.urandom(8).hex()}", self._on_message)
        self._channel: Channel | None = None
        self._opened: dict[str, int] = {}
        self._opened_at: dict[str, float] = {}
        self._closing = False
        self._background: list[asyncio.Task[Any]] = []

    # --- status (readiness and health keep it; these are the names callers read) -----------

    @property
    def state(self) -> ServerState:
        return self._readiness.state

    @property
    def reported_state(self) -> ServerState:
        """What a report says: :attr:`state`, or ``degraded`` for a live server that said it
        cannot load the project."""
        return self._readiness.reported_state

    @property
    def degraded_reason(self) -> str:
        return self._readiness.degraded_reason

    @property
    def detail(self) -> str:
        """Why the server is out of service (failed, missing); empty while it works."""
        return self._readiness.detail

    @property
    def events(self) -> list[str]:
        """The last 50 things that happened to it (ready, failed, unreadable messages...)."""
        return self._readiness.events

    @property
    def started_at(self) -> float:
        return self._readiness.started_at

    @property
    def ready_at(self) -> float | None:
        return self._readiness.ready_at

    @property
    def failed_at(self) -> float | None:
        return self._readiness.failed_at

    @property
    def troubles(self) -> dict[str, str]:
        """Trouble that did not stop the server, the latest of each kind (timeouts, bad messages...)."""
        return self._health.troubles

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def is_ready(self) -> bool:
        return self._readiness.state is ServerState.READY

    @property
    def alive(self) -> bool:
        return self._readiness.alive

    @property
    def pending_requests(self) -> int:
        """Requests sent and not yet answered: 0 between maps, whatever the server did."""
        return self._channel.pending if self._channel is not None else 0

    def seconds_to_ready(self) -> float | None:
        ready_at = self._readiness.ready_at
        return None if ready_at is None else round(ready_at - self._readiness.started_at, 3)

    def health(self) -> str:
        """What a report adds to a live server's state: a readiness that never came, the last trouble."""
        return "; ".join([*self._readiness.waiting_notes(), *self._health.troubles.values()])

    async def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the server's readiness signal."""
        return await self._readiness.wait(timeout)

    def note_answer(self, non_empty: bool) -> None:
        self._readiness.on_answer(non_empty)

    def supports(self, capability: str) -> bool:
        """Does the server offer ``capability`` (lsprotocol's name: ``"hover_provider"``)?"""
        return has_capability(self.capabilities, capability)

    # --- what happens to it ---------------------------------------------------------------

    def _on_message(self, message: str) -> None:
        """A stderr line or a log/show message: kept in the tail, and maybe the readiness signal."""
        self.stderr_tail.append(message[:500])
        self._readiness.on_message(message)

    def _on_exit(self, returncode: int | None) -> None:
        if self._channel is not None:
            self._channel.fail_all(RuntimeError(f"Server process {self.pid} exited with return code: {returncode}"))
        if not self._closing:
            tail = " | ".join(list(self.stderr_tail)[-3:])
            self._readiness.fail(f"server exited with code {returncode}" + (f": {tail}" if tail else ""))
            self._background.append(asyncio.create_task(self._process.kill_tree()))  # the children it left

    def _abandon(self, detail: str) -> None:
        """Fail and kill the process tree (in the background: callers may be sync)."""
        if not self.alive:
            return
        self._readiness.fail(detail)
        self._background.append(asyncio.create_task(self._process.kill_tree()))

    # --- start ------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn and initialize; on failure the state says why (never raises)."""
        self._readiness.started_at = self._health.last_message_at = time.monotonic()
        hint = f"; install with: {server_install_hint(self.config)}" if self.config.install else ""
        environ = outside_repository(self._environ, self.repository)
        executable = find_command(self.config.command, environ=environ)
        if executable is None:
            self._readiness.missing(command_problem(self.config.command) + hint)
            return
        user = os.environ if self._environ is None else self._environ  # where our own cache is
        scratch = scratch_for(self._settings.resolved_cache_dir(user), self.config.name, self.repository)
        confine = confinement(self.config, executable, self.repository, scratch, environ)
        if confine.problem:
            self._readiness.missing(confine.problem + hint)
            return
        env = server_environment(self.config, environ, token=self._process.token)
        env.update(confine.environment)
        kernel = kernel_support(self._settings)
        try:
            self.sandbox = await self._process.spawn(
                confine.program,
                self.config.args,
                str(self.root),
                env,
                confine.policy,
                kernel=kernel,
                require_sandbox=not (
                    self.config.sandbox.safe_without_sandbox or self._settings.allow_unsandboxed_servers
                ),
            )
        except SandboxRefused as exc:
            self._readiness.fail(str(exc))
            return
        except OSError as exc:  # not executable, exec format error...
            self._readiness.fail(f"cannot start '{executable}': {exc.strerror or exc}")
            return
        self._connect()
        try:
            result = await self._ask(T.INITIALIZE, initialize_params(self.config, self.root), self.config.ready_timeout)
        except ServerError as exc:
            await asyncio.sleep(0.05)  # let the stderr drain catch the last words
            if self._process.exited.is_set() and _NOT_INSTALLED.search(" ".join(self.stderr_tail)):
                # e.g. rustup's proxy for a component that is not installed
                self._readiness.missing(" ".join(self.stderr_tail)[-300:] + hint)
            else:
                self._readiness.fail(str(exc))
            await self.aclose()
            return
        self.capabilities, self.position_encoding, self.version = read_initialize_result(result)
        self._notify(T.INITIALIZED, T.InitializedParams())
        self._readiness.initialized()

    def _connect(self) -> None:
        handlers = ClientHandlers(
            self.config,
            self.root,
            self._readiness.on_progress,
            self._on_message,
            self._readiness.check_degraded,
            self._readiness.on_status,
        )
        self._channel = Channel(
            self._process.write,
            handlers,
            self._health,
            self._settings.server_max_message_bytes,
            self._readiness.note,
        )
        self._process.add_task(asyncio.create_task(self._read(self._channel)), reads_output=True)
        self._process.watch(self._on_exit, self._memory_limit, self._abandon)

    async def _read(self, channel: Channel) -> None:
        try:
            await channel.read(self._process.stdout)
        except Exception as exc:  # noqa: BLE001 - a reader that dies quietly leaves a live but deaf session
            self._abandon(f"reading its output failed: {type(exc).__name__}: {exc}")
            return
        if self._closing:
            return
        # The output is closed: normally the process is exiting (its exit code tells why).
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._process.exited.wait(), 1.0)
        if not self._process.exited.is_set():
            self._abandon("the server closed its output but kept running")

    # --- requests ---------------------------------------------------------------------

    async def _ask(self, method: str, params: Any, limit: float) -> Any:
        """One request, one answer (or ServerError); cancelled when it times out or we are."""
        channel = self._channel
        if channel is None:
            raise ServerError(f"{self.config.name}: not running ({self.state})")
        msg_id: MsgId | None = None
        try:
            msg_id, future = channel.request(method, params)
            return await asyncio.wait_for(future, limit)
        except Exception as exc:  # translated: callers see ServerError only
            raise translate(exc, f"{self.config.name}: {method}", limit) from exc
        finally:
            if msg_id is not None:
                channel.cancel(msg_id)  # a no-op once answered; else $/cancelRequest

    async def request(self, method: str, params: Any, timeout: float | None = None, retries: int = 5) -> Any:
        """Send a request; time it out (and cancel it) per config; retry ContentModified."""
        if self._channel is None or not self.alive:
            raise ServerError(f"{self.config.name}: not running ({self.state})")
        limit = self.config.timeout if timeout is None else timeout
        if self._opened_at:
            await self._settle(params)
        for attempt in range(retries + 1):
            self._health.asking()
            try:
                return await self._ask(method, params, limit)
            except ContentModified:
                if attempt == retries:
                    raise
            except RequestTimeout:
                frames = self._channel.frames
                self._health.timed_out(method, limit, frames.partial if frames is not None else None)
                raise
            finally:
                self._health.answered()
            await asyncio.sleep(0.05 * 2**attempt)
        raise ServerError(f"{self.config.name}: {method}: no answer")  # pragma: no cover

    def _notify(self, method: str, params: Any) -> None:
        if self._channel is not None and self.alive:
            self._channel.notify(method, params)

    # --- stop -------------------------------------------------------------------------

    async def aclose(self, grace: float = 2.0) -> None:
        """shutdown → exit → SIGTERM → SIGKILL of the process group. Idempotent."""
        if self._closing:
            return
        self._closing = True
        # A failed server gets no polite shutdown, and one that did not answer shutdown is not
        # waited for again: both go straight to the signals. Nor does one that never answered
        # initialize: it owes us nothing, and would only make close wait the grace for nothing.
        initialized = self.state in (ServerState.INDEXING, ServerState.READY)
        if self._channel is not None and self._process.running and initialized:
            with contextlib.suppress(ServerError, OSError):
                await self._ask(T.SHUTDOWN, None, grace)
                self._channel.notify(T.EXIT, None)
                await self._process.wait_exit(grace)
        await self._process.close()
        for task in self._background:
            task.cancel()
        for task in self._background:
            with contextlib.suppress(BaseException):
                await task
        self._readiness.closed()

    def kill_now(self) -> None:
        """At interpreter exit (no loop to wait on): SIGKILL everything this server started."""
        self._process.kill_now()


def initialize_params(config: ServerConfig, root: Path) -> T.InitializeParams:
    return T.InitializeParams(
        # No process id: servers that watch their client check it with kill(pid, 0), which the
        # sandbox's signal scope refuses (EPERM, read as "the client died": they exit). They
        # die with us anyway (PR_SET_PDEATHSIG, and the token sweep for what they start).
        process_id=None,
        root_uri=root.as_uri(),
        root_path=str(root),
        workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        capabilities=_client_capabilities(),
        initialization_options=expand_install_dir(dict(config.init_options)) or None,
        client_info=T.ClientInfo(name="hybridmap", version="0.1"),
    )


def read_initialize_result(result: Any) -> tuple[Any, str, str]:
    """The server's capabilities, position encoding and version from its initialize reply."""
    raw = result if isinstance(result, dict) else {}  # kept untyped: lsprotocol could not read it
    caps = raw.get("capabilities") if raw else getattr(result, "capabilities", None)
    if isinstance(caps, dict):
        encoding = caps.get("positionEncoding")
    else:
        encoding = getattr(caps, "position_encoding", None) if caps is not None else None
    position_encoding = "utf-8" if str(encoding) in ("utf-8", "PositionEncodingKind.Utf8") else "utf-16"
    info = raw.get("serverInfo") if raw else getattr(result, "server_info", None)
    version = ""
    if isinstance(info, dict):
        version = f"{info.get('name', '')} {info.get('version', '')}".strip()[:80]
    elif info is not None:
        version = server_version(info.name, info.version or "")
    return caps, position_encoding, version


def has_capability(caps: Any, capability: str) -> bool:
    if caps is None:
        return False
    if isinstance(caps, dict):  # kept untyped: the names are the wire's camelCase
        camel = "".join(w if i == 0 else w.capitalize() for i, w in enumerate(capability.split("_")))
        return bool(caps.get(camel))
    return bool(getattr(caps, capability, None))


def server_version(name: str, version: str) -> str:
    if version.startswith("{"):  # gopls puts its build info JSON here
        match = re.search(r'"Version":"([^"]*)"\}?$', version)
        version = match.group(1) if match else ""
    # clangd's version already starts with its name ("clangd version 22.1.1 ...").
    shown = "" if version.lower().startswith(name.lower()) else name
    return f"{shown} {version}".strip()[:80]


def _client_capabilities() -> T.ClientCapabilities:
    return T.ClientCapabilities(
        # rust-analyzer tells when it is done loading (ready = "server-status").
        experimental={"serverStatusNotification": True},
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
