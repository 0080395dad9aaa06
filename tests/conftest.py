"""Shared fixtures: real git repositories and files on disk, a real registry."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import sysconfig
import tempfile
import termios
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from hybridmap.languages.registry import LanguageRegistry
from hybridmap.settings import Settings

# A suite a shell starts in the background without job control (``( pytest & )``) has SIGINT
# ignored, and every process a test starts would inherit that: the Ctrl-C tests would see their
# map ignore the signal and exit 0. A handler is not inherited across exec; SIG_IGN is.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# One-shot calls run in-process in the suite: a daemon (docs/daemon.md) would outlive the test
# that started it. tests/frontends/test_daemon.py asks for one explicitly.
os.environ["HYBRIDMAP_DAEMON"] = "off"

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def run_on_pty(
    args: list[str],
    *,
    stream: str,
    columns: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
) -> tuple[int, str, str]:
    """Run ``python -m hybridmap ARGS`` with ``stream`` ("stdout" or "stderr") on a real
    pseudo-terminal, the other one piped. Returns (exit code, terminal text, piped text)."""
    leader, follower = pty.openpty()
    if columns is not None:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    on_tty = {"stdout": follower} if stream == "stdout" else {"stderr": follower}
    piped = "stderr" if stream == "stdout" else "stdout"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hybridmap", *args], env=env, **{piped: subprocess.PIPE}, **on_tty
        )  # type: ignore[call-overload]
        os.close(follower)
        # The piped stream is drained alongside, so a long output cannot fill the pipe and stall
        # the child while we wait for the terminal to close.
        piped_out: list[bytes] = []
        drain = threading.Thread(target=lambda: piped_out.append(getattr(proc, piped).read()), daemon=True)
        drain.start()
        chunks = []
        while True:  # read until the child closes the terminal (EIO on Linux)
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=timeout)
        drain.join(timeout)
    finally:
        os.close(leader)
    return code, b"".join(chunks).decode().replace("\r\n", "\n"), b"".join(piped_out).decode()


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "HOME": str(root),
            "PATH": "/usr/bin:/bin:/usr/local/bin",
        },
    )
    return proc.stdout


GitRepoFactory = Callable[[Mapping[str, str | bytes]], Path]


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepoFactory:
    """Make a real git repository with the given files committed."""
    counter = iter(range(1000))

    def make(files: Mapping[str, str | bytes], commit: bool = True) -> Path:
        root = tmp_path / f"repo{next(counter)}"
        root.mkdir()
        write_files(root, files)
        git(root, "init", "-q", "-b", "main")
        if commit:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "initial")
        return root

    return make


def committed_copy(source: Path, destination: Path) -> Path:
    """A copy of the directory ``source`` at ``destination``, made a git repository with one commit."""
    shutil.copytree(source, destination)
    git(destination, "init", "-q", "-b", "main")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", "fixture")
    return destination


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture(scope="session")
def registry() -> LanguageRegistry:
    return LanguageRegistry.load()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cache_dir=str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def stdlib_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real git repository holding a few real stdlib packages (json, email, http, logging)."""
    root = tmp_path_factory.mktemp("stdlib_repo")
    for package in ("json", "email", "http", "logging", "urllib"):
        shutil.copytree(STDLIB / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (root / "README.md").write_text("# sample\nA few stdlib packages.\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "stdlib sample")
    return root


@pytest.fixture(autouse=True)
def no_orphan_processes():
    """Every test must leave no child process behind (servers, parse workers)."""
    import time

    import psutil

    yield
    me = psutil.Process()
    deadline = time.monotonic() + 5
    alive: list[psutil.Process] = []
    while time.monotonic() < deadline:
        alive = [p for p in me.children(recursive=True) if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return
        time.sleep(0.1)
    names = [(p.pid, p.name()) for p in alive]
    for p in alive:
        p.kill()
    raise AssertionError(f"processes left behind: {names}")


@pytest.fixture
def public_tmp() -> Iterator[Path]:
    """A directory an unprivileged user can enter (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="hybridmap-bad-input-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if not sub.is_symlink():
            sub.chmod(0o755 if sub.is_dir() else 0o644)
    shutil.rmtree(path)
