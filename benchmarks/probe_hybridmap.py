"""Run hybridmap on a corpus in a fresh process (cold = empty cache). Prints one JSON line.

probe_hybridmap.py ROOT CHAT_A CHAT_B EDIT_FILE TOKENS CACHE_DIR
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time

from _common import edited

from hybridmap import RepoMap


def main() -> None:
    root, chat_a, chat_b, edit_file, tokens, cache_dir = sys.argv[1:7]
    budget = int(tokens)
    shutil.rmtree(cache_dir, ignore_errors=True)
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    repo = RepoMap(root, overrides={"cache_dir": cache_dir})

    def run(label: str, chat: list[str]) -> None:
        start = time.perf_counter()
        result = repo.map(chat_files=chat, tokens=budget, mode="static")
        out[label] = time.perf_counter() - start
        out[label + "_tokens"] = result.tokens
        if label == "cold":
            out.update({f"cold.{k}": v for k, v in result.timings.items()})
            out["files_parsed"] = result.stats["files_parsed"]

    run("cold", [])
    out["cold_with_init"] = time.perf_counter() - t0
    run("warm_same", [])
    run("warm_new_chat", [chat_a])
    run("warm_new_chat_2", [chat_b])
    with edited(os.path.join(root, edit_file)):
        run("warm_after_edit", [chat_b])
    repo.close()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["peak_rss_workers_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    main()
