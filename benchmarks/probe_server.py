"""One language server on one corpus, in a fresh process. Prints one JSON line.

    probe_server.py ROOT SERVER CACHE_DIR [--languages L1,L2] [--first-only --order sh|hs] [--api sync|async]

Only SERVER runs: every built-in language that names it (TypeScript, TSX and JavaScript share
one tsserver; C and C++ one clangd) gets ``language-servers = [SERVER]`` in a scratch config
directory, and every other language gets none, so no second server competes for the cores.

Full run (default): a warm-up static map (imports, OS file cache), then with a cold disk cache
each time: a static first map, a fresh object's first hybrid map (``server_wait=0``, the server
starts after it), a waiting map (``server_wait=900``: returns once everything a waiting map waits
for is done), then the background work (symbols of every other file) is drained and one more
waiting map is taken; symbols are counted by provenance in the merged tags. Peak RSS of the
server's process tree is sampled every 0.2 s from the first hybrid map to the end.

``--first-only``: only the two cold first maps, in the given order (``sh``: static first), the
hybrid one's server shut down before the other map when it comes first; with timestamps of when
the map coroutine began and ended on the loop thread (``--api sync``), to split the caller's
time into loop hand-off and map work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
from hybridmap.pipeline.merge import merge_tags
from hybridmap.sources.lsp.resolver import candidate_pairs
from hybridmap.sources.lsp.session import tree_rss_mb

_SERVERS_LINE = re.compile(r"language-servers = \[[^\]]*\]")
_NAMED = re.compile(r'"([^"]+)"')


def registry_with_only(server: str, scratch: Path) -> tuple[LanguageRegistry, list[str]]:
    """A registry where only ``server`` is a candidate (for every language naming it); its languages."""
    languages = []
    for path in sorted(BUILTIN_CONFIG_DIR.glob("*.toml")):
        text = path.read_text()
        match = _SERVERS_LINE.search(text)
        if match is None:
            continue
        names = _NAMED.findall(match.group(0))
        keep = [server] if server in names else []
        if keep:
            languages.append(path.stem)
        (scratch / path.name).write_text(_SERVERS_LINE.sub(f"language-servers = {json.dumps(keep)}", text))
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, scratch], [BUILTIN_QUERY_DIR]), languages


def provenance_counts(repo: RepoMap) -> dict[str, int]:
    """Symbols of the merged tags by provenance (benchmark introspection of the live object)."""
    inner = repo._async
    lsp = inner._engine.lsp
    merged = merge_tags(inner.tags(), lsp.outline.snapshot(), lsp.outline.details())
    counts: Counter[str] = Counter()
    for tags in merged.values():
        for symbol in tags.symbols:
            counts[str(symbol.provenance)] += 1
            if str(symbol.provenance) == "lsp":
                counts[f"added_{symbol.kind}"] += 1
            if symbol.detail:
                counts["with_detail"] += 1
    return dict(counts)


def pair_counts(repo: RepoMap) -> dict[str, int]:
    """Candidate and answered (file, identifier) pairs: ambiguous (2+ definers) or generic (1)."""
    inner = repo._async
    lsp = inner._engine.lsp
    definers = inner._engine._definer_counts
    languages = set(lsp._planned_languages)
    candidates = candidate_pairs(inner.tags(), lsp.documents._languages, definers, languages, set(), inner.settings)
    counts: Counter[str] = Counter()
    for (_, name), _sites in candidates:
        counts["candidates_ambiguous" if definers.get(name, 0) > 1 else "candidates_generic"] += 1
    for (_, name), resolution in lsp.resolver._resolved.items():
        kind = "ambiguous" if definers.get(name, 0) > 1 else "generic"
        counts[f"{kind}_{'in_repo' if resolution.targets else 'outside'}"] += 1
    return dict(counts)


def uptime() -> str:
    """The 1, 5 and 15 minute load averages (other agents share the two cores)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cold(cache_dir: str) -> None:
    shutil.rmtree(cache_dir, ignore_errors=True)


def timed_map(repo: RepoMap, **kwargs: Any) -> tuple[Any, dict[str, float]]:
    """``repo.map(**kwargs)`` through the sync facade, with loop-side timestamps."""
    marks: dict[str, float] = {}

    async def run() -> Any:
        marks["loop_enter"] = time.perf_counter()
        result = await repo._async.map(**kwargs)
        marks["loop_exit"] = time.perf_counter()
        return result

    marks["call"] = time.perf_counter()
    result = repo._call(run())
    marks["return"] = time.perf_counter()
    return result, {
        "seconds": marks["return"] - marks["call"],
        "to_loop": marks["loop_enter"] - marks["call"],
        "in_loop": marks["loop_exit"] - marks["loop_enter"],
        "back_to_caller": marks["return"] - marks["loop_exit"],
        "map_total": result.timings.get("total", 0.0),
    }


def first_maps_sync(root: str, registry: LanguageRegistry, cache_dir: str, order: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("static", "hybrid") if order == "sh" else ("hybrid", "static"):
        cold(cache_dir)
        with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
            result, marks = timed_map(repo, mode=mode, tokens=1024)
            out[f"first_map_{mode}_s"] = marks["seconds"]
            out[f"first_map_{mode}_marks"] = marks
            out[f"first_map_{mode}_timings"] = result.timings
    return out


async def first_maps_async(root: str, registry: LanguageRegistry, cache_dir: str, order: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("static", "hybrid") if order == "sh" else ("hybrid", "static"):
        cold(cache_dir)
        async with AsyncRepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
            start = time.perf_counter()
            result = await repo.map(mode=mode, tokens=1024)
            out[f"first_map_{mode}_s"] = time.perf_counter() - start
            out[f"first_map_{mode}_timings"] = result.timings
    return out


def full_run(root: str, registry: LanguageRegistry, languages: list[str], cache_dir: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cold(cache_dir)
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir}) as repo:
        static, marks = timed_map(repo, mode="static", tokens=1024)
        out["first_map_static_s"] = marks["seconds"]
        out["name_match_edges_static"] = static.edges.get("name-match", 0)
        out["symbols_static"] = sum(len(t.symbols) for t in repo._async.tags().values())
    cold(cache_dir)
    # refresh = "always": a map reuses the last map's result when nothing changed (api.py), and
    # its key does not hold server_wait, so the waiting map below would return the first one's.
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache_dir, "refresh": "always"}) as repo:
        first, marks = timed_map(repo, mode="hybrid", tokens=1024)
        out["first_map_hybrid_s"] = marks["seconds"]
        out["first_map_state"] = {lang: str(r.state) for lang, r in first.servers.items()}
        lsp = repo._async._engine.lsp  # benchmark introspection only
        peak = [0.0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                pids = {s.pid for s in lsp.pool.sessions() if s.pid}  # started after the first map
                peak[0] = max(peak[0], sum(tree_rss_mb(pid) for pid in pids))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        full = repo.map(mode="hybrid", server_wait=900, tokens=1024)
        out["resolve_all_s"] = time.perf_counter() - start
        reports = {lang: full.servers[lang] for lang in languages if lang in full.servers}
        main = next(iter(reports.values()), None)
        out["state"] = str(main.state) if main else "none"
        out["seconds_to_ready"] = main.seconds_to_ready if main else None
        out["version"] = main.detail if main else ""
        out["edges"] = full.edges
        out["stats"] = {k: v for k, v in full.stats.items() if k.startswith("lsp_")}
        out["symbols_at_wait"] = provenance_counts(repo)
        out["pairs_at_wait"] = pair_counts(repo)

        async def drain() -> None:
            # Polled: the worker has no event to wait on, and this probe must not add one.
            worker = lsp._queue._worker  # the work queue's task (LspSource._queue since the split)
            while lsp.pending or (worker is not None and not worker.done()):
                await asyncio.sleep(0.05)
                worker = lsp._queue._worker

        start = time.perf_counter()
        repo._call(drain())
        out["drain_s"] = time.perf_counter() - start
        again = repo.map(mode="hybrid", server_wait=900, tokens=1024)
        out["edges_after_drain"] = again.edges
        out["stats_after_drain"] = {k: v for k, v in again.stats.items() if k.startswith("lsp_")}
        out["symbols_after_drain"] = provenance_counts(repo)
        out["pairs_after_drain"] = pair_counts(repo)
        out["shown_with_detail"] = sum(1 for f in again.files for s in f.symbols if s.detail)
        out["shown_symbols"] = sum(len(f.symbols) for f in again.files)
        stop.set()
        sampler.join()
        out["peak_server_rss_mb"] = round(peak[0], 1)
        out["sessions"] = len(lsp.pool.sessions())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("server")
    ap.add_argument("cache_dir")
    ap.add_argument("--first-only", action="store_true")
    ap.add_argument("--order", choices=("sh", "hs"), default="sh")
    ap.add_argument("--api", choices=("sync", "async"), default="sync")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="probe-server-"))
    try:
        registry, languages = registry_with_only(args.server, scratch)
        import hybridmap

        out: dict[str, Any] = {
            "server": args.server,
            "languages": languages,
            "load_before": uptime(),
            "hybridmap": str(Path(hybridmap.__file__).parent),
        }
        # Warm the OS file cache and imports once, so neither measured map pays for them.
        cold(args.cache_dir)
        with RepoMap(args.root, registry=registry, overrides={"cache_dir": args.cache_dir}) as repo:
            repo.map(mode="static", tokens=1024)
        if args.first_only:
            out["order"], out["api"] = args.order, args.api
            if args.api == "sync":
                out.update(first_maps_sync(args.root, registry, args.cache_dir, args.order))
            else:
                out.update(asyncio.run(first_maps_async(args.root, registry, args.cache_dir, args.order)))
        else:
            out.update(full_run(args.root, registry, languages, args.cache_dir))
        out["load_after"] = uptime()
        print(json.dumps(out))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        cold(args.cache_dir)


if __name__ == "__main__":
    sys.exit(main())
