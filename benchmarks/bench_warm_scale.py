"""A long-lived map of a large repository: warm maps with a new chat file, this tree against an
older commit, alternating.

    nice -n 10 python benchmarks/bench_warm_scale.py ROOT --baseline COMMIT [--rounds 2] [--maps 5]

What an agent's long-lived map (the MCP server, the Python API, the daemon) pays per turn on a
repository of ``gen_monorepo.py``'s size. Each round runs, for each system (this tree, and
``--baseline`` extracted with ``git archive``), one process that opens ``RepoMap`` on ROOT
(``max_files`` 200,000, servers off, the disk cache shared: keys are content hashes), makes its
first map from the filled cache, then ``--maps`` static maps of 2,048 tokens each with another
chat file (Python files in a fixed shuffled order), first without a watch (every map lists and
stats the files: what the ``auto`` refresh policy does, and what the daemon does on every call)
and then with one (a healthy watch: nothing is re-read), and the same request again; then, in
each of the two, ``--maps`` edits: a definition appended to a Python file, timed from the save to
the first map (that file in the chat) that has read it (a watch without sync hears of an edit
after its debounce; the files are put back after each part). The edited files are that part's
new-chat files, each edit's map asking for a file the map before it did not: an edit's map and a
new-chat map then read the same chat files' words (the text similarity's query costs 15-370 ms
at 100,000 files depending on the chat file, so other files would compare their words, not the
edit). Medians per process; the rounds alternate the systems so both meet the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import baseline_tree  # noqa: E402

WORK = HERE / ".work" / "warm-scale"

PROBE = r"""
import json, random, statistics, sys, time
from pathlib import Path
from hybridmap import RepoMap

root, cache, maps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
overrides = {"cache_dir": cache, "max_files": 200_000, "parse_deadline_seconds": 3600}
out = {}


def edit_then_map(repo, path, n, label):
    # Append a definition, then map with that file in the chat until the map has read it (a
    # watch without sync hears of it only after its debounce): the time from save to a map with it.
    name = f"bench_edit_{label.replace(' ', '_').replace(',', '')}_{n}"
    with open(root / path, "a") as handle:
        handle.write(f"\n\ndef {name}():\n    return {n}\n")
    t = time.perf_counter()
    while True:
        repo.map(mode="static", tokens=2048, chat_files=[path])
        if any(s.name == name for s in repo.tags()[path].symbols):
            return time.perf_counter() - t
        time.sleep(0.01)


with RepoMap(root, overrides=overrides, start_servers=False) as repo:
    t = time.perf_counter(); repo.map(mode="static", tokens=2048); out["first"] = time.perf_counter() - t
    chats = sorted(p for p in repo.tags() if p.endswith(".py"))
    random.Random(0).shuffle(chats)
    phase = {"no watch": chats[:maps], "watch": chats[maps : 2 * maps]}
    saved = {path: (root / path).read_bytes() for path in chats[: 2 * maps]}
    try:
        for label in ("no watch", "watch"):
            if label == "watch":
                repo.watch()
            times = []
            for chat in phase[label]:
                t = time.perf_counter(); result = repo.map(mode="static", tokens=2048, chat_files=[chat])
                times.append(time.perf_counter() - t)
            t = time.perf_counter()
            repo.map(mode="static", tokens=2048, chat_files=[chat])
            same = time.perf_counter() - t
            edits = [edit_then_map(repo, path, n, label) for n, path in enumerate(phase[label])]
            out[label] = {
                "new chat": statistics.median(times),
                "same request": same,
                "rank": result.timings.get("rank"),
                "edit to map": statistics.median(edits),
            }
            if label == "no watch":
                for path, data in saved.items():
                    (root / path).write_bytes(data)
    finally:
        for path, data in saved.items():
            (root / path).write_bytes(data)
print(json.dumps(out))
"""


def probe(tree: Path, root: Path, cache: Path, maps: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(root), str(cache), str(maps)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--maps", type=int, default=5)
    args = parser.parse_args()
    os.nice(max(0, 10 - os.nice(0)))
    systems = {"this tree": HERE.parent, f"at {args.baseline}": baseline_tree(args.baseline, WORK)}
    cache = WORK / "cache"
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in systems}
    for _ in range(args.rounds):
        for name, tree in systems.items():
            runs[name].append(probe(tree, args.root.resolve(), cache, args.maps))
    report: dict[str, object] = {"root": str(args.root), "rounds": args.rounds, "maps": args.maps, "runs": runs}
    for name, rows in runs.items():
        report[name] = {
            f"{label}: {key}": round(statistics.median(float(r[label][key]) for r in rows), 3)  # type: ignore[index]
            for label in ("no watch", "watch")
            for key in ("new chat", "same request", "rank", "edit to map")
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
