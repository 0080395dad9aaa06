"""How long an agent's event loop stands still while hybridmap makes its first hybrid map.

    python benchmarks/probe_loop_lag.py ROOT CACHE_DIR [--after 3] [--mode hybrid]

Run in a fresh process, as an agent is: it imports hybridmap (the agent's own start-up, not
timed), then starts a 10 ms ticker on its asyncio loop, makes ``AsyncRepoMap(ROOT)`` and its
first map (server wait 0: servers start in the background) and keeps ticking ``--after``
seconds while the servers start, initialize and answer. Prints one JSON line: each tick's lag
(how much later than 10 ms it ran) summarized as max, p99 and median in milliseconds, the
tick count, the map's wall time and the servers' states when it returned.

Used by ``benchmarks/bench_session.py`` (old and new code, alternating) and by
``tests/api/test_event_loop.py`` (a gross-stall check).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

TICK = 0.010


async def measure(root: str, cache: str, after: float, mode: str) -> dict[str, object]:
    from hybridmap import AsyncRepoMap  # imported by main() already: the agent's own start-up

    lags: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            lags.append(now - last - TICK)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    async with AsyncRepoMap(root, overrides={"cache_dir": cache}) as repo:
        result = await repo.map(mode=mode, server_wait=0)  # type: ignore[arg-type]
        map_seconds = time.perf_counter() - started
        await asyncio.sleep(after)
    done.set()
    await ticking
    ordered = sorted(lags)
    return {
        "max_ms": round(ordered[-1] * 1000, 1),
        "p99_ms": round(ordered[int(len(ordered) * 0.99)] * 1000, 1),
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "ticks": len(ordered),
        "map_s": round(map_seconds, 3),
        "servers": {language: report.state.value for language, report in result.servers.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("cache")
    parser.add_argument("--after", type=float, default=3.0)
    parser.add_argument("--mode", default="hybrid", choices=("hybrid", "static"))
    args = parser.parse_args()
    from hybridmap import AsyncRepoMap  # noqa: F401 - the agent's own import, before the clock starts

    print(json.dumps(asyncio.run(measure(args.root, args.cache, args.after, args.mode))))


if __name__ == "__main__":
    main()
