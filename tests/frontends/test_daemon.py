"""The warm daemon (docs/daemon.md): real CLI processes, a real daemon process, real sockets.

Each test has its own runtime directory (``XDG_RUNTIME_DIR``), so its daemons are its own, and
stops them at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybridmap.frontends.daemon.client import ask
from hybridmap.frontends.daemon.place import Place, place_for, send

from ..helpers import repository, run_cli_with_env

SOURCE = {
    "app/main.py": "from app.store import load_settings\n\n\ndef handle_request():\n    return load_settings()\n",
    "app/store.py": "def load_settings():\n    return {}\n",
    "app/__init__.py": "",
}


class Env(dict[str, str]):
    """The environment of one test's calls: its own runtime, cache and config directories."""

    def status(self, root: Path) -> dict[str, object] | None:
        place = self.place(root)
        reply = ask(place, {"op": "status"}, 10) if place is not None else None
        return reply if reply is not None and "pid" in reply else None

    def place(self, root: Path) -> Place | None:
        return place_for(root, self)

    def wait_for_daemon(self, root: Path, timeout: float = 60) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.status(root)
            if status is not None:
                return status
            time.sleep(0.1)
        raise AssertionError("no daemon answered")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    (tmp_path / "run").mkdir()
    made = Env(
        {
            **os.environ,
            "HYBRIDMAP_DAEMON": "auto",
            "XDG_RUNTIME_DIR": str(tmp_path / "run"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
        }
    )
    yield made
    for sock in (tmp_path / "run" / "hybridmap").glob("*.sock"):
        place = Place(sock.parent, sock.name.removesuffix(".sock"))
        status = ask(place, {"op": "status"}, 5)
        ask(place, {"op": "stop"}, 5)
        if status is not None and isinstance(status.get("pid"), int):
            _wait_gone(status["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pid: int, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    os.kill(pid, 9)
    return False


def cli(env: Env, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli_with_env(*args, env=dict(env), cwd=cwd)


def test_a_repeated_call_is_answered_by_the_daemon_with_the_same_output(tmp_path: Path, env: Env) -> None:
    """Static maps: the same bytes either way (a hybrid map may be better from the daemon, whose
    servers started on an earlier call)."""
    root = repository(tmp_path, files=SOURCE)
    first = cli(env, "map", str(root), "--mode", "static", "--chat", "app/main.py")
    assert first.returncode == 0, first.stderr
    assert "def load_settings" in first.stdout
    assert env.status(root) is None  # a single call starts no daemon (a CI job's one call)
    second = cli(env, "map", str(root), "--mode", "static", "--chat", "app/main.py")  # asked again: one is started
    assert second.stdout == first.stdout
    status = env.wait_for_daemon(root)
    assert status["served"] == 0 and status["root"] == str(root.resolve())

    # From the root itself, with relative paths: the daemon runs in the caller's directory.
    third = cli(env, "map", ".", "--mode", "static", "--chat", "app/main.py", cwd=root)
    assert third.returncode == 0, third.stderr
    assert third.stdout == first.stdout
    assert env.status(root)["served"] == 1  # type: ignore[index]
    # JSON too, and the tool commands: the same answers as in-process (counters and times aside).
    args = ("map", str(root), "--mode", "static", "--chat", "app/main.py", "--format", "json")
    warm = json.loads(cli(env, *args).stdout)
    here = json.loads(cli(Env({**env, "HYBRIDMAP_DAEMON": "off"}), *args).stdout)
    assert warm["text"] == here["text"] and warm["files"] == here["files"]
    assert warm["changes"] == here["changes"] == {"first": True, "new": [], "gone": [], "changed": []}
    found = cli(env, "search", str(root), "load settings")
    assert found.returncode == 0 and "app/store.py" in found.stdout
    assert env.status(root)["served"] == 3  # type: ignore[index]
    # An error is the daemon's to say, with the exit code of the contract.
    bad = cli(env, "map", str(root), "--chat", "../outside.py")
    assert bad.returncode == 2 and "outside" in bad.stderr and bad.stdout == ""
    assert env.status(root)["served"] == 4  # type: ignore[index]


def test_an_edit_made_just_before_a_call_is_in_its_answer(tmp_path: Path, env: Env) -> None:
    root = repository(tmp_path, files=SOURCE)
    on = Env({**env, "HYBRIDMAP_DAEMON": "on"})
    cli(on, "map", str(root))
    on.wait_for_daemon(root)
    for i in range(3):
        (root / "app" / "store.py").write_text(
            f"def load_settings():\n    return {{}}\n\n\ndef saved_{i}():\n    return {i}\n"
        )
        (root / "app" / f"fresh_{i}.py").write_text(f"def brand_new_{i}():\n    return load_settings()\n")
        answered = cli(on, "map", str(root), "--chat", "app/main.py", "--tokens", "2000")
        assert f"def saved_{i}" in answered.stdout and f"app/fresh_{i}.py" in answered.stdout, answered.stdout
        assert f"saved_{i - 1}" not in answered.stdout
    # The daemon watches its map after a call: an edit just before the next call reaches it through
    # the watch's sync, and the call itself lists nothing (an in-process call lists every time).
    (root / "app" / "store.py").write_text("def load_settings():\n    return {}\n\n\ndef synced():\n    pass\n")
    answered = cli(on, "map", str(root), "--chat", "app/main.py", "--tokens", "2000", "--format", "json")
    result = json.loads(answered.stdout)
    assert "def synced" in result["text"] and result["stats"]["map_refreshed"] == 0, result["stats"]
    assert on.status(root)["served"] == 4  # type: ignore[index]


def test_no_daemon_without_a_private_runtime_directory(tmp_path: Path, env: Env) -> None:
    """A runtime directory someone else could enter (here: mode 0777) is not used: calls run
    in-process, correctly, and no daemon is started or asked."""
    root = repository(tmp_path, files=SOURCE)
    shared = tmp_path / "run" / "hybridmap"
    shared.mkdir()
    shared.chmod(0o777)
    on = Env({**env, "HYBRIDMAP_DAEMON": "on"})
    for _ in range(2):
        proc = cli(on, "map", str(root), "--chat", "app/main.py")
        assert proc.returncode == 0 and "def load_settings" in proc.stdout, proc.stderr
    time.sleep(1)
    assert list(shared.iterdir()) == []
    assert on.place(root) is None


def test_a_repository_cannot_turn_the_daemon_on(tmp_path: Path, env: Env) -> None:
    files = {**SOURCE, "hybridmap.toml": 'daemon = "on"\ndaemon_idle_seconds = 100000\n'}
    root = repository(tmp_path, files=files)
    proc = cli(env, "map", str(root), "--format", "json")  # auto (the default): one call
    assert proc.returncode == 0, proc.stderr
    said = [d["message"] for d in json.loads(proc.stdout)["diagnostics"] if d["kind"] == "repository_config"]
    assert any("daemon" in m for m in said) and any("daemon_idle_seconds" in m for m in said), said
    time.sleep(1)
    assert env.status(root) is None


def test_another_users_process_gets_no_answer(tmp_path: Path, env: Env) -> None:
    """Even with the socket and its directory opened to everyone, the daemon answers only its
    own user (SO_PEERCRED): another user's process connects and gets nothing."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.getuid() != 0 or python is None:
        pytest.skip("needs root to act as another user, and a Python that user can run")
    root = repository(tmp_path, files=SOURCE)
    runtime = Path(tempfile.mkdtemp(prefix="hybridmap-test-run-"))  # outside pytest's 0700 tree
    on = Env({**env, "HYBRIDMAP_DAEMON": "on", "XDG_RUNTIME_DIR": str(runtime)})
    try:
        cli(on, "map", str(root))
        pid = on.wait_for_daemon(root)["pid"]
        place = on.place(root)
        assert place is not None and (place.socket.stat().st_mode & 0o777) == 0o600
        probe = (
            "import socket, struct\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({str(place.socket)!r})\n"
            "s.settimeout(10)\n"
            "try:\n"
            "    s.sendall(struct.pack('>I', 2) + b'{}')\n"
            "    print(repr(s.recv(100)))\n"
            "except (ConnectionResetError, BrokenPipeError):\n"
            "    print('closed')\n"
        )
        nobody = 65534
        refused = subprocess.run(
            [python, "-c", probe], user=nobody, capture_output=True, text=True, timeout=30, cwd="/"
        )
        assert refused.returncode != 0 and "PermissionError" in refused.stderr  # 0700 directory, 0600 socket
        runtime.chmod(0o777)
        place.directory.chmod(0o777)
        place.socket.chmod(0o666)
        ignored = subprocess.run(
            [python, "-c", probe], user=nobody, capture_output=True, text=True, timeout=30, cwd="/"
        )
        assert ignored.returncode == 0 and ignored.stdout.strip() in ("b''", "closed"), ignored.stdout + ignored.stderr
        assert on.place(root) is None  # and our own calls no longer use a directory opened up
        place.directory.chmod(0o700)
        assert on.status(root)["served"] == 0  # type: ignore[index]
    finally:
        place = Place(runtime / "hybridmap", "")
        for sock in place.directory.glob("*.sock"):
            ask(Place(place.directory, sock.name.removesuffix(".sock")), {"op": "stop"}, 5)
        if "pid" in locals() and isinstance(pid, int):
            _wait_gone(pid)
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_daemon_exits_when_idle_when_stopped_and_for_another_build(tmp_path: Path, env: Env) -> None:
    (tmp_path / "config" / "hybridmap").mkdir(parents=True)
    (tmp_path / "config" / "hybridmap" / "config.toml").write_text("daemon_idle_seconds = 3\n")
    root = repository(tmp_path, files=SOURCE)
    on = Env({**env, "HYBRIDMAP_DAEMON": "on"})
    cli(on, "map", str(root))
    pid = on.wait_for_daemon(root)["pid"]
    assert isinstance(pid, int)
    assert _wait_gone(pid, timeout=20)  # idle for 3 s
    place = on.place(root)
    assert place is not None and not place.socket.exists()

    cli(on, "map", str(root))
    pid = on.wait_for_daemon(root)["pid"]
    stop = cli(on, "daemon", "stop", str(root))
    assert stop.returncode == 0 and "stopped" in stop.stderr
    assert isinstance(pid, int) and _wait_gone(pid)
    assert cli(on, "daemon", "status", str(root)).returncode == 1

    cli(on, "map", str(root))
    pid = on.wait_for_daemon(root)["pid"]
    with socket.socket(socket.AF_UNIX) as sock:  # a call from another build of hybridmap
        sock.connect(str(place.socket))
        send(sock, {"op": "run", "build": "0.0.1:/elsewhere", "argv": ["map"], "cwd": "/", "env": {}})
        sock.settimeout(10)
        assert b"another build" in sock.recv(4096)
    assert isinstance(pid, int) and _wait_gone(pid)
