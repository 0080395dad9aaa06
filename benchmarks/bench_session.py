"""What an agent host feels of a session: its event loop's lag during the first hybrid map, and
``hybridmap mcp``'s ``initialize``, first and warm ``repo_map``; this checkout against an older
commit, alternating round by round.

    nice -n 10 python benchmarks/bench_session.py [--old REV] [--rounds 5] [--json]

The corpus is the four-language fixture a real agent session would start four servers on
(tests/fixtures/lsp/{python,go,typescript,rust}, copied under ``benchmarks/.work/session``).
The old commit is extracted there with ``git archive`` and run with its own package on
``PYTHONPATH`` (the language servers are this checkout's, put on ``PATH`` for both sides).
Each round, for each side in alternating order, with an empty cache directory:

- ``probe_loop_lag.py`` in a fresh process: a 10 ms ticker through ``AsyncRepoMap``'s first
  hybrid map and the 3 s after it (the servers start meanwhile): max and p99 lag;
- ``hybridmap mcp`` driven by the SDK's own client: spawn to ``initialize``'s answer, then the
  first ``repo_map`` (hybrid, server wait 0), then a second one with another chat file (warm).

Medians over the rounds, and new / old. The machine is shared: read the ratios.
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
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
WORK = HERE / ".work" / "session"
FIXTURES = CHECKOUT / "tests" / "fixtures" / "lsp"
LANGUAGES = ("python", "go", "typescript", "rust")
SERVER_DIRS = ("node/node_modules/.bin", "lsp/node_modules/.bin", "bin", "go/bin", "cargo/bin")


def corpus() -> Path:
    root = WORK / "corpus"
    if not root.exists():
        for language in LANGUAGES:
            shutil.copytree(FIXTURES / language, root / language)
    return root


def old_tree(rev: str) -> Path:
    dest = WORK / f"old-{rev}"
    if not dest.exists():
        dest.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(CHECKOUT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def environment(code: Path) -> dict[str, str]:
    servers = [str(CHECKOUT / ".servers" / d) for d in SERVER_DIRS]
    return {
        **os.environ,
        "PYTHONPATH": str(code),
        "PATH": os.pathsep.join([*servers, str(CHECKOUT / ".venv" / "bin"), os.environ.get("PATH", "")]),
    }


def loop_lag(code: Path, root: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        proc = subprocess.run(
            [sys.executable, str(HERE / "probe_loop_lag.py"), str(root), cache],
            capture_output=True,
            text=True,
            check=True,
            env=environment(code),
            cwd=code,
        )
    return dict(json.loads(proc.stdout))


def mcp_session(code: Path, root: Path) -> dict[str, float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def run(cache: str) -> dict[str, float]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", cache],
            env=environment(code),
            cwd=str(code),
        )
        started = time.perf_counter()
        with open(os.devnull, "w") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                initialized = time.perf_counter()
                await session.call_tool("repo_map", {"chat_files": ["python/app.py"]})
                first = time.perf_counter()
                await session.call_tool("repo_map", {"chat_files": ["go/main.go"]})
                warm = time.perf_counter()
        return {"initialize_s": initialized - started, "first_map_s": first - initialized, "warm_map_s": warm - first}

    with tempfile.TemporaryDirectory() as cache:
        return anyio.run(run, cache)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", default="93cd2d1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = corpus()
    sides = {"old": old_tree(args.old), "new": CHECKOUT}
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for round_ in range(args.rounds):
        order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
        for side in order:
            lag = loop_lag(sides[side], root)
            runs[side].append({**lag, **mcp_session(sides[side], root)})
    keys = ("max_ms", "p99_ms", "map_s", "initialize_s", "first_map_s", "warm_map_s")
    table = {side: {k: statistics.median(r[k] for r in runs[side]) for k in keys} for side in runs}
    if args.json:
        print(json.dumps({"old": args.old, "rounds": args.rounds, "medians": table, "runs": runs}, indent=1))
        return
    print(f"{args.rounds} rounds, medians; old = {args.old}")
    print(f"{'':14} {'old':>9} {'new':>9} {'new/old':>8}")
    for k in keys:
        old, new = table["old"][k], table["new"][k]
        print(f"{k:14} {old:9.3f} {new:9.3f} {new / old if old else float('nan'):8.2f}")


if __name__ == "__main__":
    main()
