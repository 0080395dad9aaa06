"""The lexical peer: BM25 over each source file's text, the classic baseline of localization.

For each task it lists the ``BM25_FILES`` files whose words (:func:`hybridmap.languages.lexical.words`)
best match the task's words, chat files left out (a map never lists them either):

- **co-edit**: the words of the chat file's own text (**diff**: of the files of the change made);
- **message**: the identifiers and file names the commit message names;
- **message-text**: the words of the message as written.

A list of file paths, no definitions: what it is scored on is where the right files are. The
same list answers every budget (it costs a few hundred tokens; a budget smaller than that keeps
the files that fit). The index (SQLite FTS5's ``bm25()``, :class:`~hybridmap.languages.lexical.Bm25Files`)
lives for the whole run: a file unchanged between two checkouts is read (its hash says so) but
not split or indexed again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from ...languages.lexical import Bm25Files, words
from ...model import FileStatus
from ...pipeline.pack.tokens import Counter
from ...settings import Settings
from ...workspace.walk import read_source
from .metrics import MapOutcome, ShownFile
from .systems import Request, SystemRun
from .tasks import Task

#: Files the peer lists per task (the baseline of the issue that introduced it: 20 paths).
BM25_FILES = 20


class Bm25Peer:
    """One run's lexical peer: the index, kept across checkouts."""

    name = "bm25"

    def __init__(self, settings: Settings, counter: Counter) -> None:
        self._settings = settings
        self._counter = counter
        self._index = Bm25Files()
        self._words: dict[str, list[str]] = {}

    def close(self) -> None:
        self._index.close()

    def _refresh(self, root: Path, files: Sequence[str]) -> None:
        self._index.keep_only(files)
        held, self._words = self._words, {}
        for path in files:
            read = read_source(root, path, self._settings)
            if read.status is not FileStatus.OK:
                self._index.remove(path)
                continue
            if self._index.key(path) == read.sha256 and path in held:
                self._words[path] = held[path]  # unchanged since the last checkout
                continue
            file_words = words(read.data.decode("utf-8", "replace"))
            self._words[path] = file_words
            self._index.put(path, file_words, read.sha256)

    def _query(self, task: Task) -> list[str]:
        if task.kind in ("co-edit", "diff"):
            return [w for path in task.chat_files for w in self._words.get(path, ())]
        if task.kind == "message-text":
            return words(task.text)
        return [w for text in (*task.mentions, *task.mentioned_files) for w in words(text)]

    def run(self, root: Path, files: Sequence[str], tasks: Sequence[Task], requests: Sequence[Request]) -> SystemRun:
        started = time.perf_counter()
        self._refresh(root, files)
        first_seconds = time.perf_counter() - started
        answers: dict[int, tuple[list[str], float]] = {}
        outcomes = []
        for request in requests:
            if request.task not in answers:
                task = tasks[request.task]
                t0 = time.perf_counter()
                chat = set(task.chat_files)
                found = self._index.scores(self._query(task), BM25_FILES + len(chat))
                ranked = [path for path, _ in found if path not in chat][:BM25_FILES]
                answers[request.task] = (ranked, time.perf_counter() - t0)
            ranked, seconds = answers[request.task]
            shown: list[str] = []
            for path in ranked:
                if self._counter.count("\n".join([*shown, path]) + "\n") > request.budget:
                    break
                shown.append(path)
            tokens = self._counter.count("\n".join(shown) + "\n") if shown else 0
            outcomes.append(MapOutcome(tuple(ShownFile(p, ()) for p in shown), tokens, seconds))
        return SystemRun(self.name, tuple(outcomes), first_seconds, stats={"files_listed": float(len(files))})
