"""Dead code checked by the language servers: ``textDocument/references`` on each candidate.

The name-matched pass (:mod:`.dead_code`) misses every use that is not written as a call,
import, base class, annotation or decorator of the name: a function handed over as a value
(``run(tools.helper)``, ``{"a": helper}``), called through an alias, or reached through a
re-export. In hybrid mode each of its candidates whose file has a READY server offering
``referencesProvider`` is asked about at its name (declaration included), at most
``dead_server_checks`` of them, ``lsp_concurrency`` at a time, all within
``dead_server_timeout``:

- the answer must list the definition itself (its name's line): a server that does not is not
  looking at that definition, and the candidate stays ``name-matched``;
- locations outside the repository's files (:class:`~.sources.lsp.lookup.RepositoryFiles`:
  outside the root, not ``file:`` URIs, ignored or excluded files) are dropped (never a use,
  never shown);
- a location inside the definition's own lines (the declaration, a recursive call) is no use;
- a use in a file that is not a test **refutes** the candidate: it is removed from the list and
  reported under ``refuted`` with the files using it;
- uses only in test files make it ``test-only``, none make it ``dead``, both with evidence
  ``resolved`` and provenance ``lsp:<server>``.

An error, a timeout, a file the server cannot be sent or a candidate beyond the bounds leaves
the name-matched verdict as it was, counted in a ``dead_server`` diagnostic.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import ServerError
from ..languages.paths import is_test_path
from ..model import Diagnostic, FileTags, Symbol
from ..settings import Settings
from ..workspace.state import Progress
from .dead_code import DeadCode, DeadDefinition

if TYPE_CHECKING:
    from ..sources.base import SourceView
    from ..sources.lsp.lookup import RepositoryFiles
    from ..sources.lsp.session import LspSession
    from ..sources.lsp.source import LspSource
    from ..workspace.state import Snapshot

USED_BY_SHOWN = 10
"""Files named in a refuted or test-only entry's ``used_by`` (the first, sorted)."""


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What one server said about one candidate; ``users`` None: nothing usable (``why``)."""

    users: frozenset[str] | None
    why: str = ""
    detail: str = ""
    """The server's own words, for an error."""


async def confirm_with_servers(
    found: DeadCode,
    tags: Mapping[str, FileTags],
    lsp: LspSource,
    snapshot: Snapshot,
    base: SourceView,
    wait: float,
    settings: Settings,
    progress: Progress | None = None,
) -> DeadCode:
    """``found`` with each candidate a ready server answered for marked ``resolved`` (or moved
    to ``refuted``); ``wait`` > 0 starts the servers and waits up to that long for them first."""
    from ..sources.lsp.lookup import RepositoryFiles, ready_sessions

    sessions = [s for s in await ready_sessions(lsp, snapshot, base, wait) if s.supports("references_provider")]
    if not sessions:
        return found
    usable = {id(s) for s in sessions}
    asks: list[tuple[int, LspSession, Symbol]] = []
    for i, entry in enumerate(found.definitions):
        session = lsp.pool.session_for(entry.path, snapshot.languages.get(entry.path, ""))
        symbol = _symbol_of(tags.get(entry.path), entry)
        if session is not None and id(session) in usable and symbol is not None:
            asks.append((i, session, symbol))
    beyond = asks[settings.dead_server_checks :]
    asks = asks[: settings.dead_server_checks]
    files = RepositoryFiles(snapshot.root, settings, snapshot)
    verdicts = await _ask_all(asks, found.definitions, lsp, files, settings, progress)
    notes = _notes(asks, verdicts, len(beyond), settings)
    return _apply(found, asks, verdicts, notes)


async def _ask_all(
    asks: Sequence[tuple[int, LspSession, Symbol]],
    definitions: Sequence[DeadDefinition],
    lsp: LspSource,
    files: RepositoryFiles,
    settings: Settings,
    progress: Progress | None = None,
) -> dict[int, _Verdict]:
    """Every question, ``lsp_concurrency`` at a time, within ``dead_server_timeout`` in all
    (``progress("references", answered, questions)`` as answers come)."""
    deadline = time.monotonic() + settings.dead_server_timeout
    gate = asyncio.Semaphore(settings.lsp_concurrency)
    answered = 0

    def told() -> None:
        nonlocal answered
        answered += 1
        if progress is not None:
            progress("references", answered, len(asks))

    async def one(index: int, session: LspSession, symbol: Symbol) -> tuple[int, _Verdict]:
        async with gate:
            left = deadline - time.monotonic()
            if left <= 0:
                return index, _Verdict(None, "timeout")
            entry = definitions[index]
            try:
                return index, await _ask(session, lsp, files, entry.path, symbol, min(left, session.config.timeout))
            finally:
                told()

    tasks = [asyncio.ensure_future(one(*ask)) for ask in asks]
    if not tasks:
        return {}
    done, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return dict(task.result() for task in done if not task.cancelled() and task.exception() is None)


async def _ask(
    session: LspSession, lsp: LspSource, files: RepositoryFiles, path: str, symbol: Symbol, timeout: float
) -> _Verdict:
    from ..sources.lsp.lookup import references

    try:
        found = await references(session, lsp.documents, path, symbol.name_line, symbol.name_col, timeout)
    except TimeoutError:
        return _Verdict(None, "timeout")
    except ServerError as exc:
        return _Verdict(None, "timeout" if "timed out" in str(exc) else "error", str(exc)[:200])
    if found is None:
        return _Verdict(None, "unsendable")
    users: set[str] = set()
    declared = False
    for location in found:
        rel = files.path(location.uri)
        if rel is None:
            continue  # outside the repository, or not a file: never a use we report
        if rel == path and symbol.span.start_line <= location.line <= symbol.span.end_line:
            declared = declared or location.line == symbol.name_line
            continue  # the definition itself, or a use inside it (recursion)
        users.add(rel)
    if not declared:
        return _Verdict(None, "unrecognised")
    return _Verdict(frozenset(users))


def _symbol_of(tags: FileTags | None, entry: DeadDefinition) -> Symbol | None:
    if tags is None:
        return None
    return next((s for s in tags.symbols if s.name == entry.name and s.name_line + 1 == entry.line), None)


_WHY = {
    "timeout": "timed out",
    "error": "failed",
    "unsendable": "could not be sent the file",
    "unrecognised": "did not list the definition itself among its references",
}


def _notes(
    asks: Sequence[tuple[int, LspSession, Symbol]], verdicts: Mapping[int, _Verdict], beyond: int, settings: Settings
) -> tuple[Diagnostic, ...]:
    """One diagnostic per server and reason a candidate stayed name-matched."""
    counts: Counter[tuple[str, str, str]] = Counter()
    last: dict[tuple[str, str, str], str] = {}
    for index, session, _ in asks:
        verdict = verdicts.get(index, _Verdict(None, "timeout"))
        if verdict.users is None:
            key = (session.language, session.config.name, verdict.why)
            counts[key] += 1
            last[key] = verdict.detail or last.get(key, "")
    notes = []
    for (language, name, why), n in sorted(counts.items()):
        said = f"{name} {_WHY.get(why, why)} for {n} candidate(s)"
        if why == "timeout":
            said += f" (dead_server_timeout = {settings.dead_server_timeout:g}s)"
        elif last[(language, name, why)]:
            said += f" (last: {last[(language, name, why)]})"
        notes.append(Diagnostic(language, "dead_server", said + ": they stay name-matched"))
    if beyond:
        notes.append(
            Diagnostic(
                ".",
                "dead_server",
                f"dead_server_checks = {settings.dead_server_checks}: {beyond} more candidate(s) stay name-matched",
            )
        )
    return tuple(notes)


def _apply(
    found: DeadCode,
    asks: Sequence[tuple[int, LspSession, Symbol]],
    verdicts: Mapping[int, _Verdict],
    notes: tuple[Diagnostic, ...],
) -> DeadCode:
    servers = {index: session.config.name for index, session, _ in asks}
    kept: list[DeadDefinition] = []
    refuted: list[DeadDefinition] = []
    for i, entry in enumerate(found.definitions):
        verdict = verdicts.get(i)
        if verdict is None or verdict.users is None:
            kept.append(entry)
            continue
        marked = replace(entry, evidence="resolved", provenance=f"lsp:{servers[i]}")
        users = sorted(verdict.users)
        if any(not is_test_path(p) for p in users):
            shown = tuple([p for p in users if not is_test_path(p)][:USED_BY_SHOWN])
            refuted.append(replace(marked, status="used", used_by=shown))
        elif users:
            kept.append(replace(marked, status="test-only", used_by=tuple(users[:USED_BY_SHOWN])))
        else:
            kept.append(replace(marked, status="dead", used_by=()))
    return replace(
        found,
        definitions=tuple(kept),
        refuted=tuple(refuted),
        asked=len(asks),
        diagnostics=(*found.diagnostics, *notes),
    )
