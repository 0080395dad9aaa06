"""Where a repository's daemon listens, who may reach it, and how messages are framed.

Standard library only: every one-shot call imports this to look for a daemon.

* **The directory** is ``$XDG_RUNTIME_DIR/hybridmap`` (the user's own tmpfs), else
  ``<tmp>/hybridmap-<uid>``. It is used only when it is a real directory (not a link), owned by
  this user, with no access for group or others; anything else (say, one another user made
  first) means no daemon, and the call runs in-process as if none existed.
* **One daemon per identity**: the repository's real path, this hybridmap (version and where it
  is installed), the Python running it, the user's configuration files (by size and time) and
  the environment that decides what a map finds (``PATH``, ``HOME``, the XDG directories). A
  change to any of them is another daemon; the old one exits when idle.
* **Messages**: a 4-byte big-endian length, then that many bytes of UTF-8 JSON; a length over the
  limit closes the connection.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: The commands a daemon runs: those that make one map or lookup through ``one_shot``.
SERVED_COMMANDS = frozenset({"map", "compare", "search", "files", "stats", "dead", "clones", "notes"})
#: The environment a map depends on: servers are found on PATH, settings and caches under these.
IDENTITY_ENV = ("PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
#: A request is argv, a directory and a few variables: small.
MAX_REQUEST_BYTES = 1 << 20
#: A reply holds a map's output (JSON of a large budget included).
MAX_REPLY_BYTES = 256 << 20
_HEADER = struct.Struct(">I")


class WarmMaps(Protocol):
    """What a daemon offers the command it runs: its open map of a repository."""

    def get(self, root: str, overrides: Mapping[str, Any]) -> Any: ...


#: Set by the daemon while it runs a call: ``one_shot`` then uses the daemon's open map instead
#: of opening one (and never asks a daemon itself).
WARM_MAPS: contextvars.ContextVar[WarmMaps | None] = contextvars.ContextVar("hybridmap_warm_maps", default=None)


class WireError(OSError):
    """The other side sent something that is not a message of ours (or nothing at all)."""


def build_id() -> str:
    """This hybridmap: its version, where it is installed and its modules' sizes and times (two
    installs are two daemons, and a daemon never answers for code edited since it started)."""
    from ... import __version__

    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        info = path.stat()
        digest.update(f"{path.relative_to(package)}:{info.st_size}:{info.st_mtime_ns};".encode())
    return f"{__version__}:{package}:{sys.executable}:{digest.hexdigest()[:16]}"


def runtime_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base):
        return Path(base) / "hybridmap"
    return Path(tempfile.gettempdir()) / f"hybridmap-{os.getuid()}"


def private_dir(path: Path) -> Path | None:
    """``path`` as a directory only this user can use (made if missing), or None."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return path


def _config_signature(environ: Mapping[str, str]) -> list[Any]:
    """Size and time of each file of the user's configuration (settings, languages, queries)."""
    home = environ.get("HOME") or str(Path.home())  # as settings.user_config_dir finds it
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    config = Path(base) / "hybridmap"
    out: list[Any] = []
    for path in (config / "config.toml", *sorted(config.glob("lsp_configs/*")), *sorted(config.glob("queries/*"))):
        try:
            info = path.stat()
        except OSError:
            continue
        out.append([str(path), info.st_size, info.st_mtime_ns])
    return out


@dataclass(frozen=True, slots=True)
class Place:
    """The files of one daemon: its socket, its lock (held while it runs), its log, and the
    marker of the last one-shot call (``auto`` starts a daemon on a repeated call)."""

    directory: Path
    name: str
    build: str = ""
    """The :func:`build_id` the name was made with: what a caller sends, and a daemon checks."""

    @property
    def socket(self) -> Path:
        return self.directory / f"{self.name}.sock"

    @property
    def lock(self) -> Path:
        return self.directory / f"{self.name}.lock"

    @property
    def log(self) -> Path:
        return self.directory / f"{self.name}.log"

    @property
    def seen(self) -> Path:
        return self.directory / f"{self.name}.seen"


def supported() -> bool:
    """Whether daemons can run here: the daemon must learn each caller's user id from the socket
    (``SO_PEERCRED``, Linux); elsewhere every call runs in-process."""
    return hasattr(socket, "SO_PEERCRED")


def place_for(root: str | os.PathLike[str], environ: Mapping[str, str]) -> Place | None:
    """The daemon place of ``root`` for this user, install and environment; None when there is
    no private directory to put it in, or daemons cannot run here."""
    if not supported():
        return None
    directory = private_dir(runtime_dir(environ))
    if directory is None:
        return None
    build = build_id()
    identity = [
        build,
        os.path.realpath(root),
        [environ.get(key, "") for key in IDENTITY_ENV],
        _config_signature(environ),
    ]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]
    return Place(directory, digest, build)


def send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(message, ensure_ascii=False).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket, limit: int) -> dict[str, Any]:
    (length,) = _HEADER.unpack(_read_exactly(sock, _HEADER.size))
    if length > limit:
        raise WireError(f"a message of {length} bytes (at most {limit})")
    try:
        value = json.loads(_read_exactly(sock, length))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"not a message: {exc}") from None
    if not isinstance(value, dict):
        raise WireError("not a message: not an object")
    return value


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise WireError("the connection closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
