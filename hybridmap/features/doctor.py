"""``hybridmap servers ROOT``: which language servers a map of ROOT would use, and why not.

For every language present under ROOT (by file count), each configured
candidate in order of preference: where its config came from, whether it is
trusted, whether its required root patterns exist, whether its command is
installed (and where), and how to install it when it is not. With ``start``,
the server the map would choose is started for real through the same pool a
map uses, and its state, version and time to ready are reported.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..languages.registry import LanguageRegistry
from ..model import ServerReport, ServerState
from ..settings import Settings
from ..sources.lsp.config import ServerConfig
from ..sources.lsp.documents import Documents
from ..sources.lsp.launch import server_install_hint
from ..sources.lsp.pool import RUNS_REPOSITORY_CODE, ServerPool
from ..sources.lsp.session import LspSession, command_problem, find_command
from ..workspace.walk import head_reader, list_files


@dataclass(frozen=True, slots=True)
class CandidateCheck:
    name: str
    command: str
    source: str
    """The config file that declares it."""
    trusted: bool
    root_patterns_ok: bool
    executable: str | None
    """Absolute path of the command, or None when it is not installed."""
    problem: str
    """Why it cannot be used ("" when it can)."""
    install: str

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "command": self.command,
            "source": self.source,
            "trusted": self.trusted,
            "root_patterns_ok": self.root_patterns_ok,
            "executable": self.executable,
            "problem": self.problem,
            "install": self.install,
        }


@dataclass(frozen=True, slots=True)
class LanguageCheck:
    language: str
    files: int
    candidates: tuple[CandidateCheck, ...]
    chosen: str | None
    """The first usable candidate: what a map would start."""
    report: ServerReport | None
    """The chosen server's state after a real start (None when not started)."""
    config_problem: str = ""
    """Why the repository's own ``.hybridmap/lsp_configs`` file for this language was ignored."""

    def to_json(self) -> dict[str, object]:
        return {
            "language": self.language,
            "files": self.files,
            "chosen": self.chosen,
            "candidates": [c.to_json() for c in self.candidates],
            "report": self.report.to_json() if self.report is not None else None,
            "config_problem": self.config_problem,
        }


def _candidate(
    config: ServerConfig, patterns_ok: bool, settings: Settings, environ: Mapping[str, str] | None
) -> CandidateCheck:
    """One server of a language: found or not, and the first reason a map would not start it."""
    executable = find_command(config.command, environ=environ)
    problem = (
        "untrusted: a repository config; opt in with trust_repository_servers"
        if not config.trusted
        else RUNS_REPOSITORY_CODE
        if config.runs_repository_code and not settings.allow_servers_running_repository_code
        else f"none of {list(config.required_root_patterns)} in ROOT or a project root"
        if not patterns_ok
        else command_problem(config.command)
        if executable is None
        else ""
    )
    command = " ".join([config.command, *config.args])
    source = str(config.source or "")
    return CandidateCheck(
        config.name, command, source, config.trusted, patterns_ok, executable, problem, server_install_hint(config)
    )


async def check_servers(
    root: Path,
    registry: LanguageRegistry,
    settings: Settings,
    *,
    start: bool,
    wait: float,
    environ: Mapping[str, str] | None = None,
) -> list[LanguageCheck]:
    listing = await asyncio.to_thread(list_files, root, settings)
    head = head_reader(root)
    language_of = {p: lang for p in listing.paths if (lang := registry.language_for(p, head))}
    counts = Counter(language_of.values())
    pool = ServerPool(registry, root, settings, environ)
    documents = Documents(root, settings, registry.lsp_language_ids())
    checks: list[LanguageCheck] = []
    try:
        # Each file's project root, as a map gives it: a server's required root patterns are
        # checked in each root (Go modules in sub-directories each get their gopls), not in ROOT.
        found = pool.assign(language_of)
        languages = [lang for lang, _ in counts.most_common() if pool.candidates(lang)]
        for language in languages:
            roots = sorted({r for lang, r in found if lang == language}, key=lambda r: (-len(found[(language, r)]), r))
            # Each server's roots it can run in (its root patterns there), largest first.
            usable = {c.name: [r for r in roots if pool.root_patterns_ok(c, r)] for c in pool.candidates(language)}
            candidates = [
                _candidate(config, bool(usable[config.name]), settings, environ) for config in pool.candidates(language)
            ]
            chosen = next((c.name for c in candidates if not c.problem), None)
            if start and chosen is not None:
                # In the largest project root the chosen server can run in, one file open, as a
                # map does: tsserver loads the project (and reports readiness) only once a file is.
                where = usable[chosen][0]
                first = next(iter(found.get((language, where), ())), None)

                def open_first(session: LspSession, first: str | None = first) -> None:
                    if first is not None:
                        documents.ensure_open(session, first)

                pool.ensure_started(language, None if first is None else open_first, root=where)
            checks.append(
                LanguageCheck(
                    language, counts[language], tuple(candidates), chosen, None, pool.config_problems.get(language, "")
                )
            )
        if start:
            await pool.wait_ready([c.language for c in checks if c.chosen], wait)
            checks = [
                LanguageCheck(
                    c.language,
                    c.files,
                    c.candidates,
                    c.chosen,
                    pool.reports.report(c.language) if c.chosen else None,
                    c.config_problem,
                )
                for c in checks
            ]
    finally:
        await pool.aclose()
    return checks


def render_checks(checks: list[LanguageCheck]) -> str:
    if not checks:
        return "No language under ROOT has a language server configured: maps are static-only.\n"
    lines: list[str] = []
    for check in checks:
        lines.append(
            f"{check.language} ({check.files} files): "
            + (f"uses {check.chosen}" if check.chosen else "no usable server (static map only)")
        )
        for cand in check.candidates:
            mark = "✓" if not cand.problem else "✗"
            where = cand.executable or cand.command
            lines.append(f"  {mark} {cand.name}: {where}" + (f" — {cand.problem}" if cand.problem else ""))
            if cand.problem and cand.executable is None and cand.trusted and cand.install:
                lines.append(f"      install: {cand.install}")
        if check.config_problem:
            lines.append(f"  ✗ {check.config_problem}")
        report = check.report
        if report is not None:
            ready = f", ready in {report.seconds_to_ready:.2f}s" if report.seconds_to_ready is not None else ""
            state = "ready" if report.state is ServerState.READY else str(report.state)
            lines.append(f"  → started: {state}{ready}" + (f" ({report.detail})" if report.detail else ""))
    return "\n".join(lines) + "\n"
