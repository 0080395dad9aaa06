"""A one-shot map, this tree against an older commit, alternating: what a CLI call costs.

    nice -n 5 python benchmarks/bench_oneshot.py ROOT --baseline COMMIT [--rounds 4] [--cold]

Each round runs ``hybridmap map ROOT --mode static --chat FILE`` (2,048 tokens, no daemon) once
with this tree and once with hybridmap at ``--baseline`` (``git archive`` into
``benchmarks/.work/oneshot``), the order alternating between rounds, the same chat file for both
and another one each round (source files spread over the tree): a whole process each, wall
clock and CPU (user + system of it and its children, from ``wait4``).

Warm (the default): each version has its own cache directory, filled by one untimed map before
the rounds, as a user's cache is after a first call. (They shared one while only the content-keyed
entries were kept there; what a process keeps for the next on its root (the files' states, the
lexical models, the graph) is one file per root, and two versions that write it in different
formats would each find the other's and start cold.) ``--cold``: each run gets a new, empty cache
directory. No parse deadline and ``max_files`` 200,000 (a ``gen_monorepo.py 100000`` tree has
more files than the default). Medians and the new/old ratio of each pair's CPU; the peak resident
memory of the largest process of each run (``wait4``'s ``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import baseline_tree, run_hybridmap_measured

HERE = Path(__file__).resolve().parent
CONFIG = "parse_deadline_seconds = 0\nmax_files = 200000\n"


def chat_files(root: Path, count: int) -> list[str]:
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True)
    files = [f for f in listed.stdout.splitlines() if f.endswith((".py", ".go", ".ts", ".java", ".rs"))]
    step = max(1, len(files) // (count + 1))
    return files[step::step][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--baseline", required=True, help="the commit to compare against")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cold", action="store_true", help="an empty cache for every run")
    args = parser.parse_args()
    root = args.root.resolve()
    old_tree = baseline_tree(args.baseline, HERE / ".work" / "oneshot")
    systems = {"new": str(HERE.parent), "old": str(old_tree)}
    with tempfile.TemporaryDirectory(prefix="hm-oneshot-") as work:
        config = Path(work) / "config"
        (config / "hybridmap").mkdir(parents=True)
        (config / "hybridmap" / "config.toml").write_text(CONFIG)
        base_env = {**os.environ, "HYBRIDMAP_DAEMON": "off", "XDG_CONFIG_HOME": str(config)}

        def run(system: str, chat: str, run_id: int) -> tuple[float, float, float]:
            cache = Path(work) / (f"cold-{run_id}" if args.cold else f"cache-{system}")
            env = {**base_env, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": systems[system]}
            try:
                return run_hybridmap_measured(
                    ["map", str(root), "--mode", "static", "--tokens", "2048", "--chat", chat], env
                )
            finally:
                if args.cold:
                    shutil.rmtree(cache, ignore_errors=True)

        files = chat_files(root, args.rounds + 1)
        if not args.cold:
            for system in systems:  # each version's own entries (a format change misses once)
                run(system, files[-1], 0)
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in systems}
        for i, chat in enumerate(files[: args.rounds]):
            order = list(systems) if i % 2 == 0 else list(reversed(systems))
            for system in order:
                wall, cpu, peak = run(system, chat, i * 2 + order.index(system) + 1)
                results[system].append((wall, cpu, peak))
                print(f"round {i + 1} {system}: {wall:.1f} s wall, {cpu:.1f} s CPU, peak {peak:,.0f} MB", flush=True)
    for system, runs in results.items():
        walls, cpus, peaks = zip(*runs, strict=True)
        print(
            f"{system}: median {statistics.median(walls):.1f} s wall, {statistics.median(cpus):.1f} s CPU, "
            f"peak {statistics.median(peaks):,.0f} MB"
        )
    ratios = [n[1] / o[1] for n, o in zip(results["new"], results["old"], strict=True)]
    print("new/old CPU per pair:", ", ".join(f"{r:.2f}" for r in ratios), f"(median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
