"""The one-shot side: ask the repository's daemon to run this call, or start one.

A call is handed over whole (its arguments, working directory and the few variables that
shape its output) and the daemon answers with what the call would have printed and its exit
code. Anything short of a full answer (no daemon, another build, a refusal, a timeout, a
broken connection) returns None and the call runs in-process, as if no daemon existed: the
output is only ever written once, by whoever made it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .place import MAX_REPLY_BYTES, SERVED_COMMANDS, Place, WireError, build_id, place_for, receive, send

#: ``HYBRIDMAP_DAEMON`` (``auto``, ``on``, ``off``) overrides the ``daemon`` setting.
MODE_VARIABLE = "HYBRIDMAP_DAEMON"
#: Variables the daemon sets for the call: what the output's layout and colour depend on.
PASSED_ENV = ("COLUMNS", "LINES", "NO_COLOR", "TERM")
#: A daemon that does not accept within this long is not there (it listens on a local socket).
CONNECT_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class Reply:
    """What the call printed and how it ended, as the daemon ran it."""

    stdout: str
    stderr: str
    exit_code: int


#: A daemon that has not taken a call within this long is busy with another (it runs one at a
#: time): the call runs in-process rather than queue.
TAKEN_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Asked:
    """What came of asking: the answer, or whether a daemon was there at all."""

    reply: Reply | None
    found: bool


def ask_to_run(root: str, argv: Sequence[str], server_wait: float, environ: Mapping[str, str]) -> Asked:
    """Hand this call (argv as given to ``hybridmap``) to ROOT's daemon, if one runs.

    The daemon first says it took the call and how long it may take beyond the call's own
    server wait (its ``daemon_reply_seconds``), then answers. Standard library only, and no
    settings read: a call a daemon answers pays for little more than its interpreter."""
    mode = environ.get(MODE_VARIABLE, "")
    if mode == "off" or not argv or argv[0] not in SERVED_COMMANDS:
        return Asked(None, False)
    place = place_for(root, environ)
    if place is None:
        return Asked(None, False)
    env = {key: environ[key] for key in PASSED_ENV if key in environ}
    call = {"op": "run", "argv": list(argv), "cwd": os.getcwd(), "env": env, "mode": mode, "build": place.build}
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_SECONDS)
            sock.connect(str(place.socket))
            sock.settimeout(TAKEN_SECONDS)
            send(sock, call)
            taken = receive(sock, MAX_REPLY_BYTES)
            limit = taken.get("reply_seconds")
            if taken.get("taken") is not True or not isinstance(limit, (int, float)):
                return Asked(None, True)
            sock.settimeout(server_wait + float(limit))
            reply = receive(sock, MAX_REPLY_BYTES)
    except (FileNotFoundError, ConnectionRefusedError):
        return Asked(None, False)  # none runs (or a dead one's socket is left)
    except (OSError, WireError, ValueError):
        return Asked(None, True)
    stdout, stderr, code = reply.get("stdout"), reply.get("stderr"), reply.get("exit")
    if isinstance(stdout, str) and isinstance(stderr, str) and isinstance(code, int) and not isinstance(code, bool):
        return Asked(Reply(stdout, stderr, code), True)
    return Asked(None, True)


def start_if_wanted(root: str, mode: str, spawn_window: float, environ: Mapping[str, str]) -> bool:
    """After a call no daemon answered: start ROOT's daemon for the next call when ``mode``
    says so (``on``; ``auto`` when the repository was asked within ``spawn_window`` seconds).
    ``HYBRIDMAP_DAEMON`` overrides ``mode``. Whether one was started."""
    chosen = environ.get(MODE_VARIABLE, "") or mode
    if chosen not in ("auto", "on"):
        return False
    place = place_for(root, environ)
    if place is None:
        return False
    if chosen == "on" or _asked_again(place, spawn_window):
        start(place, root, environ)
        return True
    return False


def ask(place: Place, message: Mapping[str, object], timeout: float) -> dict[str, object] | None:
    """One request and its reply (``status``, ``stop``); None when no daemon answered."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_SECONDS)
            sock.connect(str(place.socket))
            sock.settimeout(timeout)
            send(sock, {**message, "build": place.build or build_id()})
            return receive(sock, MAX_REPLY_BYTES)
    except (OSError, WireError, ValueError):
        return None


def _asked_again(place: Place, window: float) -> bool:
    """Whether the last one-shot call on this repository was within ``window`` seconds; this
    call is remembered either way."""
    try:
        last = os.stat(place.seen).st_mtime
    except OSError:
        last = None
    try:
        fd = os.open(place.seen, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.utime(fd)
        os.close(fd)
    except OSError:
        return False
    return last is not None and 0 <= time.time() - last <= window


def start(place: Place, root: str, environ: Mapping[str, str]) -> None:
    """Start the daemon of ``root`` in its own session, detached; its output goes to its log
    (the user's own file). A second one started at the same time exits on the lock."""
    try:
        log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "hybridmap", "daemon", "serve", os.path.realpath(root)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            env=dict(environ),
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
    finally:
        os.close(log)
