"""What the text-similarity signal costs a map: the same maps with it on and off, alternating.

    nice -n 10 python benchmarks/bench_text_similarity.py [--corpus DIR] [--rounds 20] [--tokens 1024]

Two ``hybridmap.RepoMap`` objects on one repository (default: a git copy of the standard
library, ``bench_edit.stdlib_corpus``), static mode, the one with ``text_similarity_boost`` and
``text_similarity_message_boost`` at 0 and the other at 2 and 1. First each one's cold map
after an untimed one without (the index read), with a chat file (the signal splits every
file's words then), timed; then ``--rounds`` rounds, each
asking both objects, in alternating order, for a map with a chat file never asked before in
that object (so the request's ranking is new, as an agent's next turn is) and a map with a
message. Medians and the ratio on/off. The machine is shared: the ratio is what to read.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.bench_edit import stdlib_corpus  # noqa: E402
from hybridmap import RepoMap  # noqa: E402

MESSAGE = "the decoder fails on a nested object with a trailing comma: raise a clear error"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()
    root = args.corpus or stdlib_corpus()
    off = {"text_similarity_boost": 0.0, "text_similarity_message_boost": 0.0, "use_cache": True}
    on = {"text_similarity_boost": 2.0, "text_similarity_message_boost": 1.0, "use_cache": True}
    results: dict[str, dict[str, list[float]]] = {"off": {}, "on": {}}
    with RepoMap(root, overrides=off) as map_off, RepoMap(root, overrides=on) as map_on:
        maps = {"off": map_off, "on": map_on}
        for repo in maps.values():  # each object's index read (from the disk cache), untimed
            repo.map(mode="static", tokens=64)
        files = sorted(p for p in map_off.tags() if p.endswith(".py"))
        rng = random.Random(7)
        chats = rng.sample(files, 2 * args.rounds + 2)
        for name, repo in maps.items():
            t0 = time.perf_counter()
            repo.map(mode="static", tokens=args.tokens, chat_files=[chats[0]])
            results[name]["cold chat map"] = [time.perf_counter() - t0]
        for i in range(args.rounds):
            order = ["off", "on"] if i % 2 == 0 else ["on", "off"]
            for name in order:
                repo = maps[name]
                t0 = time.perf_counter()
                repo.map(mode="static", tokens=args.tokens, chat_files=[chats[i + 1]])
                results[name].setdefault("new chat file", []).append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                repo.map(mode="static", tokens=args.tokens, message=f"{MESSAGE} ({i})")
                results[name].setdefault("message", []).append(time.perf_counter() - t0)
    out = {}
    for what in results["off"]:
        off_ms = statistics.median(results["off"][what]) * 1000
        on_ms = statistics.median(results["on"][what]) * 1000
        out[what] = {"off_ms": round(off_ms, 1), "on_ms": round(on_ms, 1), "ratio": round(on_ms / off_ms, 2)}
        print(f"{what:16} off {off_ms:8.1f} ms   on {on_ms:8.1f} ms   on/off {on_ms / off_ms:5.2f}")
    print(json.dumps({"corpus": str(root), "files": len(files), "rounds": args.rounds, "results": out}))


if __name__ == "__main__":
    main()
