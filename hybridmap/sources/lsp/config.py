"""Language-server configuration as data, in the field names editors settled on.

In ``lsp_configs/<lang>.toml`` (Helix shape)::

    [language]
    name = "python"
    language-servers = ["ty", "basedpyright", "pylsp"]     # order of preference
    roots = ["pyproject.toml", "setup.py", "setup.cfg"]    # a file's project root: the nearest
    workspace-roots = []            # go.work-like markers: the outermost wins over ``roots``;
                                    # { file = "Cargo.toml", line = '^[[]workspace' }: a file with such a line

    [language-server.ty]
    command = "ty"                  # a name looked up on PATH (+ our install dirs), or an absolute path
    args = ["server"]
    config = {}                     # sent as initializationOptions
    settings = {}                   # answered to workspace/configuration, by section
    environment = {}                # extra environment variables for the process
    timeout = 20                    # seconds per request
    ready = "initialized"           # initialized | progress | log:<regex> | first-answer | server-status
                                    # (rust-analyzer's experimental/serverStatus "quiescent")
    ready-timeout = 60              # seconds before an un-ready server is used anyway / given up on
    required-root-patterns = []     # the server is skipped unless one of these exists in ROOT
    install = "pip install ty"      # what `hybridmap servers` tells a user when it is missing
    open-settle = 0                 # seconds a request on a just-opened file waits (servers that
                                    # analyze an opened file in the background and answer [] till then)
    degraded = []                   # regexes: a log/show message or an error diagnostic matching
                                    # one means "up, but cannot load the project" (state degraded)
    degraded-hint = ""              # what the user can do about it, added to the server's words

    [language-server.ty.sandbox]    # what the OS sandbox lets it do beyond the base policy
    execute = []                    # more directories it may run programs from ("{rust-sysroot}")
    read = []                       # more directories it may read ("{go-mod-cache}")
    write = []                      # more it may write (its own scratch directory always)
    toolchain = ""                  # "rust": run the toolchain's own binaries, pinned by us
    safe-without-sandbox = false    # may start where the kernel has no sandbox (reads only)

Trust: built-in and user configs are trusted. A repository's own
``.hybridmap/lsp_configs/*.toml`` may only name a command that runs when the
user opted in (``trust_repository_servers``); otherwise the server is reported
``untrusted`` and never started.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ConfigError
from .roots import MAX_MARKERS, LineMarker, RootMarkers, marker_problem

READY_MODES = ("initialized", "progress", "first-answer", "server-status")

#: Bounds on what a config file may declare: a repository's own file is read (and shown by
#: ``hybridmap servers``) even when it is never trusted, so none of its values may crash,
#: hang or reach outside the root.
MAX_TIMEOUT = 3600.0
"""Seconds: the largest ``timeout`` / ``ready-timeout`` accepted."""
MAX_PATTERNS = 32
"""How many ``required-root-patterns`` one server may list."""
MAX_TEXT = 4096
"""Characters: the longest string field (a pattern, a regex, an install hint)."""


#: Toolchains a server config may ask us to resolve and pin (``sandbox.toolchain``).
TOOLCHAINS = ("", "rust")
#: Paths one ``sandbox`` list may hold.
MAX_SANDBOX_PATHS = 32


@dataclass(frozen=True, slots=True)
class SandboxNeeds:
    """A server's additions to the sandbox policy, as its config says them (placeholders kept:
    :mod:`.confinement` resolves them at start)."""

    execute: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    toolchain: str = ""
    safe_without_sandbox: bool = False
    """Verified to run no program and write nothing the repository chose: may start on a
    kernel without Landlock (other servers then need ``allow_unsandboxed_servers``)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    command: str
    args: tuple[str, ...] = ()
    init_options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    environment: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 20.0
    ready: str = "initialized"
    ready_timeout: float = 60.0
    required_root_patterns: tuple[str, ...] = ()
    install: str = ""
    install_installed: str = ""
    """How an installed hybridmap (no checkout, no ``scripts/install-servers``) installs the server,
    when ``install`` rewritten (:func:`.launch.install_hint`) would not do: ``{servers}``, its
    servers directory; ``{launchers}``, the launchers shipped in the package; ``{python}``."""
    open_settle: float = 0.0
    """Seconds after a file's didOpen before a request on it is sent (0: at once)."""
    degraded: tuple[re.Pattern[str], ...] = ()
    """A message (log, show, or an error diagnostic) matching one of these: the server is up but
    cannot load the project; it is reported ``degraded`` with that message."""
    degraded_hint: str = ""
    runs_repository_code: bool = False
    """The server executes code the repository ships (the Solidity server loads a Hardhat
    project's ``node_modules/hardhat`` and config): started only when the user allows it
    (``allow_servers_running_repository_code``), otherwise reported ``untrusted``."""
    sandbox: SandboxNeeds = field(default_factory=lambda: SandboxNeeds())
    """What the OS sandbox grants it beyond the base policy (``hybridmap/infra/sandbox/policy.toml``)."""
    source: Path | None = None
    trusted: bool = True

    @property
    def ready_log_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.ready[4:]) if self.ready.startswith("log:") else None

    def fingerprint(self) -> str:
        """Changes whenever anything that can change the server's answers changes."""
        data = json.dumps([self.command, self.args, self.init_options, self.settings], sort_keys=True, default=str)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def _table(value: Any, key: str, source: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: '{key}' must be a table")
    return value


def _seconds(data: Mapping[str, Any], key: str, default: float, where: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}.{key} must be a number of seconds, not {type(value).__name__}")
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise ConfigError(f"{where}.{key} must be in (0, {MAX_TIMEOUT:g}] seconds, not {value!r}")
    return float(value)


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise ConfigError(f"{where}.{key} must be a string of at most {MAX_TEXT} characters")
    return value


def root_pattern_problem(pattern: str) -> str:
    """Why ``pattern`` cannot be a root pattern ("" when it can): it must stay inside ROOT."""
    if not pattern or pattern.startswith(("/", "~", "\\")) or "\0" in pattern:
        return f"{pattern!r} is not a relative glob"
    if ".." in pattern.replace("\\", "/").split("/"):
        return f"{pattern!r} leaves the root ('..')"
    return ""


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    key = "required-root-patterns"
    if not isinstance(value, list) or len(value) > MAX_PATTERNS:
        raise ConfigError(f"{where}.{key} must be a list of at most {MAX_PATTERNS} globs")
    out = tuple(_text(p, key, where) for p in value)
    for pattern in out:
        problem = root_pattern_problem(pattern)
        if problem:
            raise ConfigError(f"{where}.{key}: {problem}")
    return out


def parse_server(name: str, data: Mapping[str, Any], source: Path, trusted: bool) -> ServerConfig:
    where = f"{source}: language-server.{name}"
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where} must be a table")
    command = data.get("command")
    if isinstance(command, list):  # OpenCode / Neovim style: command = ["ty", "server"]
        if not command or not all(isinstance(c, str) for c in command):
            raise ConfigError(f"{source}: language-server.{name}.command must be a non-empty list of strings")
        command, extra = command[0], command[1:]
    else:
        extra = []
    if not isinstance(command, str) or not command or len(command) > MAX_TEXT or "\0" in command:
        raise ConfigError(f"{source}: language-server.{name} needs a 'command'")
    args = data.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{source}: language-server.{name}.args must be a list of strings")
    ready = data.get("ready", "initialized")
    if not isinstance(ready, str) or len(ready) > MAX_TEXT or not (ready in READY_MODES or ready.startswith("log:")):
        raise ConfigError(f"{source}: language-server.{name}.ready must be one of {READY_MODES} or 'log:<regex>'")
    if ready.startswith("log:"):
        try:
            re.compile(ready[4:])
        except re.error as exc:
            raise ConfigError(f"{source}: language-server.{name}.ready has a bad regex: {exc}") from exc
    degraded = data.get("degraded", [])
    if not isinstance(degraded, list) or len(degraded) > MAX_PATTERNS:
        raise ConfigError(f"{where}.degraded must be a list of at most {MAX_PATTERNS} regexes")
    try:
        degraded_patterns = tuple(re.compile(_text(p, "degraded", where)) for p in degraded)
    except re.error as exc:
        raise ConfigError(f"{where}.degraded has a bad regex: {exc}") from exc
    env = _table(data.get("environment"), "environment", source)
    if not all(isinstance(v, str) and "\0" not in v and "\0" not in k for k, v in env.items()):
        raise ConfigError(f"{source}: language-server.{name}.environment values must be strings")
    return ServerConfig(
        name=name,
        command=command,
        args=tuple(extra) + tuple(args),
        init_options=_table(data.get("config"), "config", source),
        settings=_table(data.get("settings"), "settings", source),
        environment=env,
        timeout=_seconds(data, "timeout", 20.0, where),
        ready=ready,
        ready_timeout=_seconds(data, "ready-timeout", 60.0, where),
        required_root_patterns=_patterns(data.get("required-root-patterns", []), where),
        install=_text(data.get("install", ""), "install", where),
        install_installed=_text(data.get("install-installed", ""), "install-installed", where),
        open_settle=_seconds(data, "open-settle", 0.0, where) if "open-settle" in data else 0.0,
        degraded=degraded_patterns,
        degraded_hint=_text(data.get("degraded-hint", ""), "degraded-hint", where),
        runs_repository_code=_flag(data, "runs-repository-code", where),
        sandbox=_sandbox(data.get("sandbox"), f"{where}.sandbox", source),
        source=source,
        trusted=trusted,
    )


def _sandbox(value: Any, where: str, source: Path) -> SandboxNeeds:
    table = _table(value, "sandbox", source)
    unknown = set(table) - {"execute", "read", "write", "toolchain", "safe-without-sandbox"}
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("execute", "read", "write"):
        paths = table.get(key, [])
        if not isinstance(paths, list) or len(paths) > MAX_SANDBOX_PATHS:
            raise ConfigError(f"{where}.{key} must be a list of at most {MAX_SANDBOX_PATHS} paths")
        lists[key] = tuple(_text(p, key, where) for p in paths)
        for path in lists[key]:
            if not (path.startswith(("/", "{")) and "\0" not in path):
                raise ConfigError(f"{where}.{key}: {path!r} is not an absolute path or a {{place}}")
    toolchain = table.get("toolchain", "")
    if toolchain not in TOOLCHAINS:
        raise ConfigError(f"{where}.toolchain must be one of {[t for t in TOOLCHAINS if t]}")
    return SandboxNeeds(
        lists["execute"], lists["read"], lists["write"], toolchain, _flag(table, "safe-without-sandbox", where)
    )


def _flag(data: Mapping[str, Any], key: str, where: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key} must be true or false")
    return value


def servers_for_language(raw: Mapping[str, Any], source: Path, trusted: bool = True) -> tuple[ServerConfig, ...]:
    """The ordered server candidates a language TOML declares."""
    language = raw.get("language", {})
    names = language.get("language-servers", []) if isinstance(language, dict) else []
    if not isinstance(names, list):
        raise ConfigError(f"{source}: language.language-servers must be a list")
    tables = _table(raw.get("language-server"), "language-server", source)
    out: list[ServerConfig] = []
    for entry in names:
        name = entry.get("name") if isinstance(entry, dict) else entry
        if not isinstance(name, str):
            raise ConfigError(f"{source}: bad language-servers entry {entry!r}")
        if name not in tables:
            raise ConfigError(f"{source}: language-servers names '{name}' but has no [language-server.{name}]")
        out.append(parse_server(name, tables[name], source, trusted))
    return tuple(out)


def merge_candidates(builtin: Sequence[ServerConfig], overrides: Sequence[ServerConfig]) -> tuple[ServerConfig, ...]:
    """Later configs replace earlier ones of the same name and go first in preference."""
    names = {s.name for s in overrides}
    return tuple(overrides) + tuple(s for s in builtin if s.name not in names)


def _marker_list(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_MARKERS or not all(isinstance(n, str) for n in value):
        raise ConfigError(f"{where}.{key} must be a list of at most {MAX_MARKERS} file names")
    for name in value:
        problem = marker_problem(name)
        if problem:
            raise ConfigError(f"{where}.{key}: {problem}")
    return tuple(value)


def _line_markers(value: Any, where: str) -> tuple[tuple[str, ...], tuple[LineMarker, ...]]:
    """``workspace-roots``: file names, and ``{ file = NAME, line = REGEX }`` tables."""
    if not isinstance(value, list) or len(value) > MAX_MARKERS:
        raise ConfigError(f"{where}.workspace-roots must be a list of at most {MAX_MARKERS} markers")
    names = _marker_list([v for v in value if not isinstance(v, dict)], "workspace-roots", where)
    lines = []
    for table in (v for v in value if isinstance(v, dict)):
        name, line = table.get("file"), table.get("line")
        if set(table) != {"file", "line"} or not isinstance(name, str) or not isinstance(line, str):
            raise ConfigError(f"{where}.workspace-roots: a table needs exactly `file` and `line` (strings)")
        problem = marker_problem(name)
        if problem:
            raise ConfigError(f"{where}.workspace-roots: {problem}")
        try:
            re.compile(line.encode())
        except re.error as exc:
            raise ConfigError(f"{where}.workspace-roots: `line` {line!r} is not a regex: {exc}") from None
        lines.append(LineMarker(name, line))
    return names, tuple(lines)


def root_markers(raw: Mapping[str, Any], source: Path) -> RootMarkers:
    """The language's project-root markers: ``roots`` (the nearest directory holding one is a
    file's project root) and ``workspace-roots`` (the outermost holding one wins over those)."""
    language = raw.get("language", {})
    if not isinstance(language, dict):
        return RootMarkers()
    where = f"{source}: language"
    workspace, lines = _line_markers(language.get("workspace-roots", []), where)
    return RootMarkers(_marker_list(language.get("roots", []), "roots", where), workspace, lines)
