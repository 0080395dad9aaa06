"""One server per (language, root), started lazily, restarted with backoff, closed together.

The pool decides *which* server a language gets: the first candidate (in the
config's order of preference) that is trusted, whose required root patterns
exist, and whose command is installed. A candidate that is missing is
skipped for the next; one that crashes is restarted after a growing delay, up
to ``server_max_restarts`` times, then reported failed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...languages import LanguageRegistry
from ...model import ServerReport, ServerState
from ...settings import Settings
from .config import ServerConfig, merge_candidates, root_pattern_problem, servers_for_language

if TYPE_CHECKING:
    from .session import LspSession


@dataclass
class _Slot:
    """Everything the pool knows about one language's server."""

    language: str
    candidates: tuple[ServerConfig, ...]
    session: LspSession | None = None
    chosen: ServerConfig | None = None
    restarts: int = 0
    skipped: list[str] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    starting: asyncio.Task[None] | None = None


class ServerPool:
    def __init__(
        self, registry: LanguageRegistry, root: Path, settings: Settings, environ: Mapping[str, str] | None = None
    ) -> None:
        self._registry = registry
        self._root = root
        self._settings = settings
        self._environ = environ
        self._slots: dict[str, _Slot] = {}
        self._closed = False
        self.config_problems: dict[str, str] = {}
        """Language → why the repository's own server config for it was ignored."""

    def candidates(self, language: str) -> tuple[ServerConfig, ...]:
        lang = self._registry.get(language)
        builtin = servers_for_language(lang.raw, lang.config_path, trusted=True)
        repo_file = self._root / ".hybridmap" / "lsp_configs" / f"{language}.toml"
        if repo_file.is_file():
            import tomllib

            try:
                with repo_file.open("rb") as fh:
                    raw = tomllib.load(fh)
                repo = servers_for_language(raw, repo_file, trusted=self._settings.trust_repository_servers)
            except (ConfigError, OSError, ValueError, RecursionError) as exc:
                # A broken repository file must not break the map; it is ignored, and said so.
                self.config_problems[language] = f"repository config ignored: {exc}"[:500]
                repo = ()
            return merge_candidates(builtin, repo)
        return builtin

    def root_patterns_ok(self, config: ServerConfig) -> bool:
        return root_patterns_present(self._root, config.required_root_patterns)

    def languages_with_servers(self, languages: set[str]) -> list[str]:
        return sorted(lang for lang in languages if self.candidates(lang))

    def _slot(self, language: str) -> _Slot:
        slot = self._slots.get(language)
        if slot is None:
            slot = self._slots[language] = _Slot(language, self.candidates(language))
        return slot

    def ensure_started(self, language: str, warm_file: Callable[[LspSession], None] | None = None) -> None:
        """Start (or restart) the language's server in the background; never waits.

        ``warm_file(session)`` opens a file right after initialize: some servers
        (tsserver) only load the project, and report progress, once a file is open.
        """
        if self._closed:
            return
        slot = self._slot(language)
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
                if not self.root_patterns_ok(config):
                    slot.skipped.append(f"{config.name}: none of {list(config.required_root_patterns)} in root")
                    continue
                from .session import LspSession, command_problem, find_command  # pygls: only now

                if find_command(config.command, environ=self._environ) is None:
                    slot.skipped.append(
                        f"{config.name}: {command_problem(config.command)}"
                        + (f" ({config.install})" if config.install else "")
                    )
                    continue
                shared = self._live_session_named(config.name)
                if shared is not None:  # one tsserver for ts/tsx/js, one clangd for c/cpp
                    slot.session, slot.chosen = shared, config
                    return
                session = LspSession(
                    config,
                    slot.language,
                    self._root,
                    environ=self._environ,
                    memory_limit_mb=self._settings.server_memory_limit_mb,
                    settings=self._settings,
                )
                slot.session, slot.chosen = session, config
                await session.start()
                if warm_file is not None and session.alive:
                    warm_file(session)
                return
            slot.session, slot.chosen = None, None

    def _live_session_named(self, name: str) -> LspSession | None:
        for other in self._slots.values():
            if other.session is not None and other.session.alive and other.session.config.name == name:
                return other.session
        return None

    def session(self, language: str) -> LspSession | None:
        slot = self._slots.get(language)
        return slot.session if slot is not None else None

    async def wait_started(self, languages: list[str]) -> None:
        """Wait until each language's start attempt is over (initialized, missing or failed)."""
        for language in languages:
            await _start_over(self._slot(language).starting, None)

    async def wait_ready(self, languages: list[str], timeout: float) -> None:
        """Wait until each language's server is ready, failed or missing, or ``timeout``."""
        deadline = time.monotonic() + timeout
        for language in languages:
            slot = self._slot(language)
            if not await _start_over(slot.starting, max(0.0, deadline - time.monotonic())):
                continue
            if slot.session is not None and not self._closed:
                await slot.session.wait_ready(max(0.0, deadline - time.monotonic()))

    def report(self, language: str) -> ServerReport:
        report = self._report(language)
        problem = self.config_problems.get(language)
        if problem:
            return ServerReport(
                report.state,
                report.server,
                report.seconds_to_ready,
                "; ".join(p for p in (report.detail, problem) if p),
            )
        return report

    def _report(self, language: str) -> ServerReport:
        slot = self._slots.get(language)
        if slot is None:
            return ServerReport(ServerState.DISABLED, None, None, "not started")
        session = slot.session
        if session is None:
            if slot.starting is not None and not slot.starting.done():
                return ServerReport(ServerState.STARTING, None, None, "starting")
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
        return ServerReport(session.state, session.config.name, session.seconds_to_ready(), detail or session.version)

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
        await asyncio.gather(*(s.aclose() for s in self.sessions()), return_exceptions=True)


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
