"""SQLite's page cache for the disk cache: what it costs to write and read entries, and what it holds.

    python benchmarks/bench_cache_pages.py --from ~/.cache/hybridmap/cache.db [--entries 100000]
        [--rounds 2] [--pages 8192,1024]

Real entries (hybridmap's own encoding, tags records) are copied from a warm cache's database
into a fresh :class:`hybridmap.store.cache.Cache` per round and page-cache size, alternating the
sizes round by round: written in batches of 2,048 (``set_raw_many``, an index import's path),
the cache closed and opened again, then every entry read and decoded in batches of 512
(``get_many``, a warm map's path). Prints the CPU of each phase and the process's peak RSS
(each size in its own process, so the peak is that size's).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _one(source: Path, entries: int, pages: int, directory: Path) -> dict[str, float]:
    from hybridmap.store import cache as cache_module

    cache_module._SETTINGS["sqlite_cache_size"] = pages  # what the module passes to diskcache
    with sqlite3.connect(source) as db:
        rows = db.execute(
            "SELECT key, value FROM Cache WHERE key LIKE 'hmc1:tags:%' AND value IS NOT NULL LIMIT ?", (entries,)
        ).fetchall()
    items = {key.split(":", 1)[1]: value for key, value in rows}
    keys = list(items)
    cache = cache_module.Cache(directory, size_limit=2**40, memory_entries=0)
    started = time.process_time()
    for at in range(0, len(keys), 2048):
        cache.set_raw_many({k: items[k] for k in keys[at : at + 2048]})
    written = time.process_time() - started
    cache.close()
    cache = cache_module.Cache(directory, size_limit=2**40, memory_entries=0)
    started = time.process_time()
    found = sum(len(cache.get_many(keys[at : at + 512], shared=False)) for at in range(0, len(keys), 512))
    read = time.process_time() - started
    cache.close()
    if found != len(keys):
        raise SystemExit(f"read {found} of {len(keys)} entries")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"entries": len(keys), "write_s": written, "read_s": read, "peak_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, required=True, help="a warm cache's cache.db")
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pages", default="8192,1024", help="page-cache sizes to compare, in pages")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child: this size only
    args = parser.parse_args()
    if args.one is not None:
        with tempfile.TemporaryDirectory() as scratch:
            print(json.dumps(_one(args.source.expanduser(), args.entries, args.one, Path(scratch) / "c")))
        return
    sizes = [int(p) for p in args.pages.split(",")]
    for round_ in range(args.rounds):
        for pages in sizes if round_ % 2 == 0 else sizes[::-1]:
            cmd = [sys.executable, __file__, "--from", str(args.source), "--entries", str(args.entries)]
            out = subprocess.run([*cmd, "--one", str(pages)], capture_output=True, text=True, check=True)
            result = json.loads(out.stdout)
            print(
                f"round {round_ + 1} pages {pages:5d}: {result['entries']} entries, write {result['write_s']:.2f} s, "
                f"read {result['read_s']:.2f} s, peak RSS {result['peak_mb']:.0f} MB",
                flush=True,
            )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
