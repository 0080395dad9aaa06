"""One server per (language, project root), started lazily, a bounded number alive at once.

The pool decides *which* server a language gets: the first candidate (in the
config's order of preference) that is trusted, whose required root patterns
exist in the project root, and whose command is installed. A candidate that is
missing is skipped for the next; one that crashes is restarted after a growing
delay, up to ``server_max_restarts`` times, then reported failed.

*Where* it runs is the file's project root (``roots.py``: the nearest ``go.mod``,
``package.json``, ``pyproject.toml``... upwards, bounded by the repository root):
a monorepo gets one server per project, each seeing its project as its tool
expects. Languages naming the same server share its process per root (one
tsserver for ts/tsx/js, one clangd for c/cpp). At most ``lsp_max_servers``
processes run at once: :meth:`ServerPool.select` keeps the roots a map needs most
(its focus files' first, then those already running, then the largest), and a
start beyond the bound shuts down the least recently used server no map needs
now (its whole process tree, as ``aclose`` does); roots left out wait, and say so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...languages.notebooks import is_notebook
from ...languages.registry import LanguageRegistry
from ...model import Diagnostic, ServerReport, ServerState
from ...settings import Settings
from .config import ServerConfig, merge_candidates, root_markers, root_pattern_problem, servers_for_language
from .confinement import kernel_support, unsandboxed_refusal
from .launch import server_install_hint
from .roots import ProjectRoots, RootMarkers, groups

if TYPE_CHECKING:
    from .session import LspSession

Key = tuple[str, str]
"""(language, project root relative to the repository root; "" is the repository root)."""


@dataclass
class _Slot:
    """Everything the pool knows about one language's server in one project root."""

    language: str
    root: str
    candidates: tuple[ServerConfig, ...]
    session: LspSession | None = None
    chosen: ServerConfig | None = None
    restarts: int = 0
    skipped: list[str] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    starting: asyncio.Task[None] | None = None
    used: float = 0.0
    """When a map or a job last needed this server (monotonic): the least recently used one
    is shut down first when ``lsp_max_servers`` are running."""
    note: str = ""
    """Why no server runs here although none failed: stopped or held back by the bound."""


def server_name(slot: _Slot) -> str:
    """The server a slot runs, or would run: its chosen one, else its first trusted candidate."""
    if slot.chosen is not None:
        return slot.chosen.name
    return next((c.name for c in slot.candidates if c.trusted), slot.language)


class ServerReports:
    """What the pool says about its servers: one report per language, summarising its
    project roots, and diagnostics for the roots a summary cannot name. It reads the pool's
    slots, the roots the last assignment found and the config problems, as the pool keeps them."""

    def __init__(
        self, slots: Mapping[Key, _Slot], present: Mapping[Key, int], config_problems: Mapping[str, str]
    ) -> None:
        self._slots = slots
        self._present = present
        self._config_problems = config_problems

    def report(self, language: str) -> ServerReport:
        report = self._language_report(language)
        problem = self._config_problems.get(language)
        if problem:
            return ServerReport(
                report.state,
                report.server,
                report.seconds_to_ready,
                "; ".join(p for p in (report.detail, problem) if p),
            )
        return report

    def root_reports(self, language: str) -> dict[str, ServerReport]:
        """Project root -> its server's report, for the roots the last :meth:`ServerPool.assign`
        found (the repository root alone before any)."""
        roots = sorted(root for lang, root in self._present if lang == language)
        if not roots:
            roots = [""] if (language, "") in self._slots else []
        return {root: _slot_report(self._slots.get((language, root))) for root in roots}

    def _language_report(self, language: str) -> ServerReport:
        per_root = self.root_reports(language)
        if not per_root:
            return ServerReport(ServerState.DISABLED, None, None, "not started")
        if list(per_root) == [""]:
            return per_root[""]  # one project: the report it always had
        return summarise(per_root)

    def root_diagnostics(self) -> list[Diagnostic]:
        """What a language's one report cannot say as a diagnostic: a project root whose server
        failed or is missing while another root's works, and every root held back or shut down
        by ``lsp_max_servers`` (``server_limit``)."""
        out: list[Diagnostic] = []
        for language in sorted({lang for lang, _ in self._present}):
            per_root = self.root_reports(language)
            overall = self.report(language).state
            for root, report in per_root.items():
                slot = self._slots.get((language, root))
                where = f"project root {root or '.'}"
                if slot is not None and slot.note and report.state is ServerState.DISABLED:
                    name = server_name(slot)
                    out.append(Diagnostic(language, "server_limit", f"{name} for {where}: {report.detail}"))
                elif report.state in _DEGRADED and overall not in _DEGRADED:
                    out.append(Diagnostic(language, f"server_{report.state}", f"{where}: {report.detail}"))
        return out


class ServerPool:
    def __init__(
        self, registry: LanguageRegistry, root: Path, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> None:
        self._registry = registry
        self._root = root
        self._settings = settings
        self._environ = environ
        self._slots: dict[Key, _Slot] = {}
        self._closed = False
        self._candidates: dict[str, tuple[ServerConfig, ...]] = {}
        self._installed_commands: dict[str, bool] = {}
        self._markers: dict[str, RootMarkers] = {}
        self.roots = ProjectRoots(root, settings.stat_racy_seconds)
        self._root_of: dict[str, str] = {}
        self._language_of: Mapping[str, str] = {}
        """Path -> its project root, as of the last :meth:`assign`."""
        self._present: dict[Key, int] = {}
        """(language, root) -> how many files, as of the last :meth:`assign`: what reports cover."""
        self._selected: set[Key] = set()
        """The roots whose servers should run now: never shut down to make room."""
        self._stopping: set[asyncio.Task[None]] = set()
        self.stopped = 0
        """Servers shut down to stay within ``lsp_max_servers``."""
        self.config_problems: dict[str, str] = {}
        """Language → why the repository's own server config (or its root markers) was ignored."""
        self.reports = ServerReports(self._slots, self._present, self.config_problems)
        """What the pool says about its servers (reads the three above, kept in place)."""

    def candidates(self, language: str) -> tuple[ServerConfig, ...]:
        cached = self._candidates.get(language)
        if cached is None:
            lang = self._registry.get(language)
            trust = self._settings.trust_repository_servers
            cached, problem = load_candidates(lang.raw, lang.config_path, self._root, language, trust)
            self._candidates[language] = cached
            if problem:
                self.config_problems[language] = problem
        return cached

    def markers(self, language: str) -> RootMarkers:
        """The language's root markers (none: every file's root is the repository root)."""
        markers = self._markers.get(language)
        if markers is None:
            lang = self._registry.get(language)
            try:
                markers = root_markers(lang.raw, lang.config_path)
            except ConfigError as exc:
                self.config_problems[language] = f"root markers ignored: {exc}"[:500]
                markers = RootMarkers()
            self._markers[language] = markers
        return markers

    def root_patterns_ok(self, config: ServerConfig, root: str = "") -> bool:
        return root_patterns_present(self._root / root if root else self._root, config.required_root_patterns)

    def languages_with_servers(self, languages: set[str]) -> list[str]:
        return sorted(lang for lang in languages if self.candidates(lang))

    # --- project roots --------------------------------------------------------------------

    def assign(self, languages: Mapping[str, str]) -> dict[Key, list[str]]:
        """Give each file (``path -> language``) of a language with servers its project root;
        returns the files of each (language, root)."""
        served = set(self.languages_with_servers(set(languages.values())))
        # Notebooks stay with tree-sitter: a server would read the .ipynb's JSON, not its cells.
        mine = {p: lang for p, lang in languages.items() if lang in served and not is_notebook(p)}
        self._root_of = self.roots.assign((p, self.markers(lang)) for p, lang in mine.items())
        self._language_of = mine
        found = groups(self._root_of, mine)
        self._present.clear()  # in place: the reports read this dict
        self._present.update({key: len(paths) for key, paths in found.items()})
        return found

    def root_of(self, path: str) -> str:
        return self._root_of.get(path, "")

    def select(self, found: Mapping[Key, Sequence[str]], focus: Sequence[str] = ()) -> list[Key]:
        """The (language, root) servers to run now, most needed first, within ``lsp_max_servers``
        processes: the focus files' roots, then roots already running (no churn), then the
        largest. The others are held back (their reports say so) until a map needs them."""
        order: dict[Key, None] = {}
        for path in focus:
            key = (self._language_of.get(path, ""), self._root_of.get(path, ""))
            if key in found:
                order[key] = None
        running = [k for k in found if (slot := self._slots.get(k)) is not None and _running(slot)]
        order.update(dict.fromkeys(running))
        order.update(dict.fromkeys(sorted(found, key=lambda k: (-len(found[k]), k))))
        bound = self._settings.lsp_max_servers
        processes: set[tuple[str, str]] = set()
        selected: list[Key] = []
        for key in order:
            slot = self._slot(*key)
            process = (server_name(slot), key[1])  # languages sharing a server share it
            if process not in processes and len(processes) >= bound:
                if not _running(slot):
                    slot.note = f"waiting: lsp_max_servers = {bound} servers run for roots needed more"
                continue
            installed = any_installed(slot.candidates, self._installed_commands, self._environ)
            if _slot_report(slot).state not in (ServerState.MISSING, ServerState.UNTRUSTED) and installed:
                processes.add(process)  # a server that cannot start takes no place
            selected.append(key)
        self._selected = set(selected)
        return selected

    # --- starting ---------------------------------------------------------------------------

    def _slot(self, language: str, root: str = "") -> _Slot:
        slot = self._slots.get((language, root))
        if slot is None:
            slot = self._slots[(language, root)] = _Slot(language, root, self.candidates(language))
        return slot

    def ensure_started(
        self, language: str, warm_file: Callable[[LspSession], None] | None = None, root: str = ""
    ) -> None:
        """Start (or restart) the server of ``language`` in project ``root`` in the background;
        never waits.

        ``warm_file(session)`` opens a file right after initialize: some servers
        (tsserver) only load the project, and report progress, once a file is open.
        """
        if self._closed:
            return
        slot = self._slot(language, root)
        slot.used = time.monotonic()
        self._selected.add((language, root))  # asked for: not shut down to make room for another
        if slot.starting is not None and not slot.starting.done():
            return
        session = slot.session
        if session is not None and session.alive:
            return
        if session is not None and session.state is ServerState.FAILED:
            # Back off from the failure, whenever it happened: at start, mid-request, or by a watchdog.
            failed_at = session.failed_at if session.failed_at is not None else 0.0
            retry_at = failed_at + self._settings.server_restart_backoff * 2**slot.restarts
            if slot.restarts >= self._settings.server_max_restarts or time.monotonic() < retry_at:
                return
        slot.starting = asyncio.create_task(self._start(slot, warm_file))

    async def _start(self, slot: _Slot, warm_file: Callable[[LspSession], None] | None = None) -> None:
        await asyncio.to_thread(_prepare_client)
        async with slot.lock:
            if self._closed:
                return
            if slot.session is not None:
                if slot.session.alive:
                    return
                if slot.session.state is ServerState.FAILED:
                    await slot.session.aclose()
                    slot.restarts += 1
            slot.skipped = []
            for config in slot.candidates:
                if not config.trusted:
                    slot.skipped.append(
                        f"{config.name}: untrusted (repository config; opt in with trust_repository_servers)"
                    )
                    continue
                if config.runs_repository_code and not self._settings.allow_servers_running_repository_code:
                    slot.skipped.append(f"{config.name}: {RUNS_REPOSITORY_CODE}")
                    continue
                refusal = unsandboxed_refusal(config, self._settings, kernel_support(self._settings))
                if refusal:
                    slot.skipped.append(f"{config.name}: {refusal}")
                    continue
                if not self.root_patterns_ok(config, slot.root):
                    where = f"project root {slot.root}" if slot.root else "root"
                    slot.skipped.append(f"{config.name}: none of {list(config.required_root_patterns)} in {where}")
                    continue
                from .session import LspSession, command_problem, find_command  # imported by _prepare_client

                if find_command(config.command, environ=self._environ) is None:
                    slot.skipped.append(
                        f"{config.name}: {command_problem(config.command)}"
                        + (f" ({server_install_hint(config)})" if config.install else "")
                    )
                    continue
                shared = self._live_session_named(config.name, slot.root)
                if shared is not None:  # one tsserver for ts/tsx/js, one clangd for c/cpp
                    slot.session, slot.chosen, slot.note = shared, config, ""
                    return
                # From the room check to the session's registration nothing awaits, so starts
                # running side by side never both take the last place.
                if not self._make_room():
                    slot.session, slot.chosen = None, None
                    slot.note = f"waiting: lsp_max_servers = {self._settings.lsp_max_servers} servers are needed more"
                    return
                session = LspSession(
                    config,
                    slot.language,
                    self._root / slot.root if slot.root else self._root,
                    environ=self._environ,
                    memory_limit_mb=self._settings.server_memory_limit_mb,
                    settings=self._settings,
                    repository=self._root,
                )
                slot.session, slot.chosen, slot.note = session, config, ""
                await session.start()
                if warm_file is not None and session.alive:
                    warm_file(session)
                return
            slot.session, slot.chosen = None, None

    def _live_session_named(self, name: str, root: str) -> LspSession | None:
        for other in self._slots.values():
            session = other.session
            if other.root == root and session is not None and session.alive and session.config.name == name:
                return session
        return None

    def _make_room(self) -> bool:
        """Below ``lsp_max_servers`` live servers, or made so by shutting down the least
        recently used one no selected root needs; False when every one is needed."""
        alive = [s for s in self.sessions() if s.alive]
        if len(alive) < self._settings.lsp_max_servers:
            return True
        users: dict[int, list[_Slot]] = {}
        for slot in self._slots.values():
            if slot.session is not None:
                users.setdefault(id(slot.session), []).append(slot)
        spare = [s for s in alive if not any((u.language, u.root) in self._selected for u in users[id(s)])]
        if not spare:
            return False
        victim = min(spare, key=lambda s: max(u.used for u in users[id(s)]))
        self._stop(victim, users[id(victim)])
        return True

    def _stop(self, session: LspSession, slots: list[_Slot]) -> None:
        """Shut ``session`` down for room: its slots forget it at once (nothing asks it again),
        the process tree goes in the background (``aclose`` waits for that too)."""
        bound = self._settings.lsp_max_servers
        for slot in slots:
            slot.session, slot.chosen = None, None
            slot.note = f"stopped: lsp_max_servers = {bound} servers were running; starts again when a map needs it"
        self.stopped += 1
        task = asyncio.get_running_loop().create_task(session.aclose())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    # --- reading ------------------------------------------------------------------------------

    def session(self, language: str, root: str = "") -> LspSession | None:
        slot = self._slots.get((language, root))
        return slot.session if slot is not None else None

    def session_for(self, path: str, language: str) -> LspSession | None:
        """The server that answers for ``path`` (its language's, in its project root; a notebook's: none)."""
        slot = None if is_notebook(path) else self._slots.get((language, self._root_of.get(path, "")))
        if slot is not None:
            slot.used = time.monotonic()
        return slot.session if slot is not None else None

    def _language_slots(self, languages: Sequence[str]) -> list[_Slot]:
        wanted = set(languages)
        return [slot for slot in self._slots.values() if slot.language in wanted]

    async def wait_started(self, languages: list[str]) -> None:
        """Wait until each start attempt of these languages is over (initialized, missing or failed)."""
        for slot in self._language_slots(languages):
            await _start_over(slot.starting, None)

    def readiness(self, languages: list[str], timeout: float) -> set[asyncio.Task[None]]:
        """One task per server of these languages, done when that server is ready, failed or
        missing, or at ``timeout``: a caller can start using each as it comes, not only when the
        slowest (a server that never answers initialize) is done."""
        deadline = time.monotonic() + timeout

        async def one(slot: _Slot) -> None:
            if not await _start_over(slot.starting, max(0.0, deadline - time.monotonic())):
                return
            if slot.session is not None and not self._closed:
                await slot.session.wait_ready(max(0.0, deadline - time.monotonic()))

        return {asyncio.ensure_future(one(slot)) for slot in self._language_slots(languages)}

    async def wait_ready(self, languages: list[str], timeout: float) -> None:
        """Wait until each server of these languages is ready, failed or missing, or ``timeout``."""
        waiting = self.readiness(languages, timeout)
        if waiting:
            await asyncio.wait(waiting)  # each is bounded by the same deadline

    def sessions(self) -> list[LspSession]:
        unique: dict[int, LspSession] = {}
        for slot in self._slots.values():
            if slot.session is not None:
                unique[id(slot.session)] = slot.session
        return list(unique.values())

    async def aclose(self) -> None:
        """Stop every server now. A start still under way (a server that has not answered
        initialize) is cancelled, not waited for: its process is killed with the rest."""
        self._closed = True
        starting = [
            slot.starting for slot in self._slots.values() if slot.starting is not None and not slot.starting.done()
        ]
        for task in starting:
            task.cancel()
        await asyncio.gather(*starting, return_exceptions=True)
        await asyncio.gather(*(s.aclose() for s in self.sessions()), *self._stopping, return_exceptions=True)


#: Why a server that would execute the repository's code was not started (said on the map).
RUNS_REPOSITORY_CODE = (
    "untrusted: it would run code the repository ships; opt in with allow_servers_running_repository_code"
)


def _slot_report(slot: _Slot | None) -> ServerReport:
    """One project root's server, as a report."""
    if slot is None:
        return ServerReport(ServerState.DISABLED, None, None, "not started")
    session = slot.session
    if session is None:
        if slot.starting is not None and not slot.starting.done():
            return ServerReport(ServerState.STARTING, None, None, "starting")
        if slot.note:
            return ServerReport(ServerState.DISABLED, None, None, slot.note)
        if not slot.skipped and slot.starting is None:
            return ServerReport(ServerState.DISABLED, None, None, "not started")
        untrusted = slot.skipped and all("untrusted" in s for s in slot.skipped)
        state = ServerState.UNTRUSTED if untrusted else ServerState.MISSING
        return ServerReport(state, None, None, "; ".join(slot.skipped) or "no server configured")
    detail = session.detail
    if session.alive:  # its version, and any trouble it is having (timeouts, bad messages)
        detail = "; ".join(part for part in (session.version, session.health()) if part)
    elif detail and not detail.startswith(f"{session.config.name}:"):
        detail = f"{session.config.name}: {detail}"  # a diagnostic carries only this text
    if slot.restarts:
        detail = f"{detail} (restarted {slot.restarts}x)".strip()
    # A repository server skipped for trust is worth saying even when another one serves.
    passed_over = [s for s in slot.skipped if "untrusted" in s]
    if passed_over:
        detail = "; ".join([detail, *passed_over]) if detail else "; ".join(passed_over)
    state = session.reported_state
    return ServerReport(state, session.config.name, session.seconds_to_ready(), detail or session.version)


def load_candidates(
    raw: Mapping[str, Any], source: Path, root: Path, language: str, trust: bool
) -> tuple[tuple[ServerConfig, ...], str]:
    """A language's server candidates: the built-in/user ones, then the repository's own
    ``.hybridmap/lsp_configs/<language>.toml`` (trusted only with ``trust``); and why the
    repository's file was ignored ("" when it was not)."""
    builtin = servers_for_language(raw, source, trusted=True)
    repo_file = root / ".hybridmap" / "lsp_configs" / f"{language}.toml"
    if not repo_file.is_file():
        return builtin, ""
    import tomllib

    try:
        with repo_file.open("rb") as fh:
            data = tomllib.load(fh)
        repo = servers_for_language(data, repo_file, trusted=trust)
    except (ConfigError, OSError, ValueError, RecursionError) as exc:
        # A broken repository file must not break the map; it is ignored, and said so.
        return builtin, f"repository config ignored: {exc}"[:500]
    return merge_candidates(builtin, repo), ""


def _running(slot: _Slot) -> bool:
    return slot.session is not None and slot.session.alive


#: States a map says as a diagnostic (the pipeline does for a language's report).
_DEGRADED = (ServerState.FAILED, ServerState.MISSING, ServerState.UNTRUSTED)

#: A language's state over its roots: the best one any root reached.
_STATE_ORDER = (
    ServerState.READY,
    ServerState.DEGRADED,
    ServerState.INDEXING,
    ServerState.STARTING,
    ServerState.FAILED,
    ServerState.MISSING,
    ServerState.UNTRUSTED,
    ServerState.DISABLED,
)


def summarise(per_root: Mapping[str, ServerReport]) -> ServerReport:
    """One language's report over its project roots: the best state any root reached (a map
    uses each root's server for that root's files), the servers' names, the slowest ready
    time, and what each root's server is doing (first ones named, the rest counted)."""
    best = min(per_root.values(), key=lambda r: _STATE_ORDER.index(r.state))
    counts: dict[ServerState, int] = {}
    for report in per_root.values():
        counts[report.state] = counts.get(report.state, 0) + 1
    tally = ", ".join(f"{n} {state}" for state, n in sorted(counts.items(), key=lambda i: _STATE_ORDER.index(i[0])))
    shown = list(per_root.items())[:MAX_ROOTS_SHOWN]
    parts = [f"{root or '.'}: {r.state}" + (f" ({r.detail})" if r.detail else "") for root, r in shown]
    if len(per_root) > len(shown):
        parts.append(f"... and {len(per_root) - len(shown)} more")
    names = sorted({r.server for r in per_root.values() if r.server})
    ready = [r.seconds_to_ready for r in per_root.values() if r.seconds_to_ready is not None]
    detail = f"{len(per_root)} project roots ({tally}): " + "; ".join(parts)
    return ServerReport(best.state, ", ".join(names) or None, max(ready) if ready else None, detail)


MAX_ROOTS_SHOWN = 8
"""Roots named one by one in a language's report; the rest are counted."""


async def _start_over(task: asyncio.Task[None] | None, timeout: float | None) -> bool:
    """Wait for a start attempt; False on timeout. A start cancelled by ``aclose`` is over too:
    a map waiting on it goes on (degraded) instead of receiving the start's CancelledError."""
    if task is None:
        return True
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout)
    except TimeoutError:
        return False
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if not task.cancelled() or (current is not None and current.cancelling()):
            raise  # we are the one being cancelled
    return True


def any_installed(
    candidates: Sequence[ServerConfig], known: dict[str, bool], environ: Mapping[str, str] | None
) -> bool:
    """Whether one of ``candidates`` is installed (``known``: the answer per command so far, a
    few stats each). Before its first start a slot whose servers are all missing reads as "not
    started", and took a place of ``lsp_max_servers`` another language's installed server then
    waited for."""
    from .launch import find_command

    for config in candidates:
        if config.command not in known:
            known[config.command] = find_command(config.command, environ=environ) is not None
        if known[config.command]:
            return True
    return False


def _prepare_client() -> None:
    """Import the LSP client (pygls, lsprotocol: ~0.5 s) and generate its converters, in a worker
    thread: done on the event loop at the first server start, it stalled the caller's loop ~0.8 s.
    Only a map that starts a server pays it; later calls find it done (``prepare_codec`` runs
    once per process, whatever threads ask)."""
    from . import session  # noqa: F401 - the import is the point
    from .pygls_adapter import prepare_codec

    prepare_codec()


def root_patterns_present(root: Path, patterns: tuple[str, ...]) -> bool:
    """Does one of ``patterns`` (relative globs, checked by the config parser) match in ``root``?"""
    if not patterns:
        return True
    for pattern in patterns:
        if root_pattern_problem(pattern):
            continue  # never glob outside the root, whatever built the config
        try:
            if any(root.glob(pattern)):
                return True
        except (OSError, ValueError, NotImplementedError):
            continue
    return False
