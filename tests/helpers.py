"""Helpers shared by the test modules (one place; no test module imports another): running
the CLI, the language-server fixtures and their cases, the fault server configured as a user
would, running as an unprivileged user, the C/C++ policy fixtures."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import psutil
import pytest

from hybridmap import RepoMap
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
from hybridmap.model import FileTags, MapResult, Span, Symbol
from hybridmap.pipeline.merge import Merged
from hybridmap.pipeline.policies import apply_policies
from hybridmap.settings import Settings
from hybridmap.sources.lsp.session import find_command
from hybridmap.sources.treesitter import extract_tags

from .conftest import committed_copy, git, write_files

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp_types import CallToolResult

T = TypeVar("T")

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent


def run_cli(
    *args: str, timeout: float = 300, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m hybridmap ARGS`` as a user runs it (no terminal size from the test's own)."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return run_cli_with_env(*args, cwd=cwd, env={**base, **(env or {})}, timeout=timeout)


LSP_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lsp"


# language -> (fixture, server command, edges the server must produce, name-matched edges it must remove)
CASES = {
    "python": (
        "python",
        "ty",
        [
            ("app.py", "store/disk.py", "load"),
            ("app.py", "store/memory.py", "Runner"),
            ("app.py", "store/memory.py", "run"),
        ],
        [
            ("app.py", "store/memory.py", "load"),
            ("app.py", "store/disk.py", "Runner"),
            ("app.py", "store/disk.py", "run"),
        ],
    ),
    "typescript": (
        "typescript",
        "typescript-language-server",
        [
            ("src/app.ts", "src/disk.ts", "load"),
            ("src/app.ts", "src/memory.ts", "Runner"),
            ("src/app.ts", "src/memory.ts", "run"),
        ],
        [
            ("src/app.ts", "src/memory.ts", "load"),
            ("src/app.ts", "src/disk.ts", "Runner"),
            ("src/app.ts", "src/disk.ts", "run"),
        ],
    ),
    # clangd answers main.c's calls with api.h's prototypes, or with the bodies once it has
    # opened disk.c / memory.c; either way the defining file gets an edge (from the policy
    # ``header-definition`` in the first case: RIGHT_PROVENANCES). Each file's static load is
    # its own.
    "c": (
        "c",
        "clangd",
        [("main.c", "disk.c", "disk_count"), ("main.c", "memory.c", "memory_count")],
        [("disk.c", "memory.c", "load"), ("memory.c", "disk.c", "load")],
    ),
    "go": (
        "go",
        "gopls",
        [
            ("main.go", "disk/disk.go", "Load"),
            ("main.go", "memory/memory.go", "Runner"),
            ("main.go", "memory/memory.go", "Run"),
        ],
        [
            ("main.go", "memory/memory.go", "Load"),
            ("main.go", "disk/disk.go", "Runner"),
            ("main.go", "disk/disk.go", "Run"),
        ],
    ),
    "php": (
        "php",
        "intelephense",
        [
            ("app.php", "src/Store/Disk.php", "load"),
            ("app.php", "src/Store/Memory.php", "Runner"),
            ("app.php", "src/Store/Memory.php", "run"),
        ],
        [
            ("app.php", "src/Store/Memory.php", "load"),
            ("app.php", "src/Store/Disk.php", "Runner"),
            ("app.php", "src/Store/Disk.php", "run"),
        ],
    ),
    # bash-language-server follows `source`: app.sh sees disk.sh's load, cache.sh memory.sh's save.
    "bash": (
        "bash",
        "bash-language-server",
        [("app.sh", "lib/disk.sh", "load"), ("cache.sh", "lib/memory.sh", "save")],
        [("app.sh", "lib/memory.sh", "load"), ("cache.sh", "lib/disk.sh", "save")],
    ),
    "java": (
        "java",
        "jdtls",
        [
            ("src/App.java", "src/store/disk/Files.java", "load"),
            ("src/App.java", "src/store/memory/Runner.java", "Runner"),
            ("src/App.java", "src/store/memory/Runner.java", "run"),
        ],
        [
            ("src/App.java", "src/store/memory/Files.java", "load"),
            ("src/App.java", "src/store/disk/Runner.java", "Runner"),
            ("src/App.java", "src/store/disk/Runner.java", "run"),
        ],
    ),
    "elm": (
        "elm",
        "elm-language-server",
        [("src/Main.elm", "src/Disk.elm", "load"), ("src/Main.elm", "src/Memory.elm", "run")],
        [("src/Main.elm", "src/Memory.elm", "load"), ("src/Main.elm", "src/Disk.elm", "run")],
    ),
    "fortran": (
        "fortran",
        "fortls",
        [("app.f90", "disk_store.f90", "load"), ("app.f90", "memory_store.f90", "run")],
        [("app.f90", "memory_store.f90", "load"), ("app.f90", "disk_store.f90", "run")],
    ),
    "solidity": (
        "solidity",
        "nomicfoundation-solidity-language-server",
        [
            ("contracts/App.sol", "contracts/Disk.sol", "load"),
            ("contracts/App.sol", "contracts/Memory.sol", "Runner"),
            ("contracts/App.sol", "contracts/Memory.sol", "run"),
        ],
        [
            ("contracts/App.sol", "contracts/Memory.sol", "load"),
            ("contracts/App.sol", "contracts/Disk.sol", "Runner"),
            ("contracts/App.sol", "contracts/Disk.sol", "run"),
        ],
    ),
    "rust": (
        "rust",
        "rust-analyzer",
        [
            ("src/main.rs", "src/disk.rs", "load"),
            ("src/main.rs", "src/memory.rs", "Runner"),
            ("src/main.rs", "src/memory.rs", "run"),
        ],
        [
            ("src/main.rs", "src/memory.rs", "load"),
            ("src/main.rs", "src/disk.rs", "Runner"),
            ("src/main.rs", "src/disk.rs", "run"),
        ],
    ),
    # The <script> blocks of single-file components, answered by their own servers.
    "svelte": (
        "svelte",
        "svelteserver",
        [
            ("src/App.svelte", "src/disk.ts", "load"),
            ("src/App.svelte", "src/memory.ts", "Runner"),
            ("src/App.svelte", "src/memory.ts", "run"),
        ],
        [
            ("src/App.svelte", "src/memory.ts", "load"),
            ("src/App.svelte", "src/disk.ts", "Runner"),
            ("src/App.svelte", "src/disk.ts", "run"),
        ],
    ),
    "astro": (
        "astro",
        "astro-ls",
        [
            ("src/pages/index.astro", "src/lib/disk.ts", "load"),
            ("src/pages/index.astro", "src/lib/memory.ts", "Runner"),
            ("src/pages/index.astro", "src/lib/memory.ts", "run"),
        ],
        [
            ("src/pages/index.astro", "src/lib/memory.ts", "load"),
            ("src/pages/index.astro", "src/lib/disk.ts", "Runner"),
            ("src/pages/index.astro", "src/lib/disk.ts", "run"),
        ],
    ),
    "vue": (
        "vue",
        "typescript-language-server",
        [
            ("src/App.vue", "src/disk.ts", "load"),
            ("src/App.vue", "src/memory.ts", "Runner"),
            ("src/App.vue", "src/memory.ts", "run"),
        ],
        [
            ("src/App.vue", "src/memory.ts", "load"),
            ("src/App.vue", "src/disk.ts", "Runner"),
            ("src/App.vue", "src/disk.ts", "run"),
        ],
    ),
}


def fixture_repo(tmp_path: Path, name: str) -> Path:
    return committed_copy(LSP_FIXTURES / name, tmp_path / name)


def edges(repo: RepoMap) -> dict[tuple[str, str, str], str]:
    graph = repo.graph()
    assert graph is not None
    return {(u, v, k): d["provenance"] for u, v, k, d in graph.to_networkx().edges(keys=True, data=True)}


def registry_with_only(tmp_path: Path, language: str, server: str) -> LanguageRegistry:
    """The built-in registry, except that ``language`` has ``server`` as its only candidate
    (the user's config dir overrides the built-in file by name)."""
    user = tmp_path / "user_configs"
    user.mkdir(exist_ok=True)
    text = (BUILTIN_CONFIG_DIR / f"{language}.toml").read_text()
    text = re.sub(r"language-servers = \[[^\]]*\]", f'language-servers = ["{server}"]', text)
    (user / f"{language}.toml").write_text(text)
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


def require(command: str) -> None:
    if find_command(command) is None:
        pytest.skip(f"{command} is not installed on this machine (scripts/install-servers installs it)")


FAULT_SERVER = Path(__file__).resolve().parent / "servers" / "fault_server.py"


TIMEOUT = 1.0
"""Per-request timeout of the fault server's config."""


READY_TIMEOUT = 2.0


def write_user_config(
    user: Path,
    command: str,
    args: list[str],
    *,
    ready: str = "initialized",
    environment: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
    ready_timeout: float = READY_TIMEOUT,
) -> Path:
    """A user config directory whose only Python server is ``command``."""
    user.mkdir(parents=True, exist_ok=True)
    env = ", ".join(f'{k} = "{v}"' for k, v in (environment or {}).items())
    (user / "python.toml").write_text(f"""
[language]
name = "python"
grammar = "python"
file-types = ["py"]
language-servers = ["fault"]

[language-server.fault]
command = {json.dumps(command)}
args = {json.dumps(args)}
timeout = {timeout}
ready = "{ready}"
ready-timeout = {ready_timeout}
environment = {{ {env} }}
[language-server.fault.sandbox]
write = {json.dumps(output_files(args))}
""")
    return user


def output_files(args: list[str] | tuple[str, ...]) -> list[str]:
    """The files a fault server writes (``--pid-file``, ``--log``, ``--env-file``), created now:
    a user may widen the sandbox of a server they configure, here by these files alone (a
    directory holding the repository cannot be granted without the repository)."""
    out: list[str] = []
    for flag, value in itertools.pairwise(args):
        if flag in ("--pid-file", "--log", "--env-file"):
            Path(value).touch()
            out.append(value)
    return out


def user_registry(
    tmp_path: Path,
    command: str,
    args: list[str],
    *,
    ready: str = "initialized",
    environment: dict[str, str] | None = None,
) -> LanguageRegistry:
    """A registry whose only Python server is ``command``, configured as a user would."""
    user = write_user_config(tmp_path / "user_configs", command, args, ready=ready, environment=environment)
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


def read_pids(pid_file: Path) -> list[int]:
    return [int(line) for line in pid_file.read_text().split()] if pid_file.exists() else []


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def registry_with_fault_server(
    tmp_path: Path, mode: str | None, timeout: float = 2.0, extra_args: tuple[str, ...] = (), environment: str = ""
) -> LanguageRegistry:
    """The user's own config: Python is served by the fault server (``mode=None``: no server)."""
    user = tmp_path / "user_configs"
    user.mkdir(exist_ok=True)
    if mode is None:
        servers = ""
    else:
        args = json.dumps([str(FAULT_SERVER), mode, *extra_args])
        servers = f"""
[language-server.fault]
command = "{sys.executable}"
args = {args}
timeout = {timeout}
ready-timeout = 5
environment = {{ {environment} }}
[language-server.fault.sandbox]
write = {json.dumps(output_files(extra_args))}
"""
    (user / "python.toml").write_text(f"""
[language]
name = "python"
grammar = "python"
file-types = ["py"]
language-servers = [{'"fault"' if mode else ""}]
{servers}""")
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


NOBODY = 65534


def _can_run_as_nobody() -> bool:
    if os.geteuid() != 0:
        return True  # already unprivileged: chmod 000 works as it is
    if shutil.which("setpriv") is None:
        return False
    probe = subprocess.run(
        [
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            sys.executable,
            "-c",
            "import hybridmap",
        ],
        capture_output=True,
        cwd="/",
    )
    return probe.returncode == 0


def run_as_unprivileged(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as an unprivileged user (setpriv to 'nobody' when we are root)."""
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if os.geteuid() == 0 else []
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", **(env or {})}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "hybridmap", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env=full_env,
    )


needs_unprivileged = pytest.mark.skipif(
    not _can_run_as_nobody(), reason="needs setpriv to drop root, or an unprivileged user"
)


def tags_of(registry: LanguageRegistry, files: dict[str, str]) -> dict[str, FileTags]:
    out = {}
    for path, text in files.items():
        language = registry.language_for(path)
        assert language is not None, path
        out[path] = extract_tags(registry.compiled(language), text.encode())
    return out


def derived(
    registry: LanguageRegistry,
    files: dict[str, str],
    resolved: dict[tuple[str, str], dict[str, str]],
    settings: Settings | None = None,
) -> dict[tuple[str, str], dict[str, str]]:
    merged = Merged(tags_of(registry, files), resolved, {}, ("tree-sitter", "lsp"))
    return apply_policies(merged, settings or Settings()).resolved


# --- an MCP session with the real server process (the SDK imported only by the tests that use it)


@asynccontextmanager
async def connect(
    root: Path, tmp_path: Path, *, output_schemas: bool = False, cwd: Path | None = None, extra: tuple[str, ...] = ()
) -> AsyncIterator[ClientSession]:
    """A session with ``python -m hybridmap mcp ROOT`` (its stderr in ``tmp_path/server.log``);
    ``output_schemas``: the tools listed with them (the client then validates each result);
    ``cwd``: where it runs (``-m`` imports a ``hybridmap/`` there first); ``extra``: more arguments."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = ["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "cache"), *extra]
    params = StdioServerParameters(
        command=sys.executable, args=[*args, "--output-schemas"] if output_schemas else args, cwd=cwd
    )
    with open(tmp_path / "server.log", "a") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def run(root: Path, tmp_path: Path, body: Callable[[ClientSession], Awaitable[T]]) -> T:
    async def main() -> T:
        async with connect(root, tmp_path) as session:
            return await body(session)

    return anyio.run(main)


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


async def ok(session: ClientSession, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return text(result), result.structured_content


async def error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, text(result)
    message = text(result)
    assert "\n" not in message and "Traceback" not in message
    return message


# --- a small name-matched corpus for ranking tests


def rank_symbol(name: str, kind: str, line: int) -> Symbol:
    return Symbol(name, kind, Span(line, 0, line + 1, 0), line, 4, f"def {name}():")


def rank_tags(defs: list[str], refs: list[str]) -> FileTags:
    from hybridmap.model import Reference

    return FileTags.build(
        tuple(rank_symbol(d, "function", i * 3) for i, d in enumerate(defs)),
        [Reference(r, 50 + i, 0) for i, r in enumerate(refs)],
        100,
    )


def rank_corpus() -> dict[str, FileTags]:
    return {
        "store/disk.py": rank_tags(["load_index", "save_index"], []),
        "store/memory.py": rank_tags(["load_index"], []),
        "app.py": rank_tags(["main"], ["load_index", "save_index"]),
        "cli.py": rank_tags(["run"], ["main"]),
        "tests/test_disk.py": rank_tags(["test_load"], ["load_index", "save_index"]),
        "lonely.py": rank_tags(["unrelated_helper"], []),
    }


# --- hostile output: bytes no output may carry raw (control, C1, bidi, zero-width, BOM, tags)

FORBIDDEN = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa0-\xaf]"
    rb"|\xef\xbb\xbf|\xf3\xa0[\x80-\x81]"
)


# --- hostile git repositories

GIT_SOURCE = {
    "app.py": "def handle_request():\n    return load_settings()\n",
    "settings.py": "def load_settings():\n    return {}\n",
}


def run_cli_with_env(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m hybridmap ARGS``; ``env``, when given, is the whole environment (with no
    daemon unless it says ``HYBRIDMAP_DAEMON``: conftest.py)."""
    if env is not None and "HYBRIDMAP_DAEMON" not in env:
        env = {**env, "HYBRIDMAP_DAEMON": "off"}
    return subprocess.run(
        [sys.executable, "-m", "hybridmap", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )


def map_json(root: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> dict:
    proc = run_cli_with_env("map", str(root), "--mode", "static", "--format", "json", "--no-cache", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def command_writing(marker: Path) -> str:
    return f"touch {marker}; false"


def repository(tmp_path: Path, name: str = "repo", files: dict[str, str] | None = None) -> Path:
    root = tmp_path / name
    write_files(root, files or GIT_SOURCE)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


class RedisServer:
    """A real Redis server (Debian's ``redis-server``, installed by ``scripts/install-test-stores``)
    on a private Unix socket, owned by one test: started, stopped, killed or paused as a store
    that fails does. Nothing is saved to disk."""

    def __init__(self, directory: Path, *options: str, password: str | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: scripts/test installs it (scripts/install-test-stores)")
        directory.mkdir(parents=True, exist_ok=True)
        self.socket = directory / "redis.sock"
        self.password = password
        auth = ["--requirepass", password] if password else []
        self._args = [binary, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
                      "--save", "", "--appendonly", "no", "--dir", str(directory), *auth, *options]  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> None:
        self.process = subprocess.Popen(self._args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        for _ in range(200):
            try:
                if self.client().ping():
                    return
            except (redis.exceptions.ConnectionError, FileNotFoundError):
                time.sleep(0.02)
        pytest.fail("redis-server did not answer on its socket within 4 s")

    def client(self) -> Any:
        import redis

        return redis.Redis(unix_socket_path=str(self.socket), password=self.password, socket_timeout=5)

    def stop(self) -> None:
        """Gone, as a store that crashed: the process killed, its socket left behind."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def pause(self) -> None:
        """Alive but not answering (SIGSTOP): a store that hangs."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.resume()
        self.stop()


def sample_repo(root: Path, files: int = 40, defs: int = 30) -> Path:
    """A git repository of Python files that call each other (a real graph to rank)."""
    root.mkdir(parents=True)
    write_files(
        root,
        {
            f"pkg/mod{i}.py": "".join(
                f"def func_{i}_{j}(value):\n    return func_{(i + 1) % files}_{j}(value)\n\n" for j in range(defs)
            )
            for i in range(files)
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "sample")
    return root


def map_with(
    root: Path,
    cache: Path,
    registry: LanguageRegistry,
    progress: Callable[[str, int, int], None] | None = None,
    environ: dict[str, str] | None = None,
    tokens: int = 2048,
    **overrides: object,
) -> MapResult:
    """A static map of ``root`` with ``cache`` as its cache directory, no server started."""
    with RepoMap(
        root,
        overrides={"cache_dir": str(cache), **overrides},
        registry=registry,
        progress=progress,
        start_servers=False,
        environ=environ,
    ) as repo:
        return repo.map(tokens=tokens, mode="static")


@contextlib.contextmanager
def never_rebuilt() -> Iterator[None]:
    """Every graph and lexical-model change goes through the update (a small repository's edits
    touch a large share of its files, which would otherwise rebuild)."""
    from hybridmap.pipeline.graph import update as graph_update
    from hybridmap.pipeline.rank import lexical as lexical_module

    share, lexical_share = graph_update.REBUILD_SHARE, lexical_module.REBUILD_SHARE
    graph_update.REBUILD_SHARE = lexical_module.REBUILD_SHARE = float("inf")
    try:
        yield
    finally:
        graph_update.REBUILD_SHARE, lexical_module.REBUILD_SHARE = share, lexical_share
