"""The questions asked of a map at a commit's parent, and the answers the commit gives.

* **co-edit**: the agent edits one of the changed files (the chat file: the one
  with most changed lines, ties broken by path); the map should show the others.
* **message**: nothing is open; the user's words are the identifiers and file
  names of the commit message (:mod:`.mentions`); the map should show every
  changed file. A message with no such word gives no task (counted as skipped).
* **message-text**: the same question, but the input is the commit message as the
  user would write it (subject and body, trailer lines dropped), not words cut out of
  it beforehand: each system reads the text its own way. hybridmap reads it with the
  product's :class:`~hybridmap.pipeline.inputs.conversation.MessageIndex` over the parent's files and
  definitions (its answer is recorded in the task's ``mentions`` / ``mentioned_files``);
  Aider with its coder's own reading (``aider_runner.py``). Every commit gives one. With
  ``typos`` (``hybridmap eval --message-typos``) each long compound identifier of the text
  carries one typo (:func:`with_typos`), the same for every system.

* **diff** (asked only with ``--tasks ...,diff``): the agent has made the first half of the
  commit's change (the changed files with most changed lines, :func:`diff_split`) and asks for
  the map of that change (``map --diff HEAD`` on the parent's checkout with those files written);
  the map should show the other half. Peers get the first half as chat files. A commit of one
  file gives no such task. The files given are not counted among the map's files when it is
  scored (a map of a change shows them, pinned first).

All ask for the changed definitions (:mod:`.definitions`) of their target files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from ...model import FileTags
from ...pipeline.inputs.conversation import MessageIndex, is_compound, is_trailer, style_key
from .definitions import ChangedDefinition, changed_definitions
from .diffs import FileDiff
from .history import Commit
from .mentions import message_mentions

TaskKind = Literal["co-edit", "message", "message-text", "diff"]
TASK_KINDS: tuple[TaskKind, ...] = ("co-edit", "message", "message-text")
"""The task kinds asked by default."""
ALL_TASK_KINDS: tuple[TaskKind, ...] = (*TASK_KINDS, "diff")
"""Every task kind ``--tasks`` may name (a diff task writes into the scratch checkout)."""


@dataclass(frozen=True, slots=True)
class Task:
    kind: TaskKind
    chat_files: tuple[str, ...]
    """The files the agent has open (``diff``: the files of the change already made, by their
    path in the commit)."""
    mentions: tuple[str, ...]
    """Words passed as mentions (hybridmap: ``mentioned_idents``; Aider: ``mentioned_idents``).
    For ``message-text``: the identifiers hybridmap's reading of ``text`` found."""
    mentioned_files: tuple[str, ...]
    """Listed files the mentions name (Aider takes them separately as ``mentioned_fnames``).
    For ``message-text``: the files hybridmap's reading of ``text`` found."""
    targets: tuple[str, ...]
    definitions: tuple[ChangedDefinition, ...]
    text: str = ""
    """``message-text``: the message as the user wrote it (each system reads it its own way)."""

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "chat_files": list(self.chat_files),
            "mentions": list(self.mentions),
            "mentioned_files": list(self.mentioned_files),
            "targets": list(self.targets),
            "definitions": [d.to_json() for d in self.definitions],
            **({"text": self.text} if self.kind == "message-text" else {}),
        }


@dataclass(frozen=True, slots=True)
class CommitTasks:
    tasks: tuple[Task, ...]
    definitions: tuple[ChangedDefinition, ...]
    """Every changed definition of the commit (all changed files)."""
    skipped: tuple[str, ...]
    """Why a task kind was not asked for this commit."""


def files_named(words: Iterable[str], paths: Collection[str]) -> tuple[str, ...]:
    """Listed files a word names: by its path, or by its file name (every file of that name)."""
    by_name: dict[str, list[str]] = {}
    for path in sorted(paths):
        by_name.setdefault(PurePosixPath(path).name, []).append(path)
    out: dict[str, None] = {}
    for word in words:
        if word in paths:
            out.setdefault(word, None)
        for path in by_name.get(word, ()):
            out.setdefault(path, None)
    return tuple(out)


def message_text(message: str) -> str:
    """A commit message as its author would have said it to an agent: subject and body,
    without trailer lines (``Signed-off-by: ...``, ``Co-authored-by: ...``, ``Fixes: ...``)."""
    return "\n".join(line for line in message.splitlines() if not is_trailer(line)).strip()


TYPO_MIN_CHARS = 8
"""``with_typos`` misspells compound identifiers of at least this many letters (besides ``_``
and ``-``): the words ``message_typo_min_chars`` may repair at its default."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def with_typos(text: str) -> str:
    """``text`` with two neighbouring letters swapped in each compound identifier of
    :data:`TYPO_MIN_CHARS` letters or more (``compute_total`` -> ``compute_toatl``), the most
    common typing slip; where in the word is chosen by a hash of it, so runs repeat."""

    def slip(match: re.Match[str]) -> str:
        word = match[0]
        if not is_compound(word) or len(style_key(word)) < TYPO_MIN_CHARS:
            return word
        spots = [
            i for i in range(1, len(word) - 1) if word[i].isalpha() and word[i + 1].isalpha() and word[i] != word[i + 1]
        ]
        if not spots:
            return word
        i = spots[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % len(spots)]
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]

    return _IDENTIFIER.sub(slip, text)


def co_edit_chat_file(diffs: Iterable[FileDiff]) -> FileDiff:
    """The changed file with the most changed lines (added + deleted); ties go to the first path."""
    return min(diffs, key=lambda d: (-(d.added + d.deleted), d.old_path))


def diff_split(diffs: Iterable[FileDiff]) -> tuple[tuple[FileDiff, ...], tuple[FileDiff, ...]]:
    """A commit's change cut in two for a ``diff`` task: the half already made (the files with most
    changed lines, ``len // 2`` of them, ordered as :func:`co_edit_chat_file` chooses) and the rest."""
    ordered = sorted(diffs, key=lambda d: (-(d.added + d.deleted), d.old_path))
    half = len(ordered) // 2
    return tuple(ordered[:half]), tuple(ordered[half:])


def build_tasks(
    commit: Commit,
    diffs: tuple[FileDiff, ...],
    tags: Mapping[str, FileTags],
    new_tags: Mapping[str, FileTags | None],
    definition_names: Collection[str],
    message_index: MessageIndex | None = None,
    kinds: Collection[TaskKind] = TASK_KINDS,
    typos: bool = False,
) -> CommitTasks:
    """Tasks of the ``kinds`` for ``commit``, given its per-file diffs, the parent's tags (every
    listed source file) and the commit's tags of the changed files (by their old path).
    ``message-text`` needs ``message_index`` (the parent's); ``typos``: its text misspelt
    (:func:`with_typos`)."""
    by_file = {
        d.old_path: changed_definitions(d.old_path, tags[d.old_path], new_tags.get(d.old_path), d.hunks)
        if d.old_path in tags
        else ()
        for d in diffs
    }
    all_defs = tuple(sorted(x for defs in by_file.values() for x in defs))
    changed = tuple(d.old_path for d in diffs)
    tasks: list[Task] = []
    skipped: list[str] = []

    if "co-edit" in kinds:
        chat = co_edit_chat_file(diffs).old_path
        targets = tuple(p for p in changed if p != chat)
        definitions = tuple(sorted(x for p in targets for x in by_file[p]))
        tasks.append(Task("co-edit", (chat,), (), (), targets, definitions))
    if "message" in kinds:
        mentions = message_mentions(commit.message, definition_names, tags.keys())
        if mentions:
            tasks.append(Task("message", (), mentions, files_named(mentions, tags.keys()), changed, all_defs))
        else:
            skipped.append("message: no identifier or file name in the commit message")
    if "message-text" in kinds:
        if message_index is None:
            raise ValueError("a message-text task needs the parent's MessageIndex")
        text = message_text(commit.message)
        text = with_typos(text) if typos else text
        # The reading AsyncRepoMap.map(message=text) does, kept with the task for the report (the
        # systems are given the text: systems.py).
        read = message_index.extract(text)
        tasks.append(Task("message-text", (), read.idents, read.files, changed, all_defs, text))
    if "diff" in kinds:  # last: it is asked after the others, on a checkout the first half is written to
        made, rest = diff_split(diffs)
        if made:
            targets = tuple(d.old_path for d in rest)
            definitions = tuple(sorted(x for p in targets for x in by_file[p]))
            tasks.append(Task("diff", tuple(d.new_path for d in made), (), (), targets, definitions))
        else:
            skipped.append("diff: the commit changed one file")
    return CommitTasks(tuple(tasks), all_defs, tuple(skipped))
