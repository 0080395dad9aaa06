"""``hybridmap eval``: replay a repository's history and score the maps. The orchestration.

For each selected commit (:mod:`.history`), newest first: check its parent out
in the scratch worktree (:mod:`.worktree`), index it with tree-sitter (one
long-lived index over the run: only files that changed between checkouts are
re-read), diff the commit (:mod:`.diffs`), build the tasks (:mod:`.tasks`),
ask every system (:mod:`.systems`, :mod:`.peer`) every task at every budget,
and score the answers (:mod:`.metrics`). :mod:`.report` renders the result.
"""

from __future__ import annotations

import asyncio
import re
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ... import __version__
from ...errors import ConfigError, HybridMapError, RequestError
from ...languages.registry import LanguageRegistry
from ...model import Mode
from ...pipeline.inputs.conversation import MessageIndex
from ...pipeline.pack.tokens import make_counter
from ...settings import Settings, load_settings, settings_from_mapping
from ...sources.base import SourceView
from ...sources.static_index import TreeSitterSource
from ...store.cache import Cache
from ...workspace.state import Workspace
from .bm25_peer import Bm25Peer
from .definitions import parse_source
from .diffs import FileDiff, file_diff
from .git import GitError, Repository, open_repository, run_git
from .history import Commit, Selection, select_commits
from .peer import aider_version, find_aider_python, run_aider
from .report import CommitResult, EvalReport
from .systems import Request, SystemRun, requests_for, run_hybridmap
from .tasks import ALL_TASK_KINDS, TASK_KINDS, Task, TaskKind, build_tasks, diff_split
from .worktree import ScratchWorktree

ProgressCallback = Callable[[int, int, str], None]
MODES: tuple[Mode, ...] = ("static", "hybrid")
PEERS = ("aider", "bm25")


@dataclass(frozen=True, slots=True)
class Variant:
    """Settings overrides measured beside the defaults in the same run (``--variant``): each mode
    asked is also run with them, as the system ``mode[name]``, on the same checkouts and tasks."""

    name: str
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def system(self, mode: Mode) -> str:
        return f"{mode}[{self.name}]"


_VARIANT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def parse_variant(text: str) -> Variant:
    """``NAME:key=value,key=value`` (values as TOML scalars: ``2.5``, ``true``, ``"text"``; a bare
    word is a string), checked as settings now so a typo fails before the run, not after it."""
    name, sep, body = text.partition(":")
    if not sep or not _VARIANT_NAME.fullmatch(name):
        raise RequestError(f"--variant must be NAME:key=value,... with a short NAME, got '{text}'")
    overrides: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, eq, raw = part.partition("=")
        if not eq:
            raise RequestError(f"--variant {name}: '{part}' is not key=value")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        overrides[key.strip()] = value
    try:
        settings_from_mapping(overrides, f"--variant {name}")
    except ConfigError as exc:
        raise RequestError(str(exc)) from exc
    return Variant(name, overrides)


@dataclass(frozen=True, slots=True)
class EvalOptions:
    root: Path
    commits: int = 10
    budgets: tuple[int, ...] = (1024, 2048, 4096)
    modes: tuple[Mode, ...] = MODES
    peers: tuple[str, ...] = ()
    """Peers run on the same requests (``--peer aider,bm25``), in report order."""
    server_wait: float = 60.0
    rev: str = "HEAD"
    cache_dir: Path | None = None
    """Parse caches of this run (hybridmap's and the peer's); default: a temporary one, removed at the end."""
    aider_python: str | None = None
    peer_timeout: float = 1800.0
    """Seconds the peer may take on one checkout (all its maps) before it is stopped."""
    scan_limit: int = 5000
    """First-parent commits looked at, at most, to find ``commits`` qualifying ones."""
    temp_parent: Path | None = None
    """Where the scratch worktree's temporary directory is made (default: the system's)."""
    tasks: tuple[TaskKind, ...] = TASK_KINDS
    """The task kinds asked (``--tasks``)."""
    variants: tuple[Variant, ...] = ()
    """Settings variants run beside each mode's defaults (``--variant``)."""
    message_typos: bool = False
    """``message-text`` tasks read a misspelt message (``--message-typos``, :func:`.tasks.with_typos`)."""

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system of the run, in report order: each mode, then its variants, then the peers."""
        own = tuple(name for mode in self.modes for name in (mode, *(v.system(mode) for v in self.variants)))
        return own + self.peers

    def validate(self) -> None:
        if self.commits < 1:
            raise RequestError(f"--commits must be at least 1, got {self.commits}")
        if not self.budgets or any(b <= 0 for b in self.budgets):
            raise RequestError("--tokens must be a comma-separated list of positive budgets")
        if not self.modes and not self.peers:
            raise RequestError("nothing to evaluate: give --modes and/or --peer")
        for mode in self.modes:
            if mode not in MODES:
                raise RequestError(f"unknown mode '{mode}' (choose from {', '.join(MODES)})")
        for peer in self.peers:
            if peer not in PEERS:
                raise RequestError(f"unknown peer '{peer}' (choose from {', '.join(PEERS)})")
        if not self.tasks:
            raise RequestError("--tasks must name at least one task kind")
        for kind in self.tasks:
            if kind not in ALL_TASK_KINDS:
                raise RequestError(f"unknown task kind '{kind}' (choose from {', '.join(ALL_TASK_KINDS)})")
        if self.server_wait < 0:
            raise RequestError(f"--server-wait must be >= 0, got {self.server_wait}")
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise RequestError("--variant names must differ")


def _source_revision() -> str:
    """The hybridmap commit this run measured (with '+dirty' when its package has local changes)."""
    here = Path(__file__).resolve().parents[3]
    if not (here / ".git").exists():
        return ""
    sha = run_git(here, "rev-parse", "--short=10", "HEAD", check=False).strip()
    dirty = run_git(here, "status", "--porcelain", "--", "hybridmap", check=False).strip()
    return sha + ("+dirty" if sha and dirty else "")


def run_eval(options: EvalOptions, progress: ProgressCallback | None = None) -> EvalReport:
    """Run the whole evaluation. Raises :class:`HybridMapError` subclasses for bad input (one line)."""
    options.validate()
    started = time.perf_counter()
    aider_python = find_aider_python(options.aider_python) if "aider" in options.peers else None
    repo = open_repository(options.root.expanduser().resolve())
    registry = LanguageRegistry.load()
    selection = select_commits(
        repo,
        options.rev,
        options.commits,
        lambda path: registry.language_for(path) is not None,
        scan_limit=options.scan_limit,
    )
    versions: dict[str, object] = {"hybridmap": __version__, "hybridmap_revision": _source_revision()}
    with ScratchWorktree(repo, options.temp_parent) as worktree:
        if worktree.directory is None:  # set on entering the context
            raise RuntimeError("internal error: the scratch worktree has no directory")
        cache_dir = options.cache_dir or worktree.directory / "cache"
        unavailable: list[str] = []
        results = asyncio.run(
            _evaluate(
                *(options, repo, selection, worktree, registry, cache_dir, aider_python, versions, progress),
                unavailable,
            )
        )
    return EvalReport(
        str(options.root),
        selection,
        tuple(options.budgets),
        options.systems,
        tuple(options.tasks),
        options.server_wait,
        versions,
        tuple(results),
        time.perf_counter() - started,
        options.message_typos,
        tuple(unavailable),
    )


async def _evaluate(
    options: EvalOptions,
    repo: Repository,
    selection: Selection,
    worktree: ScratchWorktree,
    registry: LanguageRegistry,
    cache_dir: Path,
    aider_python: Path | None,
    versions: dict[str, object],
    progress: ProgressCallback | None,
    unavailable: list[str],
) -> list[CommitResult]:
    """Each selected commit's results; a commit whose parent cannot be checked out (a clone
    missing an object) is skipped, and said in ``unavailable``."""
    if aider_python is not None:
        versions["aider"] = await aider_version(aider_python)
    settings = load_settings(None, {"cache_dir": str(cache_dir / "hybridmap")})
    cache = Cache(settings.resolved_cache_dir(), settings.cache_size_limit)
    index = TreeSitterSource(registry, cache, settings)
    bm25 = Bm25Peer(settings, make_counter(settings.encoding, cache)) if "bm25" in options.peers else None
    workspaces: dict[Path, Workspace] = {}
    total = len(selection.commits)
    results: list[CommitResult] = []

    def report(done: int, label: str) -> None:
        if progress is not None:
            progress(done, total, label)

    try:
        for i, commit in enumerate(selection.commits):
            short = commit.sha[:8]
            report(i, f"{short} checkout")
            try:
                root = await asyncio.to_thread(worktree.checkout, commit.parent)
            except GitError as exc:
                unavailable.append(f"{short}: {exc}")
                continue
            t0 = time.perf_counter()
            collected = await asyncio.to_thread(_index, workspaces, index, root, settings, registry)
            index_seconds = time.perf_counter() - t0
            diffs = await asyncio.to_thread(_diffs, repo, commit)
            new_tags = {d.old_path: parse_source(registry, settings, d.new_path, d.new_source) for d in diffs}
            names = {s.name for tags in collected.tags.values() for s in tags.symbols}
            # The settings (user config included) decide how the message is read, as in a map.
            message_index = (
                MessageIndex(collected.tags.keys(), names, settings) if "message-text" in options.tasks else None
            )
            tasks = build_tasks(
                commit, diffs, collected.tags, new_tags, names, message_index, options.tasks, options.message_typos
            )
            requests = requests_for(tasks.tasks, options.budgets)
            # Diff tasks come last (build_tasks) and are asked once the first half of the change
            # is written into the checkout; the other tasks see the parent as it is.
            as_is = tuple(r for r in requests if tasks.tasks[r.task].kind != "diff")
            of_change = requests[len(as_is) :]
            systems = _Systems(options, cache_dir, aider_python, bm25, sorted(collected.tags), partial(report, i))
            runs = await systems.run(root, short, tasks.tasks, as_is)
            if of_change:
                await asyncio.to_thread(_write_first_half, root, diffs)
                runs = _joined(runs, await systems.run(root, short, tasks.tasks, of_change))
            results.append(CommitResult(commit, diffs, tasks, requests, runs, index_seconds))
        report(total, "done")
    finally:
        if bm25 is not None:
            bm25.close()
        cache.close()
    return results


@dataclass
class _Systems:
    """Every system of the run, asked one checkout's requests."""

    options: EvalOptions
    cache_dir: Path
    aider_python: Path | None
    bm25: Bm25Peer | None
    files: list[str]
    say: Callable[[str], None]

    async def run(
        self, root: Path, short: str, tasks: Sequence[Task], requests: Sequence[Request]
    ) -> dict[str, SystemRun]:
        options = self.options
        runs: dict[str, SystemRun] = {}
        if not requests:
            return runs
        for mode in options.modes:
            for system, overrides in ((mode, {}), *((v.system(mode), v.overrides) for v in options.variants)):
                self.say(f"{short} {system}")
                try:
                    runs[system] = await run_hybridmap(
                        root,
                        mode,
                        tasks,
                        requests,
                        server_wait=options.server_wait,
                        cache_dir=self.cache_dir / "hybridmap",
                        overrides=overrides,
                        system=system,
                    )
                except HybridMapError as exc:
                    runs[system] = SystemRun(system, (), 0.0, error=str(exc))
        if self.aider_python is not None:
            self.say(f"{short} aider")
            runs["aider"] = await run_aider(
                self.aider_python,
                root,
                self.files,
                tasks,
                requests,
                cache_dir=self.cache_dir / "aider-tags",
                timeout=options.peer_timeout,
            )
        if self.bm25 is not None:
            self.say(f"{short} bm25")
            runs["bm25"] = await asyncio.to_thread(self.bm25.run, root, self.files, tasks, requests)
        return runs


def _joined(first: Mapping[str, SystemRun], then: Mapping[str, SystemRun]) -> dict[str, SystemRun]:
    """Each system's runs of two request lists as one run of both (the first's counters kept)."""
    out = dict(first)
    for system, run in then.items():
        before = out.get(system)
        if before is None:
            out[system] = run
        elif before.error or run.error:
            out[system] = replace(before, outcomes=(), error=before.error or run.error)
        else:
            out[system] = replace(before, outcomes=before.outcomes + run.outcomes)
    return out


def _write_first_half(root: Path, diffs: Sequence[FileDiff]) -> None:
    """The scratch checkout with the first half of the commit's change made (:func:`diff_split`):
    each file's content in the commit written, a renamed file's old path removed."""
    made, _ = diff_split(diffs)
    for diff in made:
        target = root / diff.new_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(diff.new_source)
        if diff.new_path != diff.old_path:
            (root / diff.old_path).unlink(missing_ok=True)


def _diffs(repo: Repository, commit: Commit) -> tuple[FileDiff, ...]:
    return tuple(file_diff(repo, commit.parent, commit.sha, c.old_path, c.new_path) for c in commit.changes)


def parse_budgets(text: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise RequestError(f"--tokens must be a comma-separated list of integers, got '{text}'") from exc
    return budgets


def parse_names(text: str, allowed: Sequence[str], option: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    for name in names:
        if name not in allowed:
            raise RequestError(f"{option}: unknown value '{name}' (choose from {', '.join(allowed)})")
    return names


def _index(
    workspaces: dict[Path, Workspace],
    index: TreeSitterSource,
    root: Path,
    settings: Settings,
    registry: LanguageRegistry,
) -> SourceView:
    """The checkout's tree-sitter view; one workspace per checkout root, so an unchanged file
    between two commits is neither re-read nor re-parsed."""
    workspace = workspaces.get(root)
    if workspace is None:
        workspace = workspaces[root] = Workspace(root, settings, registry)
    snapshot, changes = workspace.refresh()
    return index.index(snapshot, changes)
