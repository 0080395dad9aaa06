"""An index artifact against a cold map: the first map on a machine whose cache is empty.

    nice -n 10 python benchmarks/bench_artifact.py ROOT [--rounds 3]

What a fleet of agents or CI jobs pays for its first map of a large repository
(``gen_monorepo.py``'s) with and without an artifact built once elsewhere
(``hybridmap index --export``, issue 29). Once, before the rounds: the export (timed). Then each
round, alternating the order, in fresh cache directories:

* **cold**: ``hybridmap map ROOT --mode static`` (one-shot, no daemon) into an empty cache;
* **artifact**: ``hybridmap index ROOT --import FILE`` into an empty cache, then the same map.

Each step is a whole process, timed by wall clock and by its CPU (user + system, from
``wait4``'s rusage: the parse workers are its children and counted). No parse deadline
(``parse_deadline_seconds`` 0) in both, so the cold map parses every file as the export did.
Medians over rounds; the ratio is the artifact's CPU (import + map) over the cold map's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import run_hybridmap

ENV = {**os.environ, "HYBRIDMAP_DAEMON": "off"}


def run(args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one hybridmap command."""
    return run_hybridmap(args, ENV)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = str(args.root.resolve())
    work = Path(tempfile.mkdtemp(prefix="bench-artifact-"))
    config = work / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("parse_deadline_seconds = 0\nmax_files = 200000\n")
    ENV["XDG_CONFIG_HOME"] = str(work / "config")
    artifact = work / "index.hmi"
    out = sys.stderr
    try:
        export = run(["index", root, "--export", str(artifact)])
        size = artifact.stat().st_size
        print(f"export: {export[0]:.1f} s wall, {export[1]:.1f} s CPU, {size / 1e6:.1f} MB", file=out)
        rows: dict[str, list[tuple[float, float]]] = {"cold": [], "import": [], "map after import": []}
        for r in range(args.rounds):
            for kind in ("cold", "artifact") if r % 2 == 0 else ("artifact", "cold"):
                cache = work / f"cache-{r}-{kind}"
                map_args = ["map", root, "--mode", "static", "--tokens", "2048", "--cache-dir", str(cache)]
                if kind == "cold":
                    rows["cold"].append(run(map_args))
                else:
                    rows["import"].append(run(["index", root, "--import", str(artifact), "--cache-dir", str(cache)]))
                    rows["map after import"].append(run(map_args))
                shutil.rmtree(cache, ignore_errors=True)
                print(f"round {r + 1} {kind}: {json.dumps({k: v[-1] for k, v in rows.items() if v})}", file=out)
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
        both_cpu = [i[1] + m[1] for i, m in zip(rows["import"], rows["map after import"], strict=True)]
        both_wall = [i[0] + m[0] for i, m in zip(rows["import"], rows["map after import"], strict=True)]
        summary = {
            "export": {"wall": export[0], "cpu": export[1], "bytes": size},
            **{k: {"wall": w, "cpu": c} for k, (w, c) in med.items()},
            "artifact (import + map)": {"wall": statistics.median(both_wall), "cpu": statistics.median(both_cpu)},
            "cpu ratio artifact/cold": statistics.median(both_cpu) / med["cold"][1],
            "wall ratio artifact/cold": statistics.median(both_wall) / med["cold"][0],
        }
        print(json.dumps(summary, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
