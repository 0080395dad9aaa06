"""The daemon: one process per repository keeping its maps warm for one-shot calls.

It listens on a Unix socket in the user's private runtime directory (:mod:`.place`), answers
only processes of the same user (checked on every connection, beside the socket's own 0600
mode), runs each call with the real command line against a map it keeps open (its servers
started), and exits after ``daemon_idle_seconds`` without a call, on ``stop``,
on SIGTERM, or when its repository is gone.

Calls are run one at a time, in this thread: a call changes the process's working directory and
standard streams while it runs, and one repository's maps serialize on their lock anyway.
What a call sees is what a fresh process would: each call is a new conversation (no session
events, no ``[NEW]`` marks from an earlier call) and sees every edit made before it: after its
first call a map is watched, and each call first syncs with the watch (``watch_sync_ms``: a
marker outside the repository, seen after every earlier event), so it neither lists nor stats the
tree; a map the kernel will not watch, or a sync that runs out of time, lists and stats it, as an
in-process call does. An answer is never staler than an in-process one.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import click

from ...api.sync import RepoMap
from ...errors import HybridMapError
from ...infra.sanitize import safe_line
from ...settings import Settings, load_settings
from ...workspace.walk import resolve_root
from .client import PASSED_ENV
from .place import MAX_REQUEST_BYTES, SERVED_COMMANDS, WARM_MAPS, Place, WireError, place_for, receive, send

log = logging.getLogger("hybridmap.daemon")

#: How often an idle daemon wakes to check its clock and its repository.
_TICK_SECONDS = 2.0


class WarmMaps:
    """The daemon's open maps, one per set of command-line overrides, least recently used
    closed first beyond ``limit``. A map whose repository settings file changed is reopened."""

    def __init__(self, root: Path, limit: int) -> None:
        self._root = root
        self._limit = limit
        self._maps: OrderedDict[str, RepoMap] = OrderedDict()
        self._unwatchable: set[str] = set()

    def get(self, root: str, overrides: Mapping[str, Any]) -> RepoMap:
        if resolve_root(root) != self._root:
            raise HybridMapError(f"this daemon serves {self._root}, not {root}")
        key = json.dumps([sorted(overrides.items()), _settings_files(self._root)], default=str)
        repo = self._maps.pop(key, None)
        if repo is None:
            repo = RepoMap(self._root, overrides=dict(overrides), start_servers=True)
        self._maps[key] = repo
        while len(self._maps) > self._limit:
            _, oldest = self._maps.popitem(last=False)
            oldest.close()
        repo.forget_session()  # each call is a conversation of its own, as in a fresh process
        return repo

    def watch_open(self) -> None:
        """Watch every open map that is not watched yet, after a call (its first map told the
        watch which directories there are). A call on a watched map syncs with the watch instead
        of listing and stat-ing the tree; one whose settings do not sync (``watch_sync_ms`` 0,
        a ``refresh`` other than ``auto``) is left unwatched, as is one the kernel refused once."""
        for key, repo in self._maps.items():
            settings = repo.settings
            if repo.watching or key in self._unwatchable or settings.watch_sync_ms == 0 or settings.refresh != "auto":
                continue
            try:
                repo.watch()
            except HybridMapError as exc:
                self._unwatchable.add(key)
                log.warning("%s; its calls list the files instead", safe_line(str(exc)))

    def __len__(self) -> int:
        return len(self._maps)

    def close(self) -> None:
        while self._maps:
            _, repo = self._maps.popitem()
            with contextlib.suppress(Exception):
                repo.close()


def _settings_files(root: Path) -> list[Any]:
    """The repository's own settings files, by size and time: an edit reopens the map."""
    out: list[Any] = []
    for name in ("hybridmap.toml", "pyproject.toml"):
        with contextlib.suppress(OSError):
            info = os.lstat(root / name)
            out.append([name, info.st_size, info.st_mtime_ns])
    return out


class Daemon:
    def __init__(self, root: Path, place: Place, settings: Settings, command: click.Command) -> None:
        self.root = root
        self._command = command
        self.place = place
        self._idle = settings.daemon_idle_seconds
        self._mode = settings.daemon
        self._reply_seconds = settings.daemon_reply_seconds
        self._warm = WarmMaps(root, settings.daemon_max_maps)
        self._build = place.build
        """The code this process runs: a request from another build is refused (checked against
        the build at start, not the files on disk now, which an edit may have changed)."""
        self._started = time.time()
        self._served = 0
        self._stopping = False

    def serve(self, listener: socket.socket) -> None:
        last = time.monotonic()
        listener.settimeout(_TICK_SECONDS)
        while not self._stopping:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last > self._idle or not self.root.is_dir():
                    return
                continue
            with conn:
                self._handle(conn)
            last = time.monotonic()

    def stop(self) -> None:
        self._stopping = True

    def close(self) -> None:
        self._warm.close()

    def _handle(self, conn: socket.socket) -> None:
        if _peer_uid(conn) != os.getuid():
            return  # not this user's process: no word at all
        conn.settimeout(30)
        try:
            request = receive(conn, MAX_REQUEST_BYTES)
            refusal = self._refusal(request)
            if refusal is not None:
                send(conn, {"taken": False, **refusal})
                return
            if request["op"] != "run":
                send(conn, self._other(request["op"]))
                return
            send(conn, {"taken": True, "reply_seconds": self._reply_seconds})
            stdout, stderr, code = self._run(request["argv"], request["cwd"], request["env"])
            self._served += 1
            conn.settimeout(None)
            send(conn, {"stdout": stdout, "stderr": stderr, "exit": code})
        except (OSError, WireError):
            return  # the caller went away: it runs the call itself
        self._warm.watch_open()  # after the answer: the caller does not wait for it

    def _refusal(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Why this request is not served (None: it is)."""
        if request.get("build") != self._build:
            self._stopping = True  # another hybridmap asks: this one is out of date
            return {"refused": "another build of hybridmap"}
        op = request.get("op")
        if op in ("stop", "status"):
            return None
        if op != "run":
            return {"refused": f"unknown operation {op!r}"}
        argv, cwd, env, mode = request.get("argv"), request.get("cwd"), request.get("env"), request.get("mode")
        if not (
            isinstance(argv, list)
            and argv
            and all(isinstance(a, str) for a in argv)
            and argv[0] in SERVED_COMMANDS
            and isinstance(cwd, str)
            and os.path.isdir(cwd)
            and isinstance(env, dict)
            and all(k in PASSED_ENV and isinstance(v, str) for k, v in env.items())
            and isinstance(mode, str)
        ):
            return {"refused": "not a call this daemon runs"}
        if (mode or self._mode) == "off":
            return {"refused": "daemons are off (the daemon setting)"}
        return None

    def _other(self, op: str) -> dict[str, Any]:
        if op == "stop":
            self._stopping = True
            return {"stopped": True}
        return self.status()

    def _run(self, argv: list[str], cwd: str, env: Mapping[str, str]) -> tuple[str, str, int]:
        out, err = io.StringIO(), io.StringIO()
        token = WARM_MAPS.set(self._warm)
        try:
            with _inside(cwd, env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = _invoke(self._command, argv)
        finally:
            WARM_MAPS.reset(token)
        return out.getvalue(), err.getvalue(), code

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "served": self._served,
            "maps": len(self._warm),
            "started": self._started,
            "idle_seconds": self._idle,
        }


def _invoke(command: click.Command, argv: list[str]) -> int:
    """Run the command line as ``hybridmap ARGV`` would; its exit code."""
    try:
        command.main(args=argv, prog_name="hybridmap", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug must cost this call, not the daemon: one line, exit 1
        sys.stderr.write(f"hybridmap: error: no map could be made: {type(exc).__name__}: {safe_line(str(exc))}\n")
        return 1
    return 0


@contextlib.contextmanager
def _inside(cwd: str, env: Mapping[str, str]) -> Iterator[None]:
    """The call's working directory and output variables, put back afterwards."""
    saved_cwd = os.getcwd()
    saved_env = {key: os.environ.get(key) for key in PASSED_ENV}
    os.chdir(cwd)
    for key in PASSED_ENV:
        os.environ.pop(key, None)
    os.environ.update(env)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    uid: int = struct.unpack("3i", creds)[1]
    return uid


def run_daemon(root: str, command: click.Command) -> int:
    """``hybridmap daemon serve ROOT``: serve until idle, running calls with ``command`` (the
    ``hybridmap`` group, handed down: the command line imports us, not the other way); 0 also
    when another daemon of this repository already runs (it holds the lock)."""
    resolved = resolve_root(root)
    place = place_for(resolved, os.environ)
    if place is None:
        raise HybridMapError(
            "no daemon can run here: no private runtime directory (XDG_RUNTIME_DIR or the temporary "
            "directory), or no way to check a caller's user id (SO_PEERCRED, Linux)"
        )
    lock = os.open(place.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        daemon = Daemon(resolved, place, load_settings(resolved), command)
        signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
        with _listening(place) as listener:
            try:
                daemon.serve(listener)
            finally:
                daemon.close()
        return 0
    finally:
        os.close(lock)


@contextlib.contextmanager
def _listening(place: Place) -> Iterator[socket.socket]:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(place.socket)  # a dead daemon's: we hold the lock, so no live one's
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(str(place.socket))  # made 0700 under this umask: never open to others
    finally:
        os.umask(old)
    os.chmod(place.socket, 0o600)
    listener.listen(16)
    try:
        yield listener
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(place.socket)
