"""A shared cache against a cold map, and what the store adds to a warm one (issue 29).

    nice -n 10 python benchmarks/bench_shared_cache.py ROOT [--rounds 2] [--warm-rounds 3]

A real Redis server (Debian's ``redis-server``) on a private Unix socket, nothing saved to disk.
Once, before the rounds: a writer (``shared_cache_write = true``: a CI job) maps ROOT into an empty
local cache and fills the store (timed). Then, alternating the order each round, each a fresh
local cache:

* **cold**: ``hybridmap map ROOT --mode static`` (one-shot, no daemon), no shared cache;
* **shared**: the same map by a reader (``shared_cache_url`` set, read-only) with an empty local
  cache: a new machine of the fleet. The store's own CPU in that map is counted beside it.

Then the **warm** one-shot map (the reader's local cache now full, the files' kept states too)
with and without the shared cache configured, alternating, each call with another chat file.

Each step is a whole process, timed by wall clock and by its CPU (user + system, from
``wait4``'s rusage: the parse workers are its children and counted). No parse deadline
(``parse_deadline_seconds`` 0), so the cold map parses every file. Medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import psutil
from _common import run_hybridmap

ENV = {**os.environ, "HYBRIDMAP_DAEMON": "off"}
BASE_CONFIG = "parse_deadline_seconds = 0\nmax_files = 200000\n"


def run(args: list[str], config: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one hybridmap command."""
    return run_hybridmap(args, {**ENV, "XDG_CONFIG_HOME": str(config)})


def configure(work: Path, name: str, extra: str) -> Path:
    directory = work / name
    (directory / "hybridmap").mkdir(parents=True)
    (directory / "hybridmap" / "config.toml").write_text(BASE_CONFIG + extra)
    return directory


def chat_files(root: Path, count: int) -> list[str]:
    """``count`` source files spread over the tree, a new one for each warm call."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    files = [f for f in listed.stdout.splitlines() if f.endswith((".py", ".go", ".ts", ".java"))]
    step = max(1, len(files) // (count + 1))
    return files[step::step][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warm-rounds", type=int, default=3)
    args = parser.parse_args()
    root = args.root.resolve()
    work = Path(tempfile.mkdtemp(prefix="bench-shared-"))
    socket = work / "redis.sock"
    redis = subprocess.Popen(
        [
            "redis-server",
            "--port",
            "0",
            "--unixsocket",
            str(socket),
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(work),
        ],
        stdout=subprocess.DEVNULL,
    )
    store = psutil.Process(redis.pid)
    out = sys.stderr
    try:
        for _ in range(200):
            if socket.exists():
                break
            time.sleep(0.05)
        url = f'shared_cache_url = "unix://{socket}"\n'
        none = configure(work, "config-none", "")
        reader = configure(work, "config-reader", url)
        writer = configure(work, "config-writer", url + "shared_cache_write = true\n")

        def store_cpu() -> float:
            t = store.cpu_times()
            return t.user + t.system

        def map_args(cache: Path, *extra: str) -> list[str]:
            return ["map", str(root), "--mode", "static", "--tokens", "2048", "--cache-dir", str(cache), *extra]

        before = store_cpu()
        fill = run(map_args(work / "cache-writer"), writer)
        fill_store = store_cpu() - before
        stored = psutil.Process(redis.pid).memory_info().rss
        shutil.rmtree(work / "cache-writer", ignore_errors=True)
        print(
            f"fill: {fill[0]:.1f} s wall, {fill[1]:.1f} s CPU (store {fill_store:.1f} s, rss {stored / 1e6:.0f} MB)",
            file=out,
        )
        rows: dict[str, list[tuple[float, float]]] = {"cold": [], "shared": []}
        store_cpus: list[float] = []
        warm_cache = work / "cache-warm"
        for r in range(args.rounds):
            for kind in ("cold", "shared") if r % 2 == 0 else ("shared", "cold"):
                cache = work / f"cache-{r}-{kind}"
                before = store_cpu()
                rows[kind].append(run(map_args(cache), none if kind == "cold" else reader))
                if kind == "shared":
                    store_cpus.append(store_cpu() - before)
                if kind == "shared" and not warm_cache.exists():
                    cache.rename(warm_cache)
                else:
                    shutil.rmtree(cache, ignore_errors=True)
                print(f"round {r + 1} {kind}: {rows[kind][-1]}", file=out)
        warm: dict[str, list[tuple[float, float]]] = {"warm, no shared cache": [], "warm, shared cache": []}
        chats = iter(chat_files(root, 2 * args.warm_rounds))
        for r in range(args.warm_rounds):
            order = ("warm, no shared cache", "warm, shared cache")
            for kind in order if r % 2 == 0 else order[::-1]:
                config = none if kind == "warm, no shared cache" else reader
                warm[kind].append(run(map_args(warm_cache, "--chat", next(chats)), config))
                print(f"round {r + 1} {kind}: {warm[kind][-1]}", file=out)
        med = {
            k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in {**rows, **warm}.items()
        }
        summary = {
            "fill (writer's cold map)": {"wall": fill[0], "cpu": fill[1], "store_cpu": fill_store, "store_rss": stored},
            **{k: {"wall": w, "cpu": c} for k, (w, c) in med.items()},
            "store cpu during the shared map": statistics.median(store_cpus),
            "cpu ratio shared/cold": med["shared"][1] / med["cold"][1],
            "wall ratio shared/cold": med["shared"][0] / med["cold"][0],
            "warm wall ratio shared/none": med["warm, shared cache"][0] / med["warm, no shared cache"][0],
            "warm cpu ratio shared/none": med["warm, shared cache"][1] / med["warm, no shared cache"][1],
        }
        print(json.dumps(summary, indent=1))
    finally:
        redis.kill()
        redis.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
