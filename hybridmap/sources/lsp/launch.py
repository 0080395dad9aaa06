"""Where a server's program is found, and the environment it runs in.

No pygls here: :mod:`.pool` and ``hybridmap index`` ask "is it installed?" without paying for
the LSP stack. What a server inherits is an allowlist (``ENV_ALLOWLIST``) plus its config's own
``environment``, our git overrides and the session token (``TOKEN_VARIABLE``); ``PATH`` keeps
only absolute entries, after our own install directories.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...infra.boundaries import absolute_path_entries, inside
from ...infra.git import git_config_environment
from .config import ServerConfig

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


_PROJECT_DIR = Path(__file__).resolve().parents[3]
#: The directory holding the ``hybridmap`` package: a checkout, or site-packages.
PROJECT_DIR = _PROJECT_DIR
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
        servers / "lsp" / "node_modules" / ".bin",  # npm servers: PHP, Bash, Svelte, Elm, Solidity, Vue
        servers / "bin",  # links with our own names (tsgo → TypeScript 7's tsc; PyPI servers' own venvs)
        servers / "go" / "bin",  # gopls built with the machine's Go
        servers / "cargo" / "bin",  # servers built with the machine's cargo (neocmakelsp)
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


_CHECKOUT_NOTE = re.compile(r"\s*[(;,]?\s*\(?scripts/install-servers does (?:it|both)[^)]*\)?")


#: Launchers shipped in the package (``jdtls``: a JDK >= 21, its workspace kept out of the
#: repository), linked into a servers directory's ``bin`` under the server's command name.
LAUNCHERS_DIR = Path(__file__).resolve().parent / "launchers"


def install_hint(install: str, from_source_tree: bool = FROM_SOURCE_TREE, installed: str = "") -> str:
    """A config's ``install`` text as this hybridmap can follow it. The configs are written for a
    checkout (``scripts/install-servers does it``); an installed hybridmap has no such script,
    and its npm servers belong in the per-user servers directory, where it looks for them
    (``npm install --prefix DIR/lsp``; pip servers go into hybridmap's own environment, whose
    ``bin`` is looked in first; Go and rustup put theirs on ``PATH``). A server that needs more
    than that (jdtls: its own venv and our launcher) says so in ``installed`` (the config's
    ``install-installed``), with ``{servers}``, ``{launchers}`` and ``{python}`` filled in."""
    if from_source_tree or not install:
        return install
    if installed:
        servers = user_servers_dir()
        return (
            installed.replace("{servers}", shlex.quote(str(servers)))
            .replace("{launchers}", shlex.quote(str(LAUNCHERS_DIR)))
            .replace("{python}", shlex.quote(sys.executable))
        )
    hint = _CHECKOUT_NOTE.sub("", install).strip()
    # Where a checkout puts it (``into .servers/lsp``; else ``node``, where configs name tsserver).
    into = re.search(r"into \.servers/(\w+)", install)
    prefix = user_servers_dir() / (into.group(1) if into and into.group(1) != "py" else "node")
    hint = hint.replace("npm install ", f"npm install --prefix {prefix} ", 1)
    return f"{hint} (an installed hybridmap looks in {user_servers_dir()}, its environment's bin, then PATH)"


def server_install_hint(config: ServerConfig) -> str:
    """:func:`install_hint` of a server's config (empty when it says nothing)."""
    return install_hint(config.install, installed=config.install_installed)


def expand_install_dir(value: Any) -> Any:
    """``{servers}`` (our install directory) and ``{python}`` (our interpreter: a server told
    which Python to use never looks for the repository's ``.venv/bin/python``) in a config."""
    if isinstance(value, str):
        return value.replace("{servers}", str(SERVERS_DIR)).replace("{python}", sys.executable)
    if isinstance(value, dict):
        return {k: expand_install_dir(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_install_dir(v) for v in value]
    return value


def outside_repository(environ: Mapping[str, str] | None, repository: Path) -> dict[str, str]:
    """The user's environment without what would lead a server into the repository's programs:
    ``PATH`` entries inside it (a direnv-style ``.venv/bin`` or ``node_modules/.bin``) and the
    passed-through variables of :data:`ENV_ALLOWLIST` naming a place inside it (a virtualenv
    activated from the repository: jedi and pylsp run ``$VIRTUAL_ENV/bin/python``)."""
    env = dict(os.environ if environ is None else environ)
    root = Path(os.path.realpath(repository))

    def within(value: str) -> bool:
        return os.path.isabs(value) and inside(root, Path(os.path.realpath(value)))

    if "PATH" in env:
        env["PATH"] = os.pathsep.join(e for e in env["PATH"].split(os.pathsep) if not within(e))
    for name in ENV_ALLOWLIST:
        if name != "PATH" and name in env and any(within(v) for v in env[name].split(os.pathsep) if v):
            del env[name]
    return env


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
