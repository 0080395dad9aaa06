"""The ``hybridmap eval`` command (registered on the main CLI group in ``hybridmap/frontends/cli/main.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ...errors import HybridMapError
from ...infra.sanitize import json_dumps, safe_block
from ..exits import EXIT_INTERRUPTED, fail
from .progress import ProgressBar
from .report import render_markdown, to_json, to_markdown, with_summaries
from .run import MODES, PEERS, EvalOptions, parse_budgets, parse_names, parse_variant, run_eval
from .tasks import ALL_TASK_KINDS, TASK_KINDS


@click.command("eval")
@click.argument("root", default=".", type=click.Path(path_type=str))
@click.option(
    "--commits",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many recent qualifying commits to replay (fewer if fewer qualify: a warning says so).",
)
@click.option("--rev", default="HEAD", show_default=True, help="Replay the first-parent history of this revision.")
@click.option(
    "--tokens",
    "tokens",
    default="1024,2048,4096",
    show_default=True,
    metavar="N,N,...",
    help="Token budgets to measure at.",
)
@click.option(
    "--modes",
    default="static,hybrid",
    show_default=True,
    metavar="MODE,...",
    help="hybridmap modes to measure: static, hybrid (empty: only the peer).",
)
@click.option(
    "--tasks",
    "task_kinds",
    default=",".join(TASK_KINDS),
    show_default=True,
    metavar="KIND,...",
    help="Task kinds to ask: co-edit, message (words cut from the commit message), "
    "message-text (the message as written; each system reads it), diff (the map of the commit's "
    "first half should show the rest; not asked by default).",
)
@click.option(
    "--message-typos",
    is_flag=True,
    help="message-text tasks: swap two neighbouring letters in each compound identifier of 8+ letters "
    "of the message, for every system (what a hurried user types).",
)
@click.option(
    "--variant",
    "variants",
    multiple=True,
    metavar="NAME:KEY=VALUE,...",
    help="Also run each mode with these settings (repeatable), reported as MODE[NAME]: a ranking "
    "change measured beside the defaults on the same checkouts, e.g. --variant nocc:co_change_boost=0.",
)
@click.option(
    "--peer",
    "peers",
    default="",
    metavar="NAMES",
    help=f"Also run peers on the same requests, comma-separated ({', '.join(PEERS)}): Aider's RepoMap; "
    "BM25 over each source file's text, listing 20 files.",
)
@click.option(
    "--aider-python",
    default=None,
    metavar="PATH",
    help="Python of a venv with Aider (default $HYBRIDMAP_AIDER_PYTHON, then "
    "benchmarks/.work/aider-venv/bin/python from benchmarks/setup_aider_env.sh).",
)
@click.option(
    "--server-wait",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Seconds a hybrid map may wait per checkout for servers to be ready and resolve names.",
)
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option(
    "--json-out",
    default=None,
    type=click.Path(dir_okay=False, path_type=str),
    metavar="FILE",
    help="Also write the JSON report (with per-commit detail) to FILE.",
)
@click.option(
    "--cache-dir",
    default=None,
    type=click.Path(file_okay=False, path_type=str),
    help="Parse caches of this run (default: a temporary directory, removed at the end).",
)
@click.option(
    "--peer-timeout",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    help="Seconds the peer may take on one checkout.",
)
@click.option(
    "--from-json",
    "from_json",
    default=None,
    type=click.Path(dir_okay=False, path_type=str),
    metavar="FILE",
    help="Render a report saved with --json-out again (runs nothing; ROOT is ignored).",
)
def eval_command(
    root: str,
    commits: int,
    rev: str,
    tokens: str,
    modes: str,
    task_kinds: str,
    message_typos: bool,
    variants: tuple[str, ...],
    peers: str,
    aider_python: str | None,
    server_wait: float,
    fmt: str,
    json_out: str | None,
    cache_dir: str | None,
    peer_timeout: float,
    from_json: str | None,
) -> None:
    """Replay ROOT's recent commits and measure how well maps find what each commit changed."""
    if from_json:
        _render_saved(from_json, fmt)
        return
    progress = ProgressBar(sys.stderr)
    try:
        options = EvalOptions(
            root=Path(root),
            commits=commits,
            budgets=parse_budgets(tokens),
            modes=parse_names(modes, MODES, "--modes"),  # type: ignore[arg-type]
            peers=parse_names(peers, PEERS, "--peer"),
            server_wait=server_wait,
            rev=rev,
            cache_dir=Path(cache_dir).expanduser().resolve() if cache_dir else None,
            aider_python=aider_python,
            peer_timeout=peer_timeout,
            tasks=parse_names(task_kinds, ALL_TASK_KINDS, "--tasks"),  # type: ignore[arg-type]
            variants=tuple(parse_variant(text) for text in variants),
            message_typos=message_typos,
        )
        report = run_eval(options, progress)
    except HybridMapError as exc:
        progress.clear()
        fail(str(exc))
    except KeyboardInterrupt:
        progress.clear()
        fail("interrupted; the scratch worktree was removed", EXIT_INTERRUPTED)
    progress.clear()
    if report.selection.shortfall:
        click.echo(f"hybridmap: warning: {report.selection.shortfall}", err=True)
    for skipped in report.unavailable:
        click.echo(f"hybridmap: warning: skipped a commit that cannot be checked out: {skipped}", err=True)
    document = to_json(report)  # json_dumps makes its paths and commit messages safe
    if json_out:
        Path(json_out).write_text(json_dumps(document) + "\n", encoding="utf-8")
    if fmt == "json":
        click.echo(json_dumps(document))
    else:
        click.echo(safe_block(to_markdown(report)), nl=False)


def _render_saved(path: str, fmt: str) -> None:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        document = with_summaries(document)
        text = json_dumps(document) if fmt == "json" else safe_block(render_markdown(document))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        fail(f"cannot render '{path}' as an eval report: {exc}")
    click.echo(text, nl=fmt == "json")
