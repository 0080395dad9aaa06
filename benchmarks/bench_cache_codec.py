"""The disk cache's own encoding (hybridmap/store/codec.py) against the pickle it replaced, same run.

    python benchmarks/bench_cache_codec.py [--repeats 3] [--baseline 524ec53] [--corpus PATH]

Corpus: a copy of the Python standard library (benchmarks/.work/corpora/stdlib, as in
bench_static.py) unless --corpus is given.

1. *codec*: every parse outcome a map of the corpus caches (read back from a real cache),
   encoded and decoded in this process: ``pickle.dumps``/``loads`` (highest protocol, what
   diskcache used) against ``codec.encode``/``decode``; medians over the repeats, and total bytes.
2. *warm map from a disk cache*: a fresh process opens a cache filled by a cold map and maps the
   corpus (``RepoMap(...).map(tokens=1024, mode="static")``): hybridmap at ``--baseline`` (the
   last commit that pickled, imported from a ``git archive`` of it) against this checkout,
   alternating; medians of the map's wall time and of its cache lookup phase.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(HERE))

from bench_static import prepare_stdlib  # noqa: E402

from hybridmap.store import codec  # noqa: E402
from hybridmap.store.cache import Cache, disk_key  # noqa: E402

#: Maps argv ROOT with the cache at CACHE, with the hybridmap package found in PACKAGE_PARENT.
PROBE = textwrap.dedent("""
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    import hybridmap
    from hybridmap import RepoMap
    assert hybridmap.__file__.startswith(sys.argv[1])
    started = time.perf_counter()
    with RepoMap(sys.argv[2], overrides={"cache_dir": sys.argv[3]}, start_servers=False) as repo:
        result = repo.map(tokens=1024, mode="static")
    t = result.timings  # the index phase less what it names: cache lookup (+ store: none when warm)
    lookup = t["index"] - t["index.list"] - t["index.read"] - t["index.parse"]
    print(json.dumps({"map": time.perf_counter() - started, "cache_lookup": lookup,
                      "files_parsed": result.stats["files_parsed"], "cache_hits": result.stats["cache_hits"],
                      "text": result.text}))
""")


def baseline_tree(commit: str) -> Path:
    """The package as it was at ``commit``, from git archive (scratch, under benchmarks/.work)."""
    target = WORK / f"hybridmap-{commit}"
    if not target.exists():
        target.mkdir(parents=True)
        # Before the package data moved into hybridmap/, lsp_configs/ and queries/ sat beside it.
        data = subprocess.run(
            ["git", "-C", str(PROJECT), "ls-tree", "--name-only", commit, "lsp_configs", "queries"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        archive = subprocess.run(
            ["git", "-C", str(PROJECT), "archive", commit, "hybridmap", *data], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def probe(package_parent: Path, root: Path, cache: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(package_parent), str(root), str(cache)],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    if proc.returncode != 0:
        raise SystemExit(f"probe failed ({package_parent}):\n{proc.stderr}")
    return json.loads(proc.stdout)


def cached_outcomes(cache_dir: Path) -> list[Any]:
    """Every parse outcome the cold map stored, decoded by today's cache."""
    prefix = disk_key("tags:")
    with sqlite3.connect(cache_dir / "cache.db") as db:
        keys = [k[len(disk_key("")) :] for (k,) in db.execute("SELECT key FROM Cache") if k.startswith(prefix)]
    cache = Cache(cache_dir)
    try:
        return list(cache.get_many(keys).values())
    finally:
        cache.close()


def median_seconds(repeats: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_codec(values: list[Any], repeats: int) -> dict[str, float]:
    pickled = [pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for v in values]
    ours = [codec.encode(v) for v in values]
    assert [codec.decode(b) for b in ours] == values
    return {
        "pickle_encode": median_seconds(
            repeats, lambda: [pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for v in values]
        ),
        "codec_encode": median_seconds(repeats, lambda: [codec.encode(v) for v in values]),
        "pickle_decode": median_seconds(repeats, lambda: [pickle.loads(b) for b in pickled]),  # noqa: S301 - bytes this benchmark pickled
        "codec_decode": median_seconds(repeats, lambda: [codec.decode(b) for b in ours]),
        "pickle_bytes": float(sum(map(len, pickled))),
        "codec_bytes": float(sum(map(len, ours))),
    }


def bench_warm(root: Path, baseline: Path, repeats: int) -> dict[str, dict[str, float]]:
    caches = {"pickle": WORK / "codec-cache-pickle", "ours": WORK / "codec-cache-ours"}
    packages = {"pickle": baseline, "ours": PROJECT}
    for name, cache in caches.items():
        subprocess.run(["rm", "-rf", str(cache)], check=True)
        cold = probe(packages[name], root, cache)  # fills the cache
        assert cold["files_parsed"] > 0
    runs: dict[str, list[dict[str, Any]]] = {"pickle": [], "ours": []}
    for _ in range(repeats):
        for name in runs:  # alternating: both see the same machine minute by minute
            runs[name].append(probe(packages[name], root, caches[name]))
    assert runs["pickle"][0]["text"] == runs["ours"][0]["text"]
    out = {}
    for name, results in runs.items():
        assert all(r["files_parsed"] == 0 for r in results), results[0]["files_parsed"]
        out[name] = {key: statistics.median(r[key] for r in results) for key in ("map", "cache_lookup", "cache_hits")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", default="524ec53", help="the last commit whose cache pickled")
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    root = args.corpus.resolve() if args.corpus else prepare_stdlib()
    warm = bench_warm(root, baseline_tree(args.baseline), args.repeats)
    values = cached_outcomes(WORK / "codec-cache-ours")
    figures = bench_codec(values, args.repeats)
    print(f"corpus: {root} ({len(values)} cached parse outcomes)")
    for step in ("encode", "decode"):
        p, c = figures[f"pickle_{step}"], figures[f"codec_{step}"]
        print(f"{step} all: pickle {p * 1000:.0f} ms, codec {c * 1000:.0f} ms ({c / p:.2f} x)")
    print(
        f"bytes: pickle {figures['pickle_bytes'] / 1e6:.1f} MB, codec {figures['codec_bytes'] / 1e6:.1f} MB "
        f"({figures['codec_bytes'] / figures['pickle_bytes']:.2f} x)"
    )
    for key in ("map", "cache_lookup"):
        p, c = warm["pickle"][key], warm["ours"][key]
        print(
            f"warm map from disk, {key}: pickle ({args.baseline}) {p * 1000:.0f} ms, codec {c * 1000:.0f} ms "
            f"({c / p:.2f} x)"
        )
    print(f"cache hits: {warm['pickle']['cache_hits']:.0f} / {warm['ours']['cache_hits']:.0f}")


if __name__ == "__main__":
    main()
