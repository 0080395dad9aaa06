"""What the MCP protocol adds to a warm map: ``repo_map`` through ``hybridmap mcp`` vs the same
map made in-process by ``AsyncRepoMap``, same run, calls interleaved.

    python benchmarks/bench_mcp.py [--calls 30] [--corpus click|stdlib-small|stdlib|PATH ...]
                                   [--chat FILE ...] [--mode static|hybrid ...] [--json]

For each corpus and mode, two warm maps of one repository, side by side: the SDK's own client
(``stdio_client`` + ``ClientSession``) driving the real ``python -m hybridmap mcp ROOT``
process, and an ``AsyncRepoMap`` in this process (each with its own cache directory). Both
first make a map (hybrid: waiting up to 60 s for the language servers), then answer the same
requests, alternating call by call so machine noise lands on both: the chat file rotates over
three real files, budget 1024 tokens, server wait 0. Times are wall clock around one call
(``call_tool`` on the client; ``await repo.map`` in-process). The table gives p50 / p95, the
ratio MCP / in-process (target: <= 1.20 at the median), the server's own time in the tool (from
its log) and, per call, the client's time minus that: what protocol, transport and scheduling add.
Corpora are scratch copies under ``benchmarks/.work/mcp/`` (never committed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "mcp"
sys.path.insert(0, str(HERE.parent))

# After the path insert: the checkout's hybridmap, not an installed one.
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from hybridmap import AsyncRepoMap  # noqa: E402
from hybridmap.model import Mode  # noqa: E402

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SMALL_PACKAGES = ("json", "email", "http", "logging", "urllib")
#: Chat files the requests rotate over, per corpus (real files with real neighbours).
CHATS = {
    "click": ("click/core.py", "click/decorators.py", "click/termui.py"),
    "stdlib-small": ("json/decoder.py", "email/message.py", "http/client.py"),
    "stdlib": ("json/decoder.py", "asyncio/tasks.py", "email/message.py"),
}


def _git_init(root: Path) -> None:
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
        "HOME": str(root),
        "PATH": "/usr/bin:/bin",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def prepare(name: str) -> Path:
    """A scratch git repository for the corpus ``name`` (or ``name`` itself when it is a path)."""
    if name not in CHATS:
        return Path(name).resolve()
    dest = WORK / "corpora" / name
    if dest.exists():
        return dest
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "site-packages", "test", "tests", "idlelib")
    if name == "click":
        import click

        shutil.copytree(Path(click.__file__).parent, dest / "click", ignore=ignore)
    elif name == "stdlib-small":
        for package in SMALL_PACKAGES:
            shutil.copytree(STDLIB / package, dest / package, ignore=ignore)
    else:
        shutil.copytree(STDLIB, dest, ignore=ignore)
    _git_init(dest)
    return dest


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(root: Path, chats: tuple[str, ...], mode: Mode, calls: int) -> dict[str, Any]:
    """Interleaved warm calls through MCP and in-process; times in seconds."""
    caches = Path(tempfile.mkdtemp(prefix="bench-mcp-"))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(caches / "mcp")]
    )
    wait = 60.0 if mode == "hybrid" else 0.0
    times: dict[str, list[float]] = {"mcp": [], "in_process": []}
    try:
        with open(caches / "server.log", "w") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
                AsyncRepoMap(root, overrides={"cache_dir": str(caches / "api")}) as repo,
            ):
                await session.initialize()
                first = await session.call_tool(
                    "repo_map", {"chat_files": [chats[0]], "mode": mode, "server_wait": wait}
                )
                assert not first.is_error, first.content
                local = await repo.map(chat_files=[chats[0]], mode=mode, server_wait=wait)
                servers = {
                    "mcp": (first.structured_content or {}).get("servers", {}),
                    "in_process": {k: str(v.state) for k, v in local.servers.items()},
                }
                for i in range(calls):
                    chat = [chats[i % len(chats)]]
                    t = time.perf_counter()
                    result = await session.call_tool("repo_map", {"chat_files": chat, "tokens": 1024, "mode": mode})
                    times["mcp"].append(time.perf_counter() - t)
                    assert not result.is_error, result.content
                    t = time.perf_counter()
                    await repo.map(chat_files=chat, tokens=1024, mode=mode)
                    times["in_process"].append(time.perf_counter() - t)
        # The server logs each tool's own time: the rest of a call is protocol, transport, scheduling.
        logged = re.findall(r"repo_map: ([0-9.]+) s", (caches / "server.log").read_text())
        times["server_side"] = [float(x) for x in logged[1:]]  # the first is the waiting map
    finally:
        shutil.rmtree(caches, ignore_errors=True)
    return {
        "times": times,
        "servers": servers,
        "files": int(local.stats.get("files_listed", 0)),
        "edges": dict(local.edges),
    }


def summarize(corpus: str, mode: str, data: dict[str, Any]) -> dict[str, Any]:
    mcp, local = data["times"]["mcp"], data["times"]["in_process"]
    row = {
        "corpus": corpus,
        "mode": mode,
        "files": data["files"],
        "calls": len(mcp),
        "mcp_p50": statistics.median(mcp),
        "mcp_p95": percentile(mcp, 0.95),
        "in_process_p50": statistics.median(local),
        "in_process_p95": percentile(local, 0.95),
        "edges": data["edges"],
        "servers": data["servers"],
    }
    row["ratio_p50"] = row["mcp_p50"] / row["in_process_p50"]
    row["ratio_p95"] = row["mcp_p95"] / row["in_process_p95"]
    row["added_p50_ms"] = 1000 * (row["mcp_p50"] - row["in_process_p50"])
    inside = data["times"].get("server_side", [])
    if len(inside) == len(mcp):  # per call: client wall time minus the tool's own time
        row["server_side_p50"] = statistics.median(inside)
        row["protocol_p50_ms"] = 1000 * statistics.median(m - s for m, s in zip(mcp, inside, strict=True))
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        (
            "| corpus | mode | files | calls | MCP p50 / p95 (ms) | in-process p50 / p95 (ms) | "
            "added at p50 (ms) | ratio p50 / p95 | in the tool p50 (ms) | protocol p50 (ms) |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['corpus']} | {r['mode']} | {r['files']} | {r['calls']} | "
            f"{1000 * r['mcp_p50']:.1f} / {1000 * r['mcp_p95']:.1f} | "
            f"{1000 * r['in_process_p50']:.1f} / {1000 * r['in_process_p95']:.1f} | "
            f"{r['added_p50_ms']:.1f} | {r['ratio_p50']:.2f} / {r['ratio_p95']:.2f} | "
            f"{1000 * r.get('server_side_p50', float('nan')):.1f} | {r.get('protocol_p50_ms', float('nan')):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--corpus", action="append", default=[])
    parser.add_argument("--mode", action="append", choices=["static", "hybrid"], default=[])
    parser.add_argument("--chat", action="append", default=[], help="chat files for a PATH corpus")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args()
    rows = []
    for corpus in args.corpus or ["click", "stdlib-small"]:
        root = prepare(corpus)
        chats = tuple(args.chat) or CHATS.get(corpus) or parser.error(f"--chat is needed for {corpus}")
        for mode in args.mode or ["static", "hybrid"]:
            data = anyio.run(measure, root, chats, mode, args.calls)
            rows.append(summarize(corpus, mode, data))
            print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
