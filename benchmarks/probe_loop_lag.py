"""How long an agent's event loop stands still while hybridmap makes its first hybrid map.

    python benchmarks/probe_loop_lag.py ROOT CACHE_DIR [--after 3] [--mode hybrid] [--stacks-after MS]

Run in a fresh process, as an agent is: it imports hybridmap (the agent's own start-up, not
timed), then starts a 10 ms ticker on its asyncio loop, makes ``AsyncRepoMap(ROOT)`` and its
first map (server wait 0: servers start in the background) and keeps ticking ``--after``
seconds while the servers start, initialize and answer. Prints one JSON line: each tick's lag
(how much later than 10 ms it ran) summarized as max, p99 and median in milliseconds, the
tick count, the map's wall time and the servers' states when it returned. With
``--stacks-after MS``, a stall longer than MS also dumps every thread's stack (faulthandler's
watchdog, which needs no GIL: a C call holding it is caught in the act), returned as
``stall_stacks``: a stall seen once on a loaded machine names its culprit.

Used by ``benchmarks/bench_session.py`` (old and new code, alternating) and by
``tests/api/test_event_loop.py`` (a gross-stall check).
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import statistics
import tempfile
import time
from typing import TextIO

TICK = 0.010


#: At most this much of the stacks dumped at stalls is returned.
STACKS_CHARS = 40_000


async def measure(
    root: str, cache: str, after: float, mode: str, stacks_after: float | None = None
) -> dict[str, object]:
    from hybridmap import AsyncRepoMap  # imported by main() already: the agent's own start-up

    lags: list[float] = []
    done = asyncio.Event()

    async def ticker(dumps: TextIO) -> None:
        last = time.perf_counter()
        while not done.is_set():
            if stacks_after:
                faulthandler.dump_traceback_later(stacks_after, file=dumps)  # re-armed each tick
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            lags.append(now - last - TICK)
            last = now
        faulthandler.cancel_dump_traceback_later()

    with tempfile.TemporaryFile("w+") as dumps:
        ticking = asyncio.create_task(ticker(dumps))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        async with AsyncRepoMap(root, overrides={"cache_dir": cache}) as repo:
            result = await repo.map(mode=mode, server_wait=0)  # type: ignore[arg-type]
            map_seconds = time.perf_counter() - started
            await asyncio.sleep(after)
        done.set()
        await ticking
        dumps.seek(0)
        stacks = dumps.read(STACKS_CHARS)
    ordered = sorted(lags)
    return {
        "max_ms": round(ordered[-1] * 1000, 1),
        "p99_ms": round(ordered[int(len(ordered) * 0.99)] * 1000, 1),
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "ticks": len(ordered),
        "map_s": round(map_seconds, 3),
        "servers": {language: report.state.value for language, report in result.servers.items()},
        **({"stall_stacks": stacks} if stacks else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("cache")
    parser.add_argument("--after", type=float, default=3.0)
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "static"))
    parser.add_argument("--stacks-after", type=float, default=None, metavar="MS")
    args = parser.parse_args()
    stacks_after = args.stacks_after / 1000 if args.stacks_after else None
    from hybridmap import AsyncRepoMap  # noqa: F401 - the agent's own import, before the clock starts

    print(json.dumps(asyncio.run(measure(args.root, args.cache, args.after, args.mode, stacks_after))))


if __name__ == "__main__":
    main()
