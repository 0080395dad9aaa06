"""Hostile repositories against the language-server side: configs, outside content, repository
code run by servers, servers that never initialize, daemons, bounded close.

Every test builds a real repository (real git, real files) and uses real servers or
``tests/servers/fault_server.py``; each asserts what must never happen (a marker file written
by repository code, a secret from outside the root in the output, a process left behind, a
traceback) and that the map or doctor still came back and said why.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hybridmap.features.doctor import check_servers
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.settings import Settings

from ..conftest import git


def commit_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    return root


# --- finding 12: a repository's .hybridmap/lsp_configs/*.toml --------------------------------


def _repo_config(server: str) -> str:
    return f"""
[language]
name = "python"
language-servers = ["evil"]
[language-server.evil]
command = "evil-server"
{server}
"""


BAD_CONFIGS = {
    "absolute-root-pattern": _repo_config('required-root-patterns = ["/etc/passwd"]'),
    "parent-root-pattern": _repo_config('required-root-patterns = ["../*"]'),
    "home-root-pattern": _repo_config('required-root-patterns = ["~/.ssh/*"]'),
    "pattern-not-a-string": _repo_config("required-root-patterns = [1, {a = 2}]"),
    "patterns-not-a-list": _repo_config('required-root-patterns = "go.mod"'),
    "too-many-patterns": _repo_config(f"required-root-patterns = {json.dumps([f'p{i}' for i in range(5000)])}"),
    "huge-pattern": _repo_config(f'required-root-patterns = ["{"*" * 100_000}"]'),
    "timeout-a-string": _repo_config('timeout = "abc"'),
    "timeout-huge": _repo_config("timeout = 1e300"),
    "timeout-nan": _repo_config("timeout = nan"),
    "timeout-negative": _repo_config("ready-timeout = -5"),
    "timeout-bool": _repo_config("timeout = true"),
    "install-a-table": _repo_config("install = { a = 1 }"),
    "command-a-table": _repo_config("command2 = 1\n[language-server.evil.command]\nx = 1"),
    "server-not-a-table": '[language]\nname = "python"\nlanguage-servers = ["evil"]\n[language-server]\nevil = 3\n',
    "servers-a-string": '[language]\nname = "python"\nlanguage-servers = "evil"\n[language-server.e]\ncommand = "x"\n',
    "environment-not-strings": _repo_config("environment = { A = 1 }"),
    "ready-regex-huge": _repo_config(f'ready = "log:{"a" * 100_000}"'),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_repository_server_config_is_reported_not_a_crash(
    name: str, tmp_path: Path, registry: LanguageRegistry
) -> None:
    """Every field of a repository's server config, wrong in type, size or place: the doctor
    reports the file as ignored (no opt-in needed to read it) and the built-ins still serve."""
    root = commit_repo(tmp_path / "repo", {"a.py": "x = 1\n", ".hybridmap/lsp_configs/python.toml": BAD_CONFIGS[name]})
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    checks = asyncio.run(check_servers(root, registry, settings, start=False, wait=0))
    python = {c.language: c for c in checks}["python"]
    assert python.config_problem.startswith("repository config ignored: "), python
    assert "evil" not in [c.name for c in python.candidates]
    assert python.chosen is not None  # the built-in candidates are untouched


def test_doctor_cli_with_absolute_root_pattern_has_no_traceback(tmp_path: Path) -> None:
    """The reported crash: ``hybridmap servers`` on such a repository, with and without start."""
    root = commit_repo(
        tmp_path / "repo",
        {"a.py": "x = 1\n", ".hybridmap/lsp_configs/python.toml": BAD_CONFIGS["absolute-root-pattern"]},
    )
    for extra in (["--no-start"], ["--server-wait", "5"]):
        proc = subprocess.run(
            [sys.executable, "-m", "hybridmap", "servers", str(root), *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "repository config ignored" in proc.stdout and "not a relative glob" in proc.stdout


# --- finding 10: servers that never initialize, daemons, close racing a map -----------------

from hybridmap import MapResult, RepoMap, ServerState  # noqa: E402
from hybridmap.errors import RequestError  # noqa: E402
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR  # noqa: E402

from ..helpers import (  # noqa: E402
    FAULT_SERVER,
    alive,
    fixture_repo,
    read_pids,
    write_user_config,
)

CLOSE_BOUND = 2.0
"""Seconds ``close()`` may take beyond the servers' shutdown grace; a server that never
initialized is owed no grace at all."""


def fault_config(directory: Path, mode: str, pid_file: Path, ready_timeout: float = 30.0) -> Path:
    """A user config dir whose only Python server is the fault server in ``mode``."""
    return write_user_config(
        directory,
        sys.executable,
        [str(FAULT_SERVER), mode, "--pid-file", str(pid_file)],
        timeout=1,
        ready_timeout=ready_timeout,
    )


def fault_registry(tmp_path: Path, mode: str, pid_file: Path, ready_timeout: float = 30.0) -> LanguageRegistry:
    user = fault_config(tmp_path / "user_configs", mode, pid_file, ready_timeout)
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


def kill_leftovers(pids: list[int]) -> list[int]:
    """Kill (and return) the pids still alive: a failing test must not leak a daemon."""
    import os
    import signal

    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def wait_gone(pids: list[int], within: float) -> list[int]:
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return []
        time.sleep(0.05)
    return kill_leftovers(pids)


def test_server_that_never_initializes_says_why_and_closes_at_once(tmp_path: Path) -> None:
    import time

    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    registry = fault_registry(tmp_path, "never-initialize", pid_file)
    repo = RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")})
    try:
        result = repo.map(mode="hybrid", server_wait=1.0, tokens=256)
        report = result.servers["python"]
        assert report.state is ServerState.STARTING, report
        assert "initialize" in report.detail and "ready-timeout 30s" in report.detail, report
    finally:
        start = time.monotonic()
        repo.close()
        elapsed = time.monotonic() - start
    assert not wait_gone(read_pids(pid_file), 1.0)
    assert elapsed <= CLOSE_BOUND, f"close took {elapsed:.2f}s"


def test_one_shot_cli_with_a_server_that_never_initializes_is_bounded(tmp_path: Path) -> None:
    import os
    import time

    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    fault_config(tmp_path / "xdg" / "hybridmap" / "lsp_configs", "never-initialize", pid_file)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--server-wait", "2", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["servers"]["python"]
    assert report["state"] == "starting" and "initialize" in report["detail"], report
    assert not wait_gone(read_pids(pid_file), 1.0)
    # 2 s of server wait, the interpreter's start and the static map (about 1 s here), and close.
    assert elapsed <= 2.0 + 2.0 + CLOSE_BOUND, f"took {elapsed:.1f}s"


def test_setsid_daemon_of_a_server_does_not_survive_close(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    registry = fault_registry(tmp_path, "setsid-daemon", pid_file)
    try:
        with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
            result = repo.map(mode="hybrid", server_wait=3.0, tokens=256)
            assert result.servers["python"].state is ServerState.READY
        pids = read_pids(pid_file)
        assert len(pids) == 2, pids  # the server and its daemon
        assert not wait_gone(pids, 2.0), "the setsid daemon survived close()"
    finally:
        kill_leftovers(read_pids(pid_file))


EXIT_WITHOUT_CLOSE = """
import sys
from pathlib import Path
from hybridmap import RepoMap
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, Path(sys.argv[2])], [BUILTIN_QUERY_DIR])
repo = RepoMap(sys.argv[1], registry=registry, overrides={"cache_dir": sys.argv[3]})
print(repo.map(mode="hybrid", server_wait=3, tokens=256).servers["python"].state)
# no close(): the interpreter just exits
"""


def test_setsid_daemon_does_not_survive_an_exit_without_close(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    user = fault_config(tmp_path / "user_configs", "setsid-daemon", pid_file)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", EXIT_WITHOUT_CLOSE, str(root), str(user), str(tmp_path / "cache")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.stdout.strip() == "ready", proc.stderr
        pids = read_pids(pid_file)
        assert len(pids) == 2, pids
        assert not wait_gone(pids, 2.0), "a server's daemon survived our exit"
    finally:
        kill_leftovers(read_pids(pid_file))


def test_close_from_another_thread_ends_a_waiting_map_with_a_documented_outcome(tmp_path: Path) -> None:
    import threading
    import time

    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    registry = fault_registry(tmp_path, "never-initialize", pid_file)
    repo = RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")})
    outcome: list[Any] = []

    def make_map() -> None:
        try:
            outcome.append(repo.map(mode="hybrid", server_wait=20.0, tokens=256))
        except BaseException as exc:  # noqa: BLE001 - what the caller would see, whatever it is
            outcome.append(exc)

    waiter = threading.Thread(target=make_map)
    waiter.start()
    time.sleep(1.0)  # the map is waiting for the server
    start = time.monotonic()
    repo.close()
    close_elapsed = time.monotonic() - start
    waiter.join(5.0)
    map_elapsed = time.monotonic() - start
    assert not waiter.is_alive(), "the map never returned after close()"
    assert len(outcome) == 1 and isinstance(outcome[0], (MapResult, RequestError)), repr(outcome[0])
    assert close_elapsed <= CLOSE_BOUND and map_elapsed <= CLOSE_BOUND + 0.5, (close_elapsed, map_elapsed)
    assert not wait_gone(read_pids(pid_file), 1.0)


def test_ctrl_c_exits_130_with_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """SIGINT while a one-shot map waits for a server: exit 130, one line on stderr, no traceback,
    no ``Aborted!``, and the server (which never initialized) is gone."""
    import os
    import signal
    import time

    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    fault_config(tmp_path / "xdg" / "hybridmap" / "lsp_configs", "never-initialize", pid_file)
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--server-wait", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 20
        while not read_pids(pid_file) and time.monotonic() < deadline:
            time.sleep(0.05)  # the map is waiting once the server is up
        time.sleep(0.3)
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)
    assert err == "hybridmap: interrupted\n", err
    assert elapsed <= CLOSE_BOUND, f"exit took {elapsed:.2f}s after SIGINT"
    assert not wait_gone(read_pids(pid_file), 1.0)


# --- finding 3: content from outside the root through servers ------------------------------

from ..helpers import registry_with_only, require  # noqa: E402

SECRET = "sk-LEAK-4f1d9c"
OUTSIDE_SOURCE = f'TOKEN = "{SECRET}"\nPIN = 918273645\n\ndef secret_fn(a: int) -> str:\n    return TOKEN\n'
MAIN_SOURCE = """from {module} import TOKEN, PIN, secret_fn

KEY = TOKEN
NUMBER = PIN
ALIAS = secret_fn


def use():
    return TOKEN


def local_fn(x: int) -> int:
    return x + 1
"""
OUTSIDE_CONFIGS = {
    "ty": ("pyproject.toml", '[project]\nname = "x"\n[tool.ty.environment]\nextra-paths = ["{outside}"]\n'),
    "basedpyright": ("pyrightconfig.json", '{{"extraPaths": ["{outside}"]}}'),
}


@pytest.mark.parametrize("vector", ["symlink", "config"])
@pytest.mark.parametrize("server", ["ty", "basedpyright"])
def test_nothing_from_outside_the_root_reaches_the_map(server: str, vector: str, tmp_path: Path) -> None:
    require(server if server == "ty" else "basedpyright-langserver")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(OUTSIDE_SOURCE)
    root = tmp_path / "repo"
    root.mkdir()
    if vector == "symlink":  # the walk refuses it; the server follows it
        (root / "leak.py").symlink_to(outside / "secret.py")
        files = {"main.py": MAIN_SOURCE.format(module="leak"), "pyproject.toml": '[project]\nname = "x"\n'}
    else:  # the repository's own server config points outside
        name, text = OUTSIDE_CONFIGS[server]
        files = {"main.py": MAIN_SOURCE.format(module="secret"), name: text.format(outside=outside)}
    commit_repo(root, files)
    registry = registry_with_only(tmp_path, "python", server)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=20, tokens=2048, mentioned_idents=("KEY", "ALIAS"))
    assert result.servers["python"].state is ServerState.READY, result.servers
    text = json.dumps(result.to_json())
    assert SECRET not in text and "918273645" not in text and "a: int) -> str" not in text, text
    details = {s.name: s.detail for f in result.files for s in f.symbols}
    assert "KEY" in details and "ALIAS" in details, details
    assert "x: int" in details.get("local_fn", ""), details  # the file's own hovers still come through


# --- finding 5 and repository code run by servers: marker files -----------------------------


def _marker_js(marker: Path) -> str:
    return f"require('fs').writeFileSync({json.dumps(str(marker))}, 'ran');\n"


def test_typescript_language_server_runs_our_tsserver_and_no_repository_plugin(tmp_path: Path) -> None:
    """A repository's node_modules/typescript (tsserver.js) and a tsconfig plugin in its
    node_modules: neither may run. typescript-language-server prefers the workspace's
    typescript unless told otherwise (initializationOptions tsserver.path)."""
    require("typescript-language-server")
    root = fixture_repo(tmp_path, "typescript")
    markers = {"tsserver": tmp_path / "tsserver-ran", "plugin": tmp_path / "plugin-ran"}
    ts = root / "node_modules" / "typescript"
    (ts / "lib").mkdir(parents=True)
    (ts / "package.json").write_text('{"name": "typescript", "version": "5.9.3", "main": "lib/typescript.js"}')
    (ts / "lib" / "tsserver.js").write_text(_marker_js(markers["tsserver"]))
    (ts / "lib" / "typescript.js").write_text(_marker_js(markers["tsserver"]))
    plugin = root / "node_modules" / "evil-plugin"
    plugin.mkdir(parents=True)
    (plugin / "package.json").write_text('{"name": "evil-plugin", "main": "index.js"}')
    (plugin / "index.js").write_text(
        _marker_js(markers["plugin"]) + "module.exports = () => ({create: i => i.languageService});\n"
    )
    config = json.loads((root / "tsconfig.json").read_text())
    config.setdefault("compilerOptions", {})["plugins"] = [{"name": "evil-plugin"}]
    (root / "tsconfig.json").write_text(json.dumps(config))
    registry = registry_with_only(tmp_path, "typescript", "typescript-language-server")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=30, tokens=1024)
    assert not markers["tsserver"].exists(), "the repository's tsserver.js ran"
    assert not markers["plugin"].exists(), "a repository tsserver plugin ran"
    assert result.servers["typescript"].state is ServerState.READY, result.servers
    assert result.edges.get("lsp", 0) > 0, result.edges


# --- finding 9 (server part): file names that are not UTF-8 ----------------------------------


def test_non_utf8_file_name_is_not_sent_and_the_server_survives(tmp_path: Path) -> None:
    """A tracked file named with byte 0xff: ty, sent its (percent-encoded) URI, panicked and was
    lost for the whole repository. Now it is not sent, the detail says so, other files resolve."""
    import os

    require("ty")
    root = tmp_path / "python"
    import shutil

    from ..helpers import LSP_FIXTURES as FIXTURES

    shutil.copytree(FIXTURES / "python", root)
    (root / os.fsdecode(b"bad\xffname.py")).write_text(
        "from store.disk import load\n\ndef bad_user():\n    return load()\n"
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture with a non-UTF-8 name")
    registry = registry_with_only(tmp_path, "python", "ty")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        first = repo.map(mode="hybrid", server_wait=10, tokens=1024)
        second = repo.map(mode="hybrid", server_wait=10, tokens=1024, mentioned_idents=("bad_user",))
    for result in (first, second):
        report = result.servers["python"]
        assert report.state is ServerState.READY, report
        assert result.edges.get("lsp", 0) > 0, result.edges
    assert "not UTF-8 not sent" in second.servers["python"].detail, second.servers


# --- repository code run by servers: a fake interpreter / compiler writing a marker ---------


def _evil_program(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 1\n")
    path.chmod(0o755)


def _python_attack(root: Path, marker: Path) -> None:
    for venv in (".venv", "venv", "evil"):  # what pyright, jedi and ty look for, and a configured one
        _evil_program(root / venv / "bin" / "python", marker)
        _evil_program(root / venv / "bin" / "python3", marker)
        (root / venv / "pyvenv.cfg").write_text(f"home = {root / venv / 'bin'}\nversion = 3.11.7\n")
    (root / "pyrightconfig.json").write_text('{"venvPath": ".", "venv": "evil", "pythonPath": "evil/bin/python"}')
    (root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.ty.environment]\npython = "evil"\n[tool.pyright]\nvenvPath = "."\nvenv = "evil"\n'
    )


def _c_attack(root: Path, marker: Path) -> None:
    _evil_program(root / "evil-cc", marker)
    files = sorted(p.name for p in root.glob("*.c"))
    (root / "compile_commands.json").write_text(
        json.dumps([{"directory": str(root), "file": f, "command": f"{root}/evil-cc -c {f}"} for f in files])
    )
    (root / ".clangd").write_text(f"CompileFlags:\n  Compiler: {root}/evil-cc\n")


def _go_attack(root: Path, marker: Path) -> None:
    for where in (root, root / "bin"):  # found through a relative PATH entry, were one kept
        _evil_program(where / "go", marker)
        _evil_program(where / "git", marker)


def _go_git_attack(root: Path, marker: Path) -> None:
    """After ``git init``: the go command gopls runs may run git in the repository."""
    git(root, "config", "core.fsmonitor", f"echo ran >> {marker}")
    git(root, "config", "core.hooksPath", str(root / "bin"))


ATTACKS = {
    ("go", "gopls", "gopls"): _go_attack,
    ("python", "ty", "ty"): _python_attack,
    ("python", "basedpyright", "basedpyright-langserver"): _python_attack,
    ("python", "pylsp", "pylsp"): _python_attack,
    ("c", "clangd", "clangd"): _c_attack,
}


@pytest.mark.parametrize("language,server,command", sorted(ATTACKS), ids=lambda v: str(v))
def test_no_server_runs_a_repository_program(language: str, server: str, command: str, tmp_path: Path) -> None:
    require(command)
    marker = tmp_path / "marker"
    root = tmp_path / language
    import shutil

    from ..helpers import LSP_FIXTURES as FIXTURES

    shutil.copytree(FIXTURES / language, root)
    ATTACKS[(language, server, command)](root, marker)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    if language == "go":
        _go_git_attack(root, marker)
    registry = registry_with_only(tmp_path, language, server)
    # A careless PATH ('.' and 'bin' first): a server runs in the repository, where they would
    # find the programs it ships.
    environ = {**os.environ, "PATH": f".:bin:{os.environ['PATH']}"}
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}, environ=environ) as repo:
        result = repo.map(mode="hybrid", server_wait=20, tokens=1024)
    assert not marker.exists(), f"{server} ran a repository program: {marker.read_text()!r}"
    assert result.servers[language].state is ServerState.READY, result.servers


def _hardhat_project(root: Path) -> Path:
    """A Hardhat project that ships its own ``node_modules/hardhat``: loading it runs its code
    (it writes a marker next to the project)."""
    marker = root.parent / "PWNED"
    # Each writes the marker and, where the sandbox lets it (its own HOME), a second one.
    write = (
        f"for (const p of [{json.dumps(str(marker))}, require('path').join(process.env.HOME, 'PWNED')]) "
        "{ try { require('fs').writeFileSync(p, 'ran'); } catch (e) {} }\n"
    )
    files = {
        "hardhat.config.js": write + "module.exports = {{ solidity: '0.8.20' }};\n",
        "package.json": '{"name": "hh", "devDependencies": {"hardhat": "2.22.0"}}\n',
        "node_modules/hardhat/package.json": '{"name": "hardhat", "version": "2.22.0", '
        '"main": "internal/lib/hardhat-lib.js"}\n',
        "node_modules/hardhat/register.js": write,
        "node_modules/hardhat/internal/lib/hardhat-lib.js": "module.exports = {};\n",
        "contracts/A.sol": "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\nimport './B.sol';\n"
        "contract A { function run() public { B b = new B(); b.go(); } }\n",
        "contracts/B.sol": "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\n"
        "contract B { function go() public {} }\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A", "-f")
    git(root, "commit", "-q", "-m", "hardhat")
    return marker


@pytest.mark.parametrize("allowed", [False, True])
def test_a_server_that_would_run_the_repository_code_needs_the_user(tmp_path: Path, allowed: bool) -> None:
    """The Solidity server loads a Hardhat project's own node_modules/hardhat: by default it is
    never started (untrusted, said); a user who allows it gets it, and the repository's code runs
    (which is why it is off)."""
    from hybridmap import RepoMap, ServerState
    from hybridmap.sources.lsp.session import find_command

    if find_command("nomicfoundation-solidity-language-server") is None:
        pytest.skip("the Solidity server is not installed (scripts/install-servers installs it)")
    root = tmp_path / "repo"
    root.mkdir()
    marker = _hardhat_project(root)
    overrides = {"cache_dir": str(tmp_path / "cache"), "allow_servers_running_repository_code": allowed}
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="hybrid", server_wait=20, tokens=256)
    report = result.servers["solidity"]
    if not allowed:
        assert report.state is ServerState.UNTRUSTED and "allow_servers_running_repository_code" in report.detail
        assert not marker.exists()
    else:
        assert report.state is not ServerState.UNTRUSTED
        # The hazard the default keeps away: the repository's code runs. The sandbox keeps it
        # to the server's scratch directory: the marker beside the project is never written.
        contained = tmp_path / "cache" / "servers"
        deadline = time.monotonic() + 20
        while not list(contained.glob("*/home/PWNED")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(contained.glob("*/home/PWNED")), "the repository's code did not run"
        assert not marker.exists()


def test_svelte_config_is_never_run_by_default(tmp_path: Path) -> None:
    """svelte-language-server imports svelte.config.js (checked: it ran at the first map): the
    server is untrusted unless the user allows servers that run repository code."""
    from hybridmap import RepoMap, ServerState
    from hybridmap.sources.lsp.session import find_command

    if find_command("svelteserver") is None:
        pytest.skip("svelte-language-server is not installed (scripts/install-servers installs it)")
    root = tmp_path / "repo"
    marker = tmp_path / "PWNED"
    files = {
        "svelte.config.js": f"import fs from 'fs'; fs.writeFileSync({json.dumps(str(marker))}, 'ran');\n"
        "export default {};\n",
        "package.json": '{"name": "sv", "type": "module"}\n',
        "src/App.svelte": '<script lang="ts">\n  import { load } from "./lib";\n  export let x = load();\n</script>\n',
        "src/lib.ts": "export function load() { return 1; }\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "svelte")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=15, tokens=256)
    assert result.servers["svelte"].state is ServerState.UNTRUSTED
    time.sleep(1)
    assert not marker.exists()
