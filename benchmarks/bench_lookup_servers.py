"""What the language servers add to ``hybridmap search`` and ``hybridmap dead``, and what it costs.

    python benchmarks/bench_lookup_servers.py [--corpus DIR ...] [--max-files-share 0.5] [--queries 30]

For each corpus (default: rich, chi and hono under ``benchmarks/.work/corpora``), one long-lived
map, as the MCP server keeps:

* its servers are started and waited for once (``search_symbols(..., server_wait=120)``);
* ``--queries`` definition names are drawn from the index (every k-th distinct function, method or
  class name of at least 6 characters, sorted), each asked three ways: as written, its first two
  thirds (a prefix) and with two middle letters swapped (a typo); each query once static (index
  only) and once hybrid (index + every ready server's ``workspace/symbol``), limit 20;
* counted per query: hybrid entries only a server returned, split by how the index's rules rank
  them (``server``: only the server's own fuzzy matching accepts the name), and in files the
  listing holds or not; entries both found; milliseconds static and hybrid; each server's time;
* ``dead_code`` static and hybrid: candidates, resolved, refuted, left name-matched, seconds;
* then the same searches with ``max_files`` at ``--max-files-share`` of the files the first map
  listed: what the servers find in the files left out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from hybridmap import RepoMap  # noqa: E402

KINDS = frozenset({"function", "method", "class"})


def names_of(repo: RepoMap, count: int) -> list[str]:
    names = sorted(
        {s.name for tags in repo.tags().values() for s in tags.symbols if s.kind in KINDS and len(s.name) >= 6}
    )
    step = max(1, len(names) // count)
    return names[::step][:count]


def variants(name: str) -> list[tuple[str, str]]:
    middle = len(name) // 2
    typo = name[: middle - 1] + name[middle] + name[middle - 1] + name[middle + 1 :]
    return [("exact", name), ("prefix", name[: max(3, len(name) * 2 // 3)]), ("typo", typo)]


def timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    answer = call()
    return time.perf_counter() - started, answer


def searches(repo: RepoMap, names: list[str]) -> dict[str, Any]:
    listed = set(repo.tags())
    rows: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        for how, query in variants(name):
            static_s, static = timed(lambda q=query: repo.search_symbols(q, mode="static"))
            hybrid_s, hybrid = timed(lambda q=query: repo.search_symbols(q))
            only = [m for m in hybrid.matches if "index" not in m.sources]
            rows.setdefault(how, []).append(
                {
                    "static_ms": static_s * 1000,
                    "hybrid_ms": hybrid_s * 1000,
                    "server_ms": [a.seconds * 1000 for a in hybrid.servers],
                    "outcomes": [a.outcome for a in hybrid.servers],
                    "both": sum(1 for m in hybrid.matches if len(m.sources) > 1),
                    "server_only_ranked": sum(1 for m in only if m.match != "server"),
                    "server_only_fuzzy": sum(1 for m in only if m.match == "server"),
                    "server_only_unlisted": sum(1 for m in only if m.path not in listed),
                    "found_asked": any(m.name == name for m in hybrid.matches),
                    "found_asked_static": any(m.name == name for m in static.matches),
                }
            )
    return {how: summary(each) for how, each in rows.items()}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    server_ms = [ms for row in rows for ms in row["server_ms"]]
    return {
        "queries": len(rows),
        "static_median_ms": round(statistics.median(r["static_ms"] for r in rows), 2),
        "hybrid_median_ms": round(statistics.median(r["hybrid_ms"] for r in rows), 2),
        "hybrid_max_ms": round(max(r["hybrid_ms"] for r in rows), 2),
        "server_median_ms": round(statistics.median(server_ms), 2) if server_ms else None,
        "server_max_ms": round(max(server_ms), 2) if server_ms else None,
        "not_answered": sum(1 for r in rows for o in r["outcomes"] if o != "answered"),
        "queries_with_server_only_hits": sum(1 for r in rows if r["server_only_ranked"] + r["server_only_fuzzy"]),
        "server_only_ranked": sum(r["server_only_ranked"] for r in rows),
        "server_only_fuzzy": sum(r["server_only_fuzzy"] for r in rows),
        "server_only_unlisted": sum(r["server_only_unlisted"] for r in rows),
        "both": sum(r["both"] for r in rows),
        "asked_name_found_static": sum(r["found_asked_static"] for r in rows),
        "asked_name_found_hybrid": sum(r["found_asked"] for r in rows),
    }


def dead(repo: RepoMap) -> dict[str, Any]:
    static_s, static = timed(lambda: repo.dead_code(mode="static"))
    hybrid_s, hybrid = timed(lambda: repo.dead_code())
    return {
        "static_s": round(static_s, 2),
        "hybrid_s": round(hybrid_s, 2),
        "candidates": len(static.definitions),
        "asked": hybrid.asked,
        "resolved": sum(1 for d in hybrid.definitions if d.evidence == "resolved"),
        "resolved_dead": sum(1 for d in hybrid.definitions if d.evidence == "resolved" and d.status == "dead"),
        "resolved_test_only": sum(
            1 for d in hybrid.definitions if d.evidence == "resolved" and d.status == "test-only"
        ),
        "refuted": len(hybrid.refuted),
        "refuted_examples": [f"{d.path}:{d.line} {d.name} <- {', '.join(d.used_by[:2])}" for d in hybrid.refuted[:5]],
        "name_matched": sum(1 for d in hybrid.definitions if d.evidence != "resolved"),
        "notes": [d.message for d in hybrid.diagnostics],
    }


def run(corpus: Path, cache: Path, queries: int, share: float) -> dict[str, Any]:
    out: dict[str, Any] = {"corpus": corpus.name}
    with RepoMap(corpus, overrides={"cache_dir": str(cache)}) as repo:
        ready_s, first = timed(lambda: repo.search_symbols("main", server_wait=120))
        out["files"] = len(repo.tags())
        out["servers"] = [(a.server, a.root, a.outcome) for a in first.servers]
        out["servers_ready_s"] = round(ready_s, 1)
        names = names_of(repo, queries)
        out["search"] = searches(repo, names)
        out["dead"] = dead(repo)
        listed = len(repo.tags())
    max_files = max(1, int(listed * share))
    with RepoMap(corpus, overrides={"cache_dir": str(cache), "max_files": max_files}) as repo:
        repo.search_symbols("main", server_wait=120)
        out["cut"] = {"max_files": max_files, "indexed": len(repo.tags()), "search": searches(repo, names)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    corpora = HERE / ".work/corpora"
    parser.add_argument("--corpus", type=Path, action="append")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--max-files-share", type=float, default=0.5)
    args = parser.parse_args()
    chosen = args.corpus or [corpora / "rich", corpora / "chi", corpora / "hono"]
    results = [run(c, HERE / ".work/lookup-cache", args.queries, args.max_files_share) for c in chosen]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
