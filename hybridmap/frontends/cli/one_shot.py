"""One request from the command line: ROOT opened for one call, with a progress display on a
terminal and every error as one line and an exit code (``docs/commands.md``). The map commands
and the tool commands both go through :func:`one_shot`."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ...errors import HybridMapError
from ...infra.collector import collector_paused
from ..daemon.place import WARM_MAPS, WarmMaps
from ..exits import EXIT_NO_MAP, EXIT_USAGE, fail

if TYPE_CHECKING:
    from ...api.sync import RepoMap
    from ...model import Diagnostic

#: ``ctx.meta`` keys of the root context: the command line as given (what a daemon is handed),
#: and whether the command read standard input (a daemon cannot: the call runs here).
ARGV_KEY = "hybridmap.argv"
STDIN_KEY = "hybridmap.stdin_read"

T = TypeVar("T")


class Progress:
    """Progress on a terminal, drawn by rich: the indexing phase with a bar and a count of files,
    then, when the map may wait for language servers, a spinner with the seconds waited and the
    limit. Nothing when the stream is not a terminal; erased when the map is done (``clear``).
    Only our own words and numbers are drawn (never a repository string), without colours."""

    def __init__(self, stream: Any, server_wait: float = 0.0) -> None:
        self._stream = stream
        self._enabled = stream.isatty()
        self._server_wait = server_wait
        self._rich: Any = None
        self._task: Any = None
        self._waiting: Any = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self._enabled:
            return
        display = self._display()
        if self._waiting is not None:  # another phase after all: back to counting files
            display.remove_task(self._waiting)
            self._waiting = None
        count = f"{done}/{total} files"
        if self._task is None:
            self._task = display.add_task(phase, total=total, count=count)
        display.update(self._task, description=phase, completed=done, total=total, count=count, visible=True)
        if done >= total and self._server_wait > 0:
            # Indexing is done; what follows may be the wait for the servers: an open-ended task,
            # animated (spinner, seconds) by rich's refresh thread while the map waits.
            display.update(self._task, visible=False)
            self._waiting = display.add_task(f"servers: waiting up to {self._server_wait:g} s", total=None, count="")

    def _display(self) -> Any:
        if self._rich is None:
            from rich.console import Console  # only on a terminal: a piped call never imports rich
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            console = Console(
                file=self._stream, color_system=None, highlight=False, emoji=False, markup=False, force_terminal=True
            )
            self._rich = Progress(
                TextColumn("hybridmap: {task.description}", markup=False),
                BarColumn(bar_width=20),
                TextColumn("{task.fields[count]}", markup=False),
                SpinnerColumn(spinner_name="line"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
                refresh_per_second=8,
            )
            self._rich.start()
        return self._rich

    def clear(self) -> None:
        if self._rich is not None:
            self._rich.stop()  # transient: the lines are erased, the cursor shown again
            self._rich = None
            self._task = self._waiting = None


def exit_code(exc: BaseException) -> int:
    """Usage (2) for what the user gave (arguments, root, settings, request); else no map (1)."""
    from ...errors import ConfigError, RequestError, RootError

    return EXIT_USAGE if isinstance(exc, (ConfigError, RootError, RequestError)) else EXIT_NO_MAP


def fail_if_empty(diagnostics: Sequence[Diagnostic]) -> None:
    """Exit 1 with the ``empty_map`` diagnostic's reason (the output was already printed)."""
    empty = next((d for d in diagnostics if d.kind == "empty_map"), None)
    if empty is not None:
        fail(f"no map: {empty.message}", EXIT_NO_MAP)


def one_shot(root: str, overrides: dict[str, Any], server_wait: float, ask: Callable[[RepoMap], T]) -> T:
    """Open ROOT for one request with a progress line on stderr; errors exit with one line.
    A warm daemon answers instead when one runs (``docs/daemon.md``): its output is printed and
    the process exits with its code."""
    warm = WARM_MAPS.get()
    if warm is not None:
        return _on_warm_map(warm, root, overrides, ask)
    _answer_from_daemon(root, overrides, server_wait)
    from ...api.sync import RepoMap  # here: a call a daemon answered never imports the pipeline

    progress = Progress(sys.stderr, server_wait)
    try:
        # A one-shot call that will not wait cannot use a server: do not start any.
        repo = RepoMap(root, overrides=overrides, progress=progress, start_servers=server_wait > 0, one_shot=True)
        paused = repo.settings.pause_cycle_collector
        # The collector is held off for the whole call, the close (the files' states) included:
        # resumed between the map's steps, it passed over the whole young index again. The
        # process ends soon after (frontends/cli/entry.py), so what the call made is frozen
        # rather than passed over once more when the collector resumes (1.9 s at 100,000 files).
        with collector_paused(paused):
            with repo:
                answer = ask(repo)
            if paused:
                gc.freeze()
        return answer
    except HybridMapError as exc:
        progress.clear()
        fail(str(exc), exit_code(exc))
    except Exception as exc:  # noqa: BLE001 - a bug or the machine (memory, disk): one line, exit 1, no traceback
        progress.clear()
        fail(f"no map could be made: {type(exc).__name__}: {exc}", EXIT_NO_MAP)
    finally:
        progress.clear()


def _on_warm_map(warm: WarmMaps, root: str, overrides: dict[str, Any], ask: Callable[[RepoMap], T]) -> T:
    """In the daemon: the request on its open map of ROOT."""
    try:
        return ask(warm.get(root, overrides))
    except HybridMapError as exc:
        fail(str(exc), exit_code(exc))
    except Exception as exc:  # noqa: BLE001 - as in-process: one line, exit 1
        fail(f"no map could be made: {type(exc).__name__}: {exc}", EXIT_NO_MAP)


def _answer_from_daemon(root: str, overrides: dict[str, Any], server_wait: float) -> None:
    """Print a daemon's answer to this command line and exit, when one gives it; else return
    (the call runs here, and may start a daemon for the next). Asking reads no settings: a
    running daemon shares the user's (they are part of its identity) and applies them."""
    ctx = click.get_current_context(silent=True)
    meta = ctx.find_root().meta if ctx is not None else {}
    argv = meta.get(ARGV_KEY)
    if argv is None or meta.get(STDIN_KEY):
        return
    from ..daemon.client import ask_to_run, start_if_wanted

    asked = ask_to_run(root, argv, server_wait, os.environ)
    if asked.reply is not None:
        sys.stdout.write(asked.reply.stdout)
        sys.stdout.flush()
        sys.stderr.write(asked.reply.stderr)
        sys.stderr.flush()
        sys.exit(asked.reply.exit_code)
    if asked.found:
        return  # one runs but did not take this call (busy, or told not to): run it here
    from ...settings import load_settings
    from ...workspace.walk import resolve_root

    try:
        settings = load_settings(resolve_root(root), overrides)
    except HybridMapError:
        return  # the call itself says what is wrong
    start_if_wanted(root, settings.daemon, settings.daemon_spawn_window_seconds, os.environ)
