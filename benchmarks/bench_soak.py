"""Load and soak: one long-lived map under concurrent calls, then a thousand maps with edits.

    python benchmarks/bench_soak.py [--corpus rich] [--corpus hono] [--concurrent 50]
        [--threads 8] [--per-thread 4] [--maps 1000] [--sample-every 50] [--warmup 100]
        [--tracemalloc] [--skip-concurrency] [--control-rounds 40] [--no-disk-cache] [--tag=-x]

An agent calls the map every turn, for hours, on one object. Per corpus (a fresh scratch copy of
the search tool's bare mirror under ``benchmarks/.work/soak/<corpus>``, made a git repository as
an agent's checkout is, with its own fresh disk cache), with the built-in server configs:

1. **Concurrency.** One ``AsyncRepoMap`` (servers on, mode hybrid). ``--concurrent`` calls with
   different chat files, mentions and budgets (every fifth with ``server_wait``) are fired at once
   on the cold object (nothing indexed, no server started), then again once its servers have
   drained; the warm round's texts are compared with the same requests made one at a time just
   before. Then the sync ``RepoMap`` facade is called from ``--threads`` threads at once.
   Every result must have ``tokens <= budget``, non-empty text and no exception.
2. **Soak.** A fresh ``AsyncRepoMap``; ``--maps`` maps one after another with an edit before
   each: a new definition appended to one of a rotating set of files (replacing the previous
   append, so files do not grow), every 7th map a file the server has open, every 10th map a
   file deleted (restored 5 maps later), every 20th map a new file with a unique name (deleted
   10 maps later). The map mentions the definition just added, so it is checked that the map
   shows it (freshness) and never shows a deleted file. Every ``--sample-every`` maps: our RSS,
   the servers' process-tree RSS, open fds, threads, child processes, asyncio tasks, gc objects,
   the sizes of the object's internal per-file/per-answer structures, and the median map time of
   the window. ``--tracemalloc`` traces Python allocations from the first sample after warm-up
   and prints the top growth at the end (it makes maps ~10x slower: its times mean nothing).
3. **Aged against fresh.** After the soak, a fresh object on the same cache is drained, then
   ``--control-rounds`` times one edit and the same request go to both objects, alternating
   which goes first: time per map of the aged object against a new one at the same moment (the
   machine's load moves), what differs between their maps, and their servers' RSS.

``--no-disk-cache`` runs the soak with ``use_cache = false`` (everything cached in memory).
The scratch copy is restored at the end (and checked: ``git status`` clean, same file hashes).
Raw JSON: ``benchmarks/.work/soak/bench_soak-<corpus><tag>.json``; results in docs/reliability.md.
Load averages are recorded at each sample: the machine's two cores are shared with other agents.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import extract_mirror  # noqa: E402

from hybridmap import AsyncRepoMap, RepoMap  # noqa: E402
from hybridmap.model import MapResult  # noqa: E402
from hybridmap.sources.lsp.session import tree_rss_mb  # noqa: E402

WORK = HERE / ".work" / "soak"


@dataclass(frozen=True)
class Corpus:
    name: str
    mirror: str
    sources: str  # glob of files to edit, relative to the root
    exclude: str  # regex of paths never edited (tests, generated files)
    definition: re.Pattern[str]  # top-level definitions, for mentions
    snippet: Callable[[str], str]  # a new top-level definition named by the argument
    new_file: Callable[[str, str], str]  # a new file defining arg 1 and using arg 2


CORPORA = {
    "rich": Corpus(
        "rich",
        "Textualize+rich",
        "rich/**/*.py",
        r"/_[a-z]+_(names|data|codes)|_emoji_codes|__main__",
        re.compile(r"^(?:def|class) ([A-Za-z]\w+)", re.M),
        lambda name: f"\n\ndef {name}(value):\n    return value\n",
        lambda name, used: f"from rich.console import Console\n\n\ndef {name}(console: Console):\n    return {used}\n",
    ),
    "hono": Corpus(
        "hono",
        "honojs+hono",
        "src/**/*.ts",
        r"\.test\.ts$|/jsx/intrinsic|\.d\.ts$",
        re.compile(r"^export (?:const|function|class|type|interface) ([A-Za-z]\w+)", re.M),
        lambda name: f"\nexport function {name}(value: number): number {{\n  return value\n}}\n",
        lambda name, used: (
            f"import {{ Hono }} from './hono'\n\nexport function {name}(app: Hono) {{\n  return [app, '{used}']\n}}\n"
        ),
    ),
}
BUDGETS = (256, 512, 1024, 2048, 4096, 8192)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=soak@localhost", "-c", "user.name=soak", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def prepare(corpus: Corpus) -> Path:
    """A fresh git checkout of the mirror's HEAD (an agent maps a git work tree)."""
    root = WORK / corpus.name
    shutil.rmtree(root, ignore_errors=True)
    extract_mirror(Path("/work/.mirror") / corpus.mirror / "repo", root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "soak corpus")
    return root


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def sources(root: Path, corpus: Corpus) -> list[str]:
    exclude = re.compile(corpus.exclude)
    return sorted(
        str(p.relative_to(root))
        for p in root.glob(corpus.sources)
        if p.is_file() and not exclude.search(str(p.relative_to(root)))
    )


def definitions(root: Path, files: list[str], pattern: re.Pattern[str]) -> dict[str, str]:
    """Top-level names defined in exactly one of ``files`` → that file."""
    seen: dict[str, list[str]] = {}
    for rel in files:
        for name in pattern.findall((root / rel).read_text(errors="replace")):
            seen.setdefault(name, []).append(rel)
    return {name: paths[0] for name, paths in seen.items() if len(paths) == 1}


def check(result: MapResult, budget: int, chat: tuple[str, ...]) -> list[str]:
    """What a correct map must be, whatever the request."""
    problems = []
    if result.tokens > budget:
        problems.append(f"tokens {result.tokens} > budget {budget}")
    if not result.text.strip():
        problems.append(f"empty text ({[d.kind for d in result.diagnostics]})")
    shown = {f.path for f in result.files}
    if shown & set(chat):
        problems.append(f"chat files repeated: {sorted(shown & set(chat))}")
    return problems


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "min": ordered[0],
        "p50": statistics.median(ordered),
        "p90": at(0.9),
        "p99": at(0.99),
        "max": ordered[-1],
        "mean": statistics.fmean(ordered),
    }


# --- introspection of the live object (benchmark only: private attributes, read-only) ----------


def sessions(repo: AsyncRepoMap) -> list[Any]:
    return repo._engine.lsp.sessions()


def internal_counts(repo: AsyncRepoMap) -> dict[str, int]:
    """Sizes of every per-file / per-answer structure a long-lived object keeps."""
    lsp = repo._engine.lsp
    out = {
        "lsp._tasks": len(lsp._tasks),
        "pipeline._merge_memo": len(repo._engine.builder._merge_memo),
        "base tags": len(repo.tags()),
        "static._entries": len(getattr(repo._engine._base, "_entries", {})),
        "workspace files": len(repo._engine.snapshot.files),
        "cache._memory": len(repo._engine.cache._memory),
        "resolver._resolved": len(lsp.resolver._resolved),
        "outline._outlines": len(lsp.outline._outlines),
        "outline._hovers": len(lsp.outline._hovers),
        "documents._lines": len(lsp.documents._lines),
        "documents._open": len(lsp.documents._open),
        "lsp._queue": len(lsp._queue),
    }
    opened = events = pending = troubles = 0
    for session in sessions(repo):
        opened += len(session._opened)
        events += len(session.events)
        troubles += len(session.troubles)
        pending += session.pending_requests
    out.update(
        {
            "session._opened": opened,
            "session.events": events,
            "session.troubles": troubles,
            "session.pending_requests": pending,
        }
    )
    return out


def server_state(repo: AsyncRepoMap) -> list[tuple[str, int | None, str]]:
    return [(s.config.name, s.pid, str(s.state)) for s in sessions(repo)]


def sample(repo: AsyncRepoMap, index: int, window_times: list[float]) -> dict[str, Any]:
    me = psutil.Process()
    server_rss = sum(tree_rss_mb(s.pid) for s in sessions(repo) if s.pid is not None)
    return {
        "map": index,
        "load": load(),
        "rss_mb": me.memory_info().rss / 2**20,
        "server_rss_mb": server_rss,
        "fds": me.num_fds(),
        "threads": me.num_threads(),
        "children": len(me.children(recursive=True)),
        "asyncio_tasks": len(asyncio.all_tasks()),
        "gc_objects": len(gc.get_objects()),
        "traced_mb": tracemalloc.get_traced_memory()[0] / 2**20 if tracemalloc.is_tracing() else None,
        "servers": server_state(repo),
        "window_median_s": statistics.median(window_times) if window_times else None,
        "window_p90_s": percentiles(window_times).get("p90") if window_times else None,
        **internal_counts(repo),
    }


# --- 1. concurrency ------------------------------------------------------------------------------


def requests_for(files: list[str], names: dict[str, str], count: int) -> list[dict[str, Any]]:
    """``count`` different requests: chat files, mentions (idents and files), budgets, waits."""
    picked = sorted(names)[:: max(1, len(names) // count)]
    out = []
    for i in range(count):
        chat = (files[(i * 7) % len(files)],) if i % 3 != 2 else ()
        idents = (picked[i % len(picked)],) if i % 2 == 0 else ()
        mentioned = (Path(files[(i * 11 + 3) % len(files)]).name,) if i % 4 == 1 else ()
        out.append(
            {
                "chat_files": chat,
                "mentioned_idents": idents + mentioned,
                "tokens": BUDGETS[i % len(BUDGETS)],
                "server_wait": 5.0 if i % 5 == 4 else 0.0,
            }
        )
    return out


async def fire(repo: AsyncRepoMap, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """All ``requests`` at once; per-call latency (launch → result) and checks."""

    async def one(request: dict[str, Any]) -> tuple[float, MapResult | BaseException]:
        t = time.perf_counter()
        try:
            result: MapResult | BaseException = await repo.map(**request)
        except Exception as exc:  # noqa: BLE001 - a failed map is a soak finding, recorded
            result = exc
        return time.perf_counter() - t, result

    t0 = time.perf_counter()
    done = await asyncio.gather(*(one(r) for r in requests))
    wall = time.perf_counter() - t0
    problems = []
    for request, (_, result) in zip(requests, done, strict=True):
        if isinstance(result, BaseException):
            problems.append(f"{request}: {type(result).__name__}: {result}")
        else:
            problems += [f"{request}: {p}" for p in check(result, request["tokens"], request["chat_files"])]
    results = [r for _, r in done if isinstance(r, MapResult)]
    return {
        "calls": len(requests),
        "wall_s": wall,
        "problems": problems,
        "latency_s": percentiles([t for t, _ in done]),
        "in_lock_s": percentiles([r.timings["total"] for r in results]),
        "with_wait_latency_s": percentiles([t for (t, _), q in zip(done, requests, strict=True) if q["server_wait"]]),
        "maps_with_lsp_edges": sum(1 for r in results if r.edges.get("lsp")),
        "texts": [r.text if isinstance(r, MapResult) else None for _, r in done],
        "servers": sorted({(k, str(v.state)) for r in results for k, v in r.servers.items()}),
    }


async def drain(repo: AsyncRepoMap, limit: float = 300.0) -> float:
    """Maps with a long server wait until the background queue is empty; seconds taken."""
    t = time.perf_counter()
    while time.perf_counter() - t < limit:
        result = await repo.map(tokens=1024, server_wait=60.0)
        if not result.stats.get("lsp_pending_jobs"):
            break
    return time.perf_counter() - t


async def concurrency(root: Path, cache_dir: Path, requests: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"load_before": load()}
    async with AsyncRepoMap(root, overrides={"cache_dir": str(cache_dir)}) as repo:
        out["cold"] = await fire(repo, requests)
        out["drain_s"] = await drain(repo)
        settle = await fire_sequential(repo, requests)
        expected = await fire_sequential(repo, requests)
        warm = await fire(repo, requests)
        warm["identical_to_sequential"] = sum(a == b for a, b in zip(warm["texts"], expected, strict=True))
        warm["sequential_repeat_identical"] = sum(a == b for a, b in zip(settle, expected, strict=True))
        out["warm"] = warm
        out["tasks_after"] = len(repo._tasks)
        out["counts_after"] = internal_counts(repo)
        out["servers"] = server_state(repo)
    out["children_after_close"] = len(psutil.Process().children(recursive=True))
    for key in ("cold", "warm"):
        out[key].pop("texts")
    out["load_after"] = load()
    return out


async def fire_sequential(repo: AsyncRepoMap, requests: list[dict[str, Any]]) -> list[str]:
    # server_wait 0 here: the comparison is about concurrency, not about what a wait adds.
    return [(await repo.map(**{**r, "server_wait": 0.0})).text for r in requests]


def threaded(
    root: Path, cache_dir: Path, requests: list[dict[str, Any]], threads: int, per_thread: int
) -> dict[str, Any]:
    """The sync facade called from ``threads`` threads at once, ``per_thread`` maps each."""
    before = psutil.Process().num_threads()
    latencies: list[float] = []
    problems: list[str] = []
    barrier = threading.Barrier(threads)
    lock = threading.Lock()
    with RepoMap(root, overrides={"cache_dir": str(cache_dir)}) as repo:

        def worker(k: int) -> None:
            barrier.wait()
            for j in range(per_thread):
                request = requests[(k * per_thread + j) % len(requests)]
                t = time.perf_counter()
                try:
                    result = repo.map(**request)
                    found = check(result, request["tokens"], request["chat_files"])
                except Exception as exc:  # noqa: BLE001 - a failed map is a soak finding, recorded
                    found = [f"{type(exc).__name__}: {exc}"]
                with lock:
                    latencies.append(time.perf_counter() - t)
                    problems.extend(f"thread {k}: {p}" for p in found)

        pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
        t0 = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        wall = time.perf_counter() - t0
    return {
        "threads": threads,
        "calls": len(latencies),
        "wall_s": wall,
        "latency_s": percentiles(latencies),
        "problems": problems,
        "threads_before": before,
        "threads_after_close": psutil.Process().num_threads(),
        "threads_2s_later": later(),
        "children_after_close": len(psutil.Process().children(recursive=True)),
    }


def later() -> int:
    """Thread count 2 s on: a closed loop's executor threads exit on their own (shutdown(wait=False))."""
    time.sleep(2)
    return psutil.Process().num_threads()


# --- 2. soak -------------------------------------------------------------------------------------


class Editor:
    """Edits the scratch copy and remembers every original, to restore it exactly."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.originals: dict[str, bytes | None] = {}  # None: the file did not exist

    def _remember(self, rel: str) -> None:
        if rel not in self.originals:
            path = self.root / rel
            self.originals[rel] = path.read_bytes() if path.exists() else None

    def append(self, rel: str, text: str) -> None:
        """The original content plus ``text`` (the previous append is replaced)."""
        self._remember(rel)
        original = self.originals[rel]
        assert original is not None
        (self.root / rel).write_bytes(original + text.encode())

    def delete(self, rel: str) -> None:
        self._remember(rel)
        (self.root / rel).unlink(missing_ok=True)

    def create(self, rel: str, text: str) -> None:
        self._remember(rel)
        (self.root / rel).write_text(text)

    def restore(self, rel: str) -> None:
        original = self.originals.get(rel)
        if original is None:
            (self.root / rel).unlink(missing_ok=True)
        else:
            (self.root / rel).write_bytes(original)

    def restore_all(self) -> None:
        for rel in self.originals:
            self.restore(rel)


def open_files(repo: AsyncRepoMap) -> list[str]:
    return sorted({path for (_, path) in repo._engine.lsp.documents._open})


async def aged_vs_fresh(
    aged: AsyncRepoMap,
    root: Path,
    cache_dir: Path,
    corpus: Corpus,
    editor: Editor,
    rotating: list[str],
    overrides: dict[str, Any],
    rounds: int,
) -> dict[str, Any]:
    """The soaked object against a fresh one, map for map at the same moment (same edit, same
    request, alternating which goes first): separates ageing from the machine's load."""
    if rounds <= 0:
        return {}
    async with AsyncRepoMap(root, overrides=overrides) as fresh:
        await fresh.map(tokens=1024)
        await drain(fresh)
        times: dict[str, list[float]] = {"aged": [], "fresh": []}
        same = 0
        differs: Counter[str] = Counter()
        for k in range(rounds):
            rel = rotating[k % len(rotating)]
            name = f"soak_control_{k}"
            editor.append(rel, corpus.snippet(name))
            request = {"mentioned_idents": (name,), "tokens": BUDGETS[2 + k % 3]}
            order = [("aged", aged), ("fresh", fresh)][:: 1 if k % 2 == 0 else -1]
            results = {}
            for label, repo in order:
                t = time.perf_counter()
                results[label] = await repo.map(**request)
                times[label].append(time.perf_counter() - t)
            a, b = results["aged"], results["fresh"]
            if a.text == b.text:
                same += 1
            else:  # what differs: the files, the symbols shown, or only their details (hovers)
                differs[
                    "files"
                    if [f.path for f in a.files] != [f.path for f in b.files]
                    else "symbols"
                    if [[s.name for s in f.symbols] for f in a.files] != [[s.name for s in f.symbols] for f in b.files]
                    else "details"
                    if [[s.detail for s in f.symbols] for f in a.files]
                    != [[s.detail for s in f.symbols] for f in b.files]
                    else "other"
                ] += 1
                if a.edges != b.edges:
                    differs["edge counts"] += 1
        servers = {
            label: {
                "rss_mb": sum(tree_rss_mb(x.pid) for x in sessions(repo) if x.pid is not None),
                "open": sum(len(x._opened) for x in sessions(repo)),
            }
            for label, repo in (("aged", aged), ("fresh", fresh))
        }
    return {
        "rounds": rounds,
        "aged": percentiles(times["aged"]),
        "fresh": percentiles(times["fresh"]),
        "identical_texts": same,
        "differences": dict(differs),
        "servers": servers,
    }


def slope_per_100(samples: list[dict[str, Any]], key: str) -> float | None:
    points = [(s["map"], s[key]) for s in samples if isinstance(s.get(key), (int, float))]
    if len(points) < 3:
        return None
    xs, ys = zip(*points, strict=True)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 100 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else None


async def soak(
    root: Path,
    cache_dir: Path,
    corpus: Corpus,
    maps: int,
    every: int,
    warmup: int,
    trace: bool,
    verbose: bool = False,
    extra: dict[str, Any] | None = None,
    control_rounds: int = 40,
) -> dict[str, Any]:
    files = sources(root, corpus)
    step = max(1, len(files) // 16)
    spread = files[::step]
    rotating, deletable = spread[:12], spread[12:16]
    editor = Editor(root)
    samples: list[dict[str, Any]] = []
    window: list[float] = []
    times: list[float] = []
    problems: list[str] = []
    fresh = {"checked": 0, "shown": 0}
    misses: list[dict[str, Any]] = []
    deleted_shown = 0
    diagnostics: Counter[str] = Counter()
    restore_at: dict[int, list[str]] = {}
    previous_edit = rotating[0]
    snapshot0 = None
    overrides = {"cache_dir": str(cache_dir), **(extra or {})}
    control: dict[str, Any] = {}
    async with AsyncRepoMap(root, overrides=overrides) as repo:
        first = await repo.map(tokens=1024)  # map 0: indexes, starts the servers after it
        samples.append(sample(repo, 0, [first.timings["total"]]))
        try:
            for i in range(1, maps + 1):
                for rel in restore_at.pop(i, []):
                    editor.restore(rel)
                name = f"soak_fn_{i}"
                edited: str | None = None
                if i % 20 == 3:
                    rel = str(Path(files[0]).parent / f"soak_new_{i}{Path(files[0]).suffix}")
                    editor.create(rel, corpus.new_file(name, "Console"))
                    restore_at.setdefault(i + 10, []).append(rel)
                    edited, kind = rel, "create"
                elif i % 10 == 0:
                    rel = deletable[(i // 10) % len(deletable)]
                    if (root / rel).exists():
                        editor.delete(rel)
                        restore_at.setdefault(i + 5, []).append(rel)
                    name, kind = "", "delete"
                elif i % 7 == 0 and open_files(repo):
                    candidates = [
                        p for p in open_files(repo) if p in files and p not in deletable and (root / p).exists()
                    ]
                    rel = candidates[i % len(candidates)] if candidates else rotating[i % len(rotating)]
                    editor.append(rel, corpus.snippet(name))
                    edited, kind = rel, "open"
                else:
                    rel = rotating[i % len(rotating)]
                    editor.append(rel, corpus.snippet(name))
                    edited, kind = rel, "append"
                chat = (previous_edit,) if (root / previous_edit).exists() and previous_edit != edited else ()
                request = {
                    "chat_files": chat,
                    "mentioned_idents": (name,) if name else (),
                    "tokens": BUDGETS[2 + i % 3],
                    "server_wait": 3.0 if i % 25 == 0 else 0.0,
                }
                t = time.perf_counter()
                try:
                    result = await repo.map(**request)
                except Exception as exc:  # noqa: BLE001 - a failed map is a soak finding, recorded
                    problems.append(f"map {i}: {type(exc).__name__}: {exc}")
                    continue
                elapsed = time.perf_counter() - t
                if verbose:
                    print(
                        i,
                        f"{elapsed:.3f}",
                        kind,
                        {k: round(v, 3) for k, v in result.timings.items() if v > 0.05},
                        int(result.stats.get("lsp_pending_jobs", 0)),
                        flush=True,
                    )
                times.append(elapsed)
                window.append(elapsed)
                problems += [f"map {i}: {p}" for p in check(result, request["tokens"], chat)]
                diagnostics.update(d.kind for d in result.diagnostics)
                shown = {f.path: f for f in result.files}
                if edited is not None:
                    fresh["checked"] += 1
                    if edited in shown and any(s.name == name for s in shown[edited].symbols):
                        fresh["shown"] += 1
                    else:
                        misses.append(
                            {
                                "map": i,
                                "kind": kind,
                                "file": edited,
                                "tokens": result.tokens,
                                "file_shown": edited in shown,
                                "diagnostics": [d.kind for d in result.diagnostics if d.path == edited],
                            }
                        )
                gone = [p for p in shown if not (root / p).exists()]
                if gone:
                    deleted_shown += 1
                    problems.append(f"map {i}: deleted files shown: {gone}")
                if edited is not None:
                    previous_edit = edited
                if i % every == 0:
                    samples.append(sample(repo, i, window))
                    window = []
                    print(
                        f"map {i}: rss {samples[-1]['rss_mb']:.1f} MB, server {samples[-1]['server_rss_mb']:.0f} MB,"
                        f" fds {samples[-1]['fds']}, threads {samples[-1]['threads']},"
                        f" children {samples[-1]['children']}, median {samples[-1]['window_median_s']:.3f} s,"
                        f" load {samples[-1]['load']}",
                        flush=True,
                    )
                    if trace and i == warmup:
                        gc.collect()
                        tracemalloc.start(4)
                        snapshot0 = tracemalloc.take_snapshot()
            control = await aged_vs_fresh(
                repo, root, cache_dir, corpus, editor, rotating, overrides, rounds=0 if trace else control_rounds
            )
        finally:
            editor.restore_all()
        final = await repo.map(tokens=1024)  # after the restore: the object follows the disk back
        out_final = {"tokens": final.tokens, "diagnostics": sorted({d.kind for d in final.diagnostics})}
    growth = []
    if snapshot0 is not None:
        gc.collect()
        snapshot1 = tracemalloc.take_snapshot()
        tracemalloc.stop()
        for stat in snapshot1.compare_to(snapshot0, "traceback")[:15]:
            growth.append(
                {
                    "size_diff_kb": stat.size_diff / 1024,
                    "count_diff": stat.count_diff,
                    "where": stat.traceback.format()[-6:],
                }
            )
    return {
        "maps": maps,
        "samples": samples,
        "problems": problems,
        "fresh": fresh,
        "fresh_misses": misses,
        "deleted_shown": deleted_shown,
        "diagnostics": dict(diagnostics),
        "map_s": percentiles(times),
        "final": out_final,
        "tracemalloc_growth": growth,
        "aged_vs_fresh": control,
        "rotating": rotating,
        "deletable": deletable,
        "children_after_close": len(psutil.Process().children(recursive=True)),
    }


def summarize_soak(result: dict[str, Any], warmup: int) -> dict[str, Any]:
    samples = result["samples"]
    steady = [s for s in samples if s["map"] >= warmup]
    keys = [
        "rss_mb",
        "server_rss_mb",
        "fds",
        "threads",
        "children",
        "asyncio_tasks",
        "gc_objects",
        "window_median_s",
        *internal_counts_keys(samples),
    ]
    out = {}
    for key in keys:
        first, last = steady[0].get(key), steady[-1].get(key)
        out[key] = {
            "at_warmup": first,
            "last": last,
            "slope_per_100": slope_per_100(steady, key),
            "ratio_last_first": (last / first) if isinstance(first, (int, float)) and first else None,
            "max": max((s[key] for s in steady if isinstance(s.get(key), (int, float))), default=None),
        }
    return out


def internal_counts_keys(samples: list[dict[str, Any]]) -> list[str]:
    return [k for k in samples[0] if "." in k]


def print_report(
    name: str, conc: dict[str, Any], threads: dict[str, Any], soaked: dict[str, Any], summary: dict[str, Any]
) -> None:
    print(f"\n## {name}\n")
    if conc:
        print_concurrency(conc, threads)
    print_soak(soaked, summary)


def print_concurrency(conc: dict[str, Any], threads: dict[str, Any]) -> None:
    print(
        "| round | calls | wall (s) | latency p50 / p90 / max (s) | in-lock work p50 / max (s) |"
        " with server_wait p50 (s) | problems |"
    )
    print("|---|---:|---:|---|---|---:|---:|")
    for key in ("cold", "warm"):
        r = conc[key]
        lat, work, waited = r["latency_s"], r["in_lock_s"], r["with_wait_latency_s"]
        print(
            f"| {key} | {r['calls']} | {r['wall_s']:.2f} | {lat['p50']:.2f} / {lat['p90']:.2f} / {lat['max']:.2f} |"
            f" {work['p50']:.3f} / {work['max']:.2f} | {waited.get('p50', float('nan')):.2f} |"
            f" {len(r['problems'])} |"
        )
    t = threads
    print(
        f"| sync facade, {t['threads']} threads | {t['calls']} | {t['wall_s']:.2f} |"
        f" {t['latency_s']['p50']:.2f} / {t['latency_s']['p90']:.2f} / {t['latency_s']['max']:.2f} | — | — |"
        f" {len(t['problems'])} |"
    )
    print(
        f"\nwarm round identical to the sequential answers: {conc['warm']['identical_to_sequential']}"
        f"/{conc['warm']['calls']} (two sequential passes identical: "
        f"{conc['warm']['sequential_repeat_identical']}); drain {conc['drain_s']:.1f} s;"
        f" tasks left {conc['tasks_after']}; children after close {conc['children_after_close']};"
        f" threads before/after facade close/2 s later {t['threads_before']}/{t['threads_after_close']}/"
        f"{t['threads_2s_later']}"
    )


def print_soak(soaked: dict[str, Any], summary: dict[str, Any]) -> None:
    print(
        f"\nSoak: {soaked['maps']} maps, map time {soaked['map_s']}, problems {len(soaked['problems'])},"
        f" fresh edit shown {soaked['fresh']['shown']}/{soaked['fresh']['checked']}"
        f" (misses: {soaked['fresh_misses'][:5]}),"
        f" deleted file shown {soaked['deleted_shown']}, diagnostics {soaked['diagnostics']},"
        f" server processes seen {sorted({tuple(x) for s in soaked['samples'] for x in s['servers']})}\n"
    )
    cols = [
        "map",
        "load",
        "rss_mb",
        "server_rss_mb",
        "fds",
        "threads",
        "children",
        "asyncio_tasks",
        "gc_objects",
        "window_median_s",
    ]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for s in soaked["samples"]:
        cells = [
            f"{s[c]:.3f}"
            if isinstance(s[c], float) and c == "window_median_s"
            else f"{s[c]:.1f}"
            if isinstance(s[c], float)
            else str(s[c])
            for c in cols
        ]
        print("| " + " | ".join(cells) + " |")
    print("\n| measure | at warm-up | last | slope per 100 maps | last / warm-up | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, v in summary.items():

        def f(x: Any) -> str:
            return "—" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)

        print(
            f"| {key} | {f(v['at_warmup'])} | {f(v['last'])} | {f(v['slope_per_100'])} |"
            f" {f(v['ratio_last_first'])} | {f(v['max'])} |"
        )
    c = soaked.get("aged_vs_fresh")
    if c:
        print(
            f"\nAged vs fresh object, {c['rounds']} alternating maps at the same moment: median"
            f" {c['aged']['p50']:.3f} s vs {c['fresh']['p50']:.3f} s, p90 {c['aged']['p90']:.3f} vs"
            f" {c['fresh']['p90']:.3f}; identical texts {c['identical_texts']}/{c['rounds']}"
            f" (differences: {c.get('differences')}); servers {c.get('servers')}"
        )
    for g in soaked["tracemalloc_growth"]:
        print(f"{g['size_diff_kb']:+.1f} KB ({g['count_diff']:+d}):", " / ".join(x.strip() for x in g["where"][-2:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA), default=None)
    ap.add_argument("--concurrent", type=int, default=50)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--per-thread", type=int, default=4)
    ap.add_argument("--maps", type=int, default=1000)
    ap.add_argument("--sample-every", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=100, help="maps before growth is measured")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--skip-concurrency", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="one line per soak map")
    ap.add_argument(
        "--control-rounds",
        type=int,
        default=40,
        help="maps of the soaked object against a fresh one at the end (0: none)",
    )
    ap.add_argument("--tag", default="", help="suffix of the JSON file's name")
    ap.add_argument(
        "--no-disk-cache", action="store_true", help="use_cache = false: the object keeps every cached value in memory"
    )
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    for name in args.corpus or ["rich"]:
        corpus = CORPORA[name]
        print(f"{name}: {uptime()}", flush=True)
        root = prepare(corpus)
        before = tree_hash(root)
        files = sources(root, corpus)
        requests = requests_for(files, definitions(root, files, corpus.definition), args.concurrent)
        conc: dict[str, Any] = {}
        thr: dict[str, Any] = {}
        if not args.skip_concurrency:
            cache_dir = WORK / f"cache-{name}-concurrency"
            shutil.rmtree(cache_dir, ignore_errors=True)
            conc = asyncio.run(concurrency(root, cache_dir, requests))
            print(json.dumps({k: v for k, v in conc.items() if k in ("cold", "warm")}, default=str)[:3000], flush=True)
            thr = threaded(root, cache_dir, requests, args.threads, args.per_thread)
            print(json.dumps(thr, default=str)[:2000], flush=True)
        cache_dir = WORK / f"cache-{name}-soak"
        shutil.rmtree(cache_dir, ignore_errors=True)
        soaked = asyncio.run(
            soak(
                root,
                cache_dir,
                corpus,
                args.maps,
                args.sample_every,
                args.warmup,
                args.tracemalloc,
                args.verbose,
                {"use_cache": False} if args.no_disk_cache else None,
                args.control_rounds,
            )
        )
        summary = summarize_soak(soaked, args.warmup)
        restored = tree_hash(root) == before and not git(root, "status", "--porcelain").strip()
        soaked["restored"] = restored
        soaked["cache_mb"] = sum(p.stat().st_size for p in cache_dir.rglob("*") if p.is_file()) / 2**20
        print_report(name, conc, thr, soaked, summary)
        print(
            f"\nrestored: {restored}; soak cache {soaked['cache_mb']:.1f} MB; problems (first 10):"
            f" {soaked['problems'][:10]}; {uptime()}",
            flush=True,
        )
        out = WORK / f"bench_soak-{name}{args.tag}.json"
        out.write_text(
            json.dumps(
                {
                    "corpus": name,
                    "concurrency": conc,
                    "threads": thr,
                    "soak": soaked,
                    "summary": summary,
                    "uptime_after": uptime(),
                },
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
