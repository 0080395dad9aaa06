"""The lookup commands: ``hybridmap search``, ``files``, ``dead``, ``clones``, ``stats``, ``notes``.

Each opens ROOT for one call through :func:`.one_shot.one_shot` (a progress line on a terminal, one-line
errors) and prints text or ``--format json`` (``docs/commands.md``). Every repository string
printed goes through :mod:`.sanitize` (the records' ``to_json`` escape paths and names).
"""

from __future__ import annotations

from typing import Any

import click

from ...infra.sanitize import escape_path, json_dumps, safe_line
from .one_shot import fail_if_empty, one_shot
from .options import cache_options as _cache_options
from .options import cache_overrides as _cache_overrides

ROOT = click.argument("root", default=".", type=click.Path(file_okay=False, path_type=str))
FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)


MODE = click.option(
    "--mode",
    type=click.Choice(["static", "hybrid"]),
    default="hybrid",
    show_default=True,
    help="hybrid: language servers that are ready answer too (see --server-wait); static: tree-sitter only.",
)
SERVER_WAIT = click.option(
    "--server-wait",
    type=click.FloatRange(min=0, max=3_600),
    default=0.0,
    show_default=True,
    help="Seconds to let language servers start and get ready first (0: none is started in a one-shot call).",
)


def _ask(root: str, cache_dir: str | None, no_cache: bool, ask: Any, server_wait: float = 0.0) -> Any:
    return one_shot(root, _cache_overrides(cache_dir, no_cache), server_wait, ask)


def _server_lines(found: Any) -> None:
    """What each server did for a search, on stderr (a server that failed is said, not hidden)."""
    for answer in found.servers:
        shown = answer.to_json()
        if shown["outcome"] == "answered":
            said = f"{shown['kept']} of {shown['hits']} hits kept in {shown['seconds']:.3f} s"
        else:
            said = f"{shown['outcome']}: {shown['detail']}"
        click.echo(f"hybridmap: {shown['server']} ({shown['root']}): {said}", err=True)


@click.command("search")
@ROOT
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True, help="Most matches shown.")
@click.option("--kind", default=None, metavar="KIND", help="Only definitions of this kind (function, class, ...).")
@click.option("--path", "path", default=None, metavar="PATH", help="Only in this file or under this directory.")
@MODE
@SERVER_WAIT
@FORMAT
@_cache_options
def search_command(
    root: str,
    query: str,
    limit: int,
    kind: str | None,
    path: str | None,
    mode: str,
    server_wait: float,
    fmt: str,
    cache_dir: str | None,
    no_cache: bool,
) -> None:
    """Find definitions in ROOT by name, any case or style, typos allowed (best first); in hybrid
    mode with ready language servers, their workspace/symbol hits are merged in."""
    from ...model import SCHEMA_VERSION

    def ask(repo: Any) -> Any:
        return repo.search_symbols(query, limit=limit, kind=kind, path=path, mode=mode, server_wait=server_wait)

    found = _ask(root, cache_dir, no_cache, ask, server_wait)
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **found.to_json()}))
        return
    for match in found.matches:
        shown = match.to_json()
        where = "" if shown["sources"] == ["index"] else f" ({', '.join(shown['sources'])})"
        click.echo(f"{shown['path']}:{shown['line']}: {shown['kind']} {shown['name']}  [{shown['match']}]{where}")
        if shown["signature"]:
            click.echo(f"    {shown['signature']}")
    _server_lines(found)
    more = f" (first {len(found.matches)})" if found.truncated else ""
    unready = " (index only: no language server was ready; --server-wait starts them)"
    asked = unready if mode == "hybrid" and not found.servers else ""
    click.echo(f"hybridmap: {found.total} matches{more} for '{safe_line(query)}'{asked}", err=True)


@click.command("files")
@ROOT
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True, help="Most paths shown.")
@click.option(
    "--stream",
    is_flag=True,
    help="Print the best matches so far after each chunk of the listing, as JSON lines (the last has done: true).",
)
@FORMAT
def files_command(root: str, query: str, limit: int, stream: bool, fmt: str) -> None:
    """Find files in ROOT by path, fzf style: QUERY's characters in order, best first; smart case
    (case-sensitive only when QUERY has an uppercase letter); space-separated terms must all match."""
    from ...errors import HybridMapError
    from ...features.file_search import listing_chunks, stream_matches
    from ...model import SCHEMA_VERSION
    from ...settings import load_settings
    from ...workspace.walk import resolve_root
    from ..exits import fail

    try:
        resolved = resolve_root(root)
        settings = load_settings(resolved)
    except HybridMapError as exc:
        fail(str(exc))
    last = None
    for last in stream_matches(query, listing_chunks(resolved, settings), limit):
        if stream:
            click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **last.to_json()}, indent=None))
    if stream or last is None:
        return
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **last.to_json()}))
        return
    for match in last.matches:
        click.echo(escape_path(match.path))
    click.echo(f"hybridmap: {last.total} of {last.listed} files match '{safe_line(query)}'", err=True)


def print_graph(root: str, overrides: dict[str, Any], request: Any, fmt: str) -> None:
    """``map --format graphml|gexf|json-graph``: the graph the map was ranked on."""
    from ...features.export import graph_document
    from ...workspace.walk import head_reader

    def ask(repo: Any) -> tuple[Any, str]:
        result = repo.map(request)
        graph = repo.graph()
        if graph is None:
            return result, ""
        head = head_reader(repo.root)
        languages = {p: repo.registry.language_for(p, head) or "" for p in repo.tags()}
        return result, graph_document(graph, result, languages, fmt)

    result, document = one_shot(root, overrides, request.server_wait, ask)
    click.echo(document, nl=False)
    fail_if_empty(result.diagnostics)


@click.command("stats")
@ROOT
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="Seconds to wait for language servers (their states and resolved edges are counted).",
)
@FORMAT
@_cache_options
def stats_command(root: str, server_wait: float, fmt: str, cache_dir: str | None, no_cache: bool) -> None:
    """Files, lines and definitions per language, the graph's edges by provenance, server states,
    cache hits and timings of ROOT."""
    from ...features.export import render_stats

    document = one_shot(
        root, _cache_overrides(cache_dir, no_cache), server_wait, lambda repo: repo.stats(server_wait=server_wait)
    )
    if fmt == "json":
        click.echo(json_dumps(document))
    else:
        click.echo(render_stats(document), nl=False)


@click.command("dead")
@ROOT
@click.option(
    "--tests/--no-tests", "with_tests", default=True, show_default=True, help="List test-only definitions too."
)
@MODE
@SERVER_WAIT
@FORMAT
@_cache_options
def dead_command(
    root: str, with_tests: bool, mode: str, server_wait: float, fmt: str, cache_dir: str | None, no_cache: bool
) -> None:
    """Definitions in ROOT that nothing uses (dead) or only tests use (test-only), matched by name,
    then checked by a ready language server's references (resolved) in hybrid mode; exported API
    (package __init__ names, export, capitalised Go, pub, public) is left out."""
    from ...model import SCHEMA_VERSION

    found = _ask(
        root, cache_dir, no_cache, lambda repo: repo.dead_code(mode=mode, server_wait=server_wait), server_wait
    )
    document = found.to_json()
    if not with_tests:
        document["definitions"] = [d for d in document["definitions"] if d["status"] == "dead"]
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **document}))
        return
    _print_dead(document, mode)


def _print_dead(document: Any, mode: str) -> None:
    """``dead``'s text: one line per definition with its evidence, then the notes and a summary."""
    for d in document["definitions"]:
        users = f" (used by {', '.join(d['used_by'][:3])})" if d["used_by"] else ""
        resolved = d["evidence"] == "resolved"
        evidence = f"resolved by {d['provenance'].removeprefix('lsp:')}" if resolved else "name-matched"
        click.echo(f"{d['path']}:{d['line']}: {d['status']}: {d['kind']} {d['name']}{users}  [{evidence}]")
    for note in document["diagnostics"]:
        click.echo(f"hybridmap: {note['message']}", err=True)
    checked = f"{document['dead']} dead, {document['test_only']} test-only of {document['checked']} definitions checked"
    exported = f"{document['exported']} exported ones left out"
    if document["asked"]:
        count = len(document["refuted"])
        refuted = f"; {count} name-matched candidate(s) refuted by a server" if count else ""
        how = f" ({document['resolved']} resolved by servers, {document['name_matched']} name-matched){refuted}"
        click.echo(f"hybridmap: {checked}{how}; {exported}", err=True)
    else:
        unready = " (no language server was ready: --server-wait starts them)" if mode == "hybrid" else ""
        click.echo(f"hybridmap: {checked} by name; {exported}{unready}", err=True)


@click.command("clones")
@ROOT
@click.option(
    "--similarity",
    type=click.FloatRange(0.1, 1.0),
    default=None,
    help="Least similarity of two functions' syntax shapes (default: the clone_similarity setting, 0.8).",
)
@FORMAT
@_cache_options
def clones_command(root: str, similarity: float | None, fmt: str, cache_dir: str | None, no_cache: bool) -> None:
    """Groups of near-duplicate functions in ROOT (same or similar syntax shape: names, literals
    and comments do not count), largest groups first."""
    from ...model import SCHEMA_VERSION

    groups = _ask(root, cache_dir, no_cache, lambda repo: repo.clones(similarity))
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, "groups": [g.to_json() for g in groups]}))
        return
    for group in groups:
        label = "same shape" if group.exact else f"similarity {group.similarity:.3f}"
        click.echo(f"{len(group.members)} functions, {label}:")
        for m in group.members:
            click.echo(f"    {escape_path(m.path)}:{m.line}-{m.end_line}: {safe_line(m.name)}")
    click.echo(f"hybridmap: {len(groups)} groups of clones", err=True)


@click.command("notes")
@ROOT
@click.option(
    "--cwd",
    default=".",
    show_default=True,
    help="The directory (or a file in it) the agent works in, relative to ROOT.",
)
@FORMAT
@_cache_options
def notes_command(root: str, cwd: str, fmt: str, cache_dir: str | None, no_cache: bool) -> None:
    """The repository's AGENTS.md files from ROOT down to --cwd (AGENTS.override.md replaces
    AGENTS.md in its directory), root first, within agents_md_max_bytes: what the MCP tool
    agent_notes returns. Repository text: control and invisible characters escaped."""
    from ...model import SCHEMA_VERSION

    notes = _ask(root, cache_dir, no_cache, lambda repo: repo.agent_notes(cwd))
    if fmt == "json":
        click.echo(json_dumps({"schema_version": SCHEMA_VERSION, **notes.to_json()}))
        return
    if notes.text:
        click.echo(notes.text, nl=not notes.text.endswith("\n"))
    for skipped in notes.skipped:
        click.echo(
            f"hybridmap: {escape_path(skipped.path)}: {safe_line(skipped.kind)}: {safe_line(skipped.message)}", err=True
        )
    click.echo(
        f"hybridmap: {len(notes.files)} AGENTS.md files" + (" (cut to the budget)" if notes.truncated else ""), err=True
    )


TOOL_COMMANDS: list[click.Command] = [
    search_command,
    files_command,
    stats_command,
    dead_command,
    clones_command,
    notes_command,
]


def roots_map(roots: tuple[str, ...], overrides: dict[str, Any], request: Any, fmt: str, watch: bool) -> Any:
    """``map ROOT --root OTHER``: one map of several roots (:mod:`hybridmap.api.roots`), made in
    this process (a daemon serves one root); options that need one root are refused in one line."""
    import asyncio

    from ...api.roots import AsyncRootsMap
    from ...errors import HybridMapError
    from ..exits import fail
    from .one_shot import exit_code

    alone = {
        "--diff": request.diff is not None,
        "--symbol": request.symbol is not None,
        "--stable": bool(request.stable),
        "--watch": watch,
        "--format " + fmt: fmt not in ("text", "json"),
    }
    refused = [name for name, given in alone.items() if given]
    if refused:
        fail(f"{', '.join(refused)} maps one root; not with --root", 2)

    async def run() -> Any:
        async with AsyncRootsMap(roots, overrides=overrides, start_servers=request.server_wait > 0) as joined:
            return await joined.map(
                chat_files=request.chat_files,
                mentioned_files=request.mentioned_files,
                mentioned_idents=request.mentioned_idents,
                tokens=request.tokens,
                mode=request.mode,
                server_wait=request.server_wait,
                message=request.message,
                reasons=request.reasons,
            )

    try:
        return asyncio.run(run())
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))
