"""``hybridmap map --watch``: print the map, then again whenever it would change.

One long-lived :class:`~hybridmap.api.repo.AsyncRepoMap` watches ROOT (:meth:`watch`): after a save
(and the debounce) or when the language servers' answers improved, the same request is mapped
again and printed: text maps separated by a form feed line, JSON maps one document per line.
A line on stderr says why each map came. Ctrl-C ends it (exit 130, servers stopped first).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ...api.repo import AsyncRepoMap
from ...infra.sanitize import escape_path
from ...model import MapRequest, MapResult
from ...workspace.live import LiveEvent

#: Printed between two text maps: a form feed (a pager or terminal shows a clean break).
TEXT_SEPARATOR = "\f\n"
#: Changed paths named in the stderr line before a new map (the rest are counted).
PATHS_SHOWN = 5


def why_line(event: LiveEvent) -> str:
    """The stderr line saying why a new map follows (paths made safe to print)."""
    if event.kind == "answers_improved":
        return f"hybridmap: watch: answers improved ({', '.join(event.sources)}): new map"
    shown = ", ".join(escape_path(p) for p in event.paths[:PATHS_SHOWN])
    more = f" and {len(event.paths) - PATHS_SHOWN} more" if len(event.paths) > PATHS_SHOWN else ""
    return f"hybridmap: watch: {shown}{more} changed: new map"


async def watch_maps(
    root: str,
    overrides: dict[str, Any],
    request: MapRequest,
    emit: Callable[[MapResult, bool], None],
    say: Callable[[str], None],
    maps: int | None = None,
) -> None:
    """Map, then re-map on every live event; ``emit(result, first)`` prints one map. ``maps``
    bounds how many are printed (tests); None: until cancelled."""
    async with AsyncRepoMap(root, overrides=overrides) as repo:
        events = repo.events()
        emit(await repo.map(request), True)
        await repo.watch()
        say(f"hybridmap: watching {escape_path(str(repo.root))} (Ctrl-C to stop)")
        printed = 1
        async for event in events:
            if maps is not None and printed >= maps:
                return
            say(why_line(event))
            emit(await repo.map(request), False)
            printed += 1


def run_watch(
    root: str,
    overrides: dict[str, Any],
    request: MapRequest,
    emit: Callable[[MapResult, bool], None],
    say: Callable[[str], None],
) -> None:
    asyncio.run(watch_maps(root, overrides, request, emit, say))
