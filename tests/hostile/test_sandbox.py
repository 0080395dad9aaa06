"""The OS sandbox (``hybridmap/infra/sandbox/``): whatever a server's flags say, it cannot run a
program the repository ships, write into the repository or the user's home, or connect.

The generic case needs no real language server: a user-configured server (our fault server, a
real process speaking JSON-RPC) tries all four at ``initialize`` and says what happened in its
``serverInfo.version``, which the map reports. The real servers' own attacks (a Rust toolchain
named by the repository, cargo wrappers, a ``.venv`` interpreter, jdtls writing project files)
are checked here with the sandbox on and off: off, the fix at their source must hold alone.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.infra.sandbox import Policy, confined, support
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry

from ..helpers import FAULT_SERVER, fixture_repo, registry_with_only, require, write_user_config

pytestmark = pytest.mark.skipif(not support().abi, reason=f"no Landlock here: {support().reason}")

EVIL = "#!/bin/sh\necho evil ran\nexit 42\n"


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def home_probe() -> Iterator[Path]:
    """A file name in the user's real home that nothing should create."""
    path = Path.home() / f".hybridmap-sandbox-probe-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


def escape_map(tmp_path: Path, listener: Listener, home_probe: Path, **overrides: object) -> tuple[object, Path]:
    root = fixture_repo(tmp_path, "python")
    tool = root / "tools" / "evil.sh"
    tool.parent.mkdir()
    tool.write_text(EVIL)
    tool.chmod(0o755)
    args = [str(FAULT_SERVER), "escape", "--probe-home", str(home_probe), "--probe-port", str(listener.port)]
    user = write_user_config(tmp_path / "user_configs", sys.executable, args)
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache"), **overrides}) as repo:
        result = repo.map(mode="hybrid", server_wait=20, tokens=512)
    return result, root


def test_a_server_can_run_write_or_connect_nothing(tmp_path: Path, listener: Listener, home_probe: Path) -> None:
    result, root = escape_map(tmp_path, listener, home_probe)
    report = result.servers["python"]  # type: ignore[attr-defined]
    assert report.state is ServerState.READY, report
    # The server says what each attempt met: all four refused by the kernel.
    assert "exec=EACCES" in report.detail, report.detail
    assert "write_repo=EACCES" in report.detail, report.detail
    assert "write_home=EACCES" in report.detail, report.detail
    assert "connect=EACCES" in report.detail, report.detail
    assert not (root / "written-by-server").exists()
    assert not home_probe.exists()
    assert listener.accepted == 0
    # ... and it still answers: the fault server resolves app.py's calls to store/disk.py.
    assert result.edges.get("lsp", 0) >= 1, result.edges  # type: ignore[attr-defined]


def test_the_escape_test_sees_an_unconfined_server(tmp_path: Path, listener: Listener, home_probe: Path) -> None:
    """The same server with the sandbox turned off and the user allowing it: every attempt
    goes through, so the test above can fail."""
    result, root = escape_map(tmp_path, listener, home_probe, sandbox=False, allow_unsandboxed_servers=True)
    detail = result.servers["python"].detail  # type: ignore[attr-defined]
    assert "exec=ok" in detail and "write_repo=ok" in detail and "write_home=ok" in detail, detail
    assert "connect=ok" in detail, detail
    assert (root / "written-by-server").exists() and home_probe.exists() and listener.accepted == 1


def test_without_a_sandbox_a_server_needs_the_user(tmp_path: Path, listener: Listener, home_probe: Path) -> None:
    """No sandbox (here: turned off) and no opt-in: the server is not started, the map says why
    and still comes back from the static source."""
    result, root = escape_map(tmp_path, listener, home_probe, sandbox=False)
    report = result.servers["python"]  # type: ignore[attr-defined]
    assert report.state is ServerState.UNTRUSTED, report
    assert "no OS sandbox" in report.detail and "allow_unsandboxed_servers" in report.detail
    assert "def load" in result.text  # type: ignore[attr-defined]
    assert not (root / "written-by-server").exists() and listener.accepted == 0


def test_a_repository_cannot_turn_the_sandbox_off(tmp_path: Path, listener: Listener, home_probe: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    (root / "hybridmap.toml").write_text("sandbox = false\nallow_unsandboxed_servers = true\n")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="static", tokens=256)
    kinds = {d.kind for d in result.diagnostics}
    assert "repository_config" in kinds, result.diagnostics
    assert repo.settings.sandbox and not repo.settings.allow_unsandboxed_servers


def test_a_system_directory_holding_the_repository_stays_unrunnable(tmp_path: Path) -> None:
    """A repository inside a directory the policy lets programs run from (a checkout under
    /usr/src, site-packages) is carved out of it: its programs still cannot run."""
    outer = tmp_path / "system"
    repo = outer / "src" / "repo"
    repo.mkdir(parents=True)
    (outer / "tool.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "evil.sh").write_text(EVIL)
    for script in (outer / "tool.sh", repo / "evil.sh"):
        script.chmod(0o755)
    policy = Policy(execute=("/usr", "/bin", "/lib", "/lib64", str(outer)), read=("/etc",), protected=(str(repo),))
    import subprocess

    with confined(policy) as start, pytest.raises(PermissionError):
        subprocess.run([str(repo / "evil.sh")], capture_output=True, preexec_fn=start.preexec, check=False)
    with confined(policy) as start:
        sibling = subprocess.run([str(outer / "tool.sh")], capture_output=True, preexec_fn=start.preexec, check=False)
    assert sibling.returncode == 0, sibling.stderr  # the rest of the directory still runs


# --- the real servers' own attacks, with the sandbox on and off --------------------------

MODES = {"sandboxed": {}, "unsandboxed": {"sandbox": False, "allow_unsandboxed_servers": True}}


def _script(path: Path, marker: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n{text}')
    path.chmod(0o755)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_rust_analyzer_runs_no_toolchain_or_wrapper_the_repository_names(tmp_path: Path, mode: str) -> None:
    """``rust-toolchain.toml`` naming a toolchain in the repository (through /proc/self/cwd) and
    ``.cargo/config.toml`` naming wrappers and a rustc: none runs, and rust-analyzer, started as
    the toolchain's own binary, still loads the crate."""
    require("rust-analyzer")
    root = fixture_repo(tmp_path, "rust")
    marker = tmp_path / "ran"
    toolchain = root / "evil-tc" / "bin"
    for tool in ("rust-analyzer", "cargo", "rustc", "rustc-wrapper", "rustdoc"):
        _script(toolchain / tool, marker, "exit 1\n")
    (root / "rust-toolchain.toml").write_text('[toolchain]\npath = "/proc/self/cwd/evil-tc"\n')
    (root / ".cargo").mkdir()
    (root / ".cargo" / "config.toml").write_text(
        "[build]\n"
        'rustc-wrapper = "evil-tc/bin/rustc-wrapper"\n'
        'rustc-workspace-wrapper = "evil-tc/bin/rustc-wrapper"\n'
        'rustc = "evil-tc/bin/rustc"\n'
        'rustdoc = "evil-tc/bin/rustdoc"\n'
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache"), **MODES[mode]}) as repo:
        result = repo.map(mode="hybrid", server_wait=90, tokens=512)
    assert not marker.exists(), f"a repository program ran: {marker.read_text()!r}"
    assert result.servers["rust"].state is ServerState.READY, result.servers["rust"]
    assert result.edges.get("lsp", 0) >= 1, result.edges


#: Each Python server, by its command: with no venv configured, each finds ``./.venv`` itself.
PYTHON_SERVERS = {
    "ty": "ty",
    "basedpyright": "basedpyright-langserver",
    "pylsp": "pylsp",
    "pyrefly": "pyrefly",
    "jedi-language-server": "jedi-language-server",
}


@pytest.mark.parametrize("activated", [False, True], ids=["found", "activated"])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("server", sorted(PYTHON_SERVERS))
def test_python_servers_never_run_the_repository_venv(tmp_path: Path, server: str, mode: str, activated: bool) -> None:
    """A ``.venv`` the repository ships, configured nowhere (servers find ``./.venv`` by
    themselves and run its interpreter to learn the search paths), or activated in the shell
    that runs hybridmap (``VIRTUAL_ENV``, which jedi and pylsp follow): it never runs, sandbox
    or not. Unsandboxed, only the server's own settings (our interpreter, said explicitly) and
    the environment we give it stop it."""
    require(PYTHON_SERVERS[server])
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "ran"
    for name in ("python", "python3"):
        _script(root / ".venv" / "bin" / name, marker, "exit 1\n")
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    registry = registry_with_only(tmp_path, "python", server)
    overrides = {"cache_dir": str(tmp_path / "cache"), **MODES[mode]}
    environ = {**os.environ, "VIRTUAL_ENV": str(root / ".venv")} if activated else None
    with RepoMap(root, registry=registry, overrides=overrides, environ=environ) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        # Lookups and hovers too: jedi resolves its environment lazily, at the first question.
        repo.map(mode="hybrid", server_wait=30, tokens=512, chat_files=["app.py"])
    assert not marker.exists(), f"the repository's interpreter ran: {marker.read_text()!r}"
    assert result.servers["python"].state is ServerState.READY, result.servers["python"]
    assert result.servers["python"].server == server


def test_jdtls_leaves_the_repository_as_it_was(tmp_path: Path) -> None:
    """An Eclipse project's own ``.project`` (tracked): jdtls imports it and writes its metadata
    in its scratch directory, never into the repository (the work tree stays clean)."""
    require("jdtls")
    import subprocess

    root = fixture_repo(tmp_path, "java")
    (root / ".project").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<projectDescription>\n\t<name>fixture</name>\n'
        "\t<comment></comment>\n\t<projects>\n\t</projects>\n\t<buildSpec>\n\t</buildSpec>\n"
        "\t<natures>\n\t\t<nature>org.eclipse.jdt.core.javanature</nature>\n\t</natures>\n"
        "</projectDescription>\n"
    )
    # A Java nature and a classpath make jdtls import it as an Eclipse project: on e3cb94e (no
    # sandbox) it then rewrote the tracked .project (`git status` showed " M .project").
    (root / ".classpath").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<classpath>\n'
        '\t<classpathentry kind="src" path="src"/>\n'
        '\t<classpathentry kind="con" path="org.eclipse.jdt.launching.JRE_CONTAINER"/>\n'
        '\t<classpathentry kind="output" path="bin"/>\n</classpath>\n'
    )
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "p"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=120, tokens=512)
    assert result.servers["java"].state is ServerState.READY, result.servers["java"]
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=root, capture_output=True, text=True)
    assert status.stdout == "", f"jdtls wrote into the repository: {status.stdout}"


def test_the_users_environment_never_leads_a_server_into_the_repository(tmp_path: Path) -> None:
    """A shell that has the repository's programs on PATH (direnv's ``.venv/bin``) or its
    virtualenv activated: a server is not found there, and the variable is not passed on."""
    from hybridmap.sources.lsp.launch import find_command, outside_repository

    root = tmp_path / "repo"
    marker = tmp_path / "ran"
    _script(root / ".venv" / "bin" / "evil-langserver", marker)
    user = {
        "PATH": f"{root / '.venv' / 'bin'}{os.pathsep}/usr/bin",
        "VIRTUAL_ENV": str(root / ".venv"),
        "GOPATH": str(tmp_path / "go"),
    }
    assert find_command("evil-langserver", extra_dirs=(), environ=user) is not None  # the control
    env = outside_repository(user, root)
    assert find_command("evil-langserver", extra_dirs=(), environ=env) is None
    assert env["PATH"] == "/usr/bin" and "VIRTUAL_ENV" not in env
    assert env["GOPATH"] == str(tmp_path / "go")  # outside the repository: kept
