"""Language-server benchmark: each server on a real project of its language, same machine, same run.

    python benchmarks/bench_servers.py [--repeats 3]

Corpora (scratch copies under benchmarks/.work/, never committed): click from site-packages
(Python), ky (TypeScript), jq (C), pflag (Go); the last three come from the search tool's
repository mirrors under /work/.mirror when present.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import extract_mirror  # noqa: E402
WORK = HERE / ".work"

CORPORA = {
    "click": ("python", ["ty", "basedpyright", "pylsp"]),
    "ky": ("typescript", ["typescript-language-server"]),
    "jq": ("c", ["clangd"]),
    # gin needs third-party modules that cannot be fetched offline (gopls: "no package
    # metadata"); pflag has no dependencies.
    "pflag": ("go", ["gopls"]),
}
MIRRORS = {"ky": "sindresorhus+ky", "jq": "jqlang+jq", "pflag": "spf13+pflag"}


def prepare(name: str) -> Path | None:
    dest = WORK / "corpora" / name
    if dest.exists():
        return dest
    if name == "click":
        import click

        shutil.copytree(Path(click.__file__).parent, dest / "click",
                        ignore=shutil.ignore_patterns("__pycache__"))
        return dest
    mirror = Path("/work/.mirror") / MIRRORS[name] / "repo"
    if not mirror.exists():
        return None
    extract_mirror(mirror, dest)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--corpus", action="append", default=None)
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    rows = []
    for name in args.corpus or list(CORPORA):
        language, servers = CORPORA[name]
        root = prepare(name)
        if root is None:
            print(f"skipping {name}: no mirror")
            continue
        files = sum(1 for p in root.rglob("*") if p.is_file())
        for server in servers:
            runs = []
            for _ in range(args.repeats):
                proc = subprocess.run([sys.executable, str(HERE / "probe_server.py"), str(root), language, server,
                                       str(WORK / "server-cache")], capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"{server} on {name} failed:\n{proc.stderr[-2000:]}")
                    break
                runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            if not runs:
                continue

            def med(key: str, runs: list[dict] = runs) -> float:
                values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
                return statistics.median(values) if values else float("nan")

            rows.append({"corpus": name, "files": files, "server": server, "runs": runs,
                         "version": runs[0]["version"], "state": runs[0]["state"],
                         "ready": med("seconds_to_ready"), "resolve": med("resolve_all_s"),
                         "first_static": med("first_map_static_s"), "first_hybrid": med("first_map_hybrid_s"),
                         "lsp_edges": statistics.median(r["edges"].get("lsp", 0) for r in runs),
                         "nm_edges": statistics.median(r["edges"].get("name-match", 0) for r in runs),
                         "nm_static": med("name_match_edges_static"), "pairs": med("pairs_resolved"),
                         "requests": med("requests"), "empty": med("empty_answers"), "errors": med("errors"),
                         "rss": med("peak_server_rss_mb")})
    print(f"\nmedians of {args.repeats} runs\n")
    print("| corpus | server | state | ready (s) | resolve all (s) | pairs resolved | requests | empty | errors |"
          " edges lsp / name-match (static: name-match) | peak server RSS | first map hybrid / static |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in rows:
        print(f"| {r['corpus']} ({r['files']} files) | {r['server']} ({r['version']}) | {r['state']} | {r['ready']:.2f} |"
              f" {r['resolve']:.2f} | {r['pairs']:.0f} | {r['requests']:.0f} | {r['empty']:.0f} | {r['errors']:.0f} |"
              f" {r['lsp_edges']:.0f} / {r['nm_edges']:.0f} ({r['nm_static']:.0f}) | {r['rss']:.0f} MB |"
              f" {r['first_hybrid']:.3f} / {r['first_static']:.3f} = {r['first_hybrid'] / r['first_static']:.2f} |")
    (WORK / "bench_servers.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
