"""Run hybridmap's own maps for every task of one checkout, in one mode.

A fresh :class:`AsyncRepoMap` per checkout and mode: in hybrid mode its servers
start on this checkout and see exactly its files (a server kept across
checkouts would hold a stale view of files it never re-read). Its first map
(no chat file, no mention, unmeasured for the scores) indexes the checkout
and, in hybrid mode, waits up to ``server_wait`` for the servers to become
ready *and* to resolve the ambiguous names; its time is ``first_map_seconds``.
The measured maps that follow use ``server_wait=0``, at the cost of one agent
turn: they use what the servers resolved within that wait (plus whatever a
resolution cut short by the wait finishes in the background meanwhile).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api.repo import AsyncRepoMap
from ...model import MapRequest, MapResult, Mode, ServerJson
from .metrics import MapOutcome, ShownFile
from .tasks import Task


@dataclass(frozen=True, slots=True)
class SystemRun:
    """One system's maps on one checkout: ``outcomes[i]`` answers ``requests[i]``."""

    system: str
    outcomes: tuple[MapOutcome, ...]
    first_map_seconds: float
    servers: dict[str, ServerJson] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True, slots=True)
class Request:
    task: int
    """Index into the commit's tasks."""
    budget: int


def requests_for(tasks: Sequence[Task], budgets: Sequence[int]) -> tuple[Request, ...]:
    return tuple(Request(i, b) for i in range(len(tasks)) for b in budgets)


def outcome_of(result: MapResult, seconds: float) -> MapOutcome:
    return MapOutcome(
        tuple(ShownFile(f.path, tuple(s.name for s in f.symbols)) for f in result.files), result.tokens, seconds
    )


_KEPT_STATS = ("files_listed", "graph_files", "graph_edges")


async def run_hybridmap(
    root: Path,
    mode: Mode,
    tasks: Sequence[Task],
    requests: Sequence[Request],
    *,
    server_wait: float,
    cache_dir: Path,
    overrides: Mapping[str, Any] | None = None,
    system: str = "",
) -> SystemRun:
    """``mode``'s maps of one checkout, with the settings ``overrides`` (a ``--variant``'s) on top
    of the user's; reported as ``system`` (default: the mode)."""
    hybrid = mode == "hybrid"
    settings = {**(overrides or {}), "cache_dir": str(cache_dir)}
    async with AsyncRepoMap(root, overrides=settings, start_servers=hybrid) as repo:
        t0 = time.perf_counter()
        first = await repo.map(
            MapRequest(
                tokens=requests[0].budget if requests else None, mode=mode, server_wait=server_wait if hybrid else 0.0
            )
        )
        first_seconds = time.perf_counter() - t0
        outcomes = []
        for request in requests:
            task = tasks[request.task]
            start = time.perf_counter()
            # message-text: the text itself, read by the map as an agent's call would have it read
            # (``message=``); the task's own reading of it (tasks.py) is what the report shows.
            text_task = task.kind == "message-text"
            # diff: the map of the change written on this checkout (its HEAD is the parent).
            of_change = task.kind == "diff"
            result = await repo.map(
                MapRequest(
                    chat_files=() if of_change else task.chat_files,
                    mentioned_idents=() if text_task else task.mentions,
                    tokens=request.budget,
                    mode=mode,
                    server_wait=0.0,
                    message=task.text if text_task else "",
                    diff="HEAD" if of_change else None,
                )
            )
            outcomes.append(outcome_of(result, time.perf_counter() - start))
    return SystemRun(
        system=system or mode,
        outcomes=tuple(outcomes),
        first_map_seconds=first_seconds,
        servers={language: report.to_json() for language, report in first.servers.items()},
        edges=dict(first.edges),
        stats={k: v for k, v in first.stats.items() if k in _KEPT_STATS or k.startswith("lsp_")},
    )
