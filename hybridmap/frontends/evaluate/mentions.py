"""Words of a commit message that an agent's user could have typed as mentions.

Kept, in order of first appearance and without repeats:

* backticked words (``Console.print`` gives ``Console`` and ``print``);
* words that look like identifiers: snake_case, camelCase / PascalCase with two
  humps or more (``TableColumn``), SCREAMING_CASE; dotted names are split;
* words that name a definition in the repository (exact case), a file (its path
  or file name, e.g. ``console.py``), or a file's stem (``progress`` names
  ``rich/progress.py``);

and dropped: English stopwords and generic commit verbs (case-insensitive),
words shorter than ``MIN_LENGTH``, commit ids, trailer lines (``Signed-off-by: ...``),
URLs, e-mail addresses and issue references.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import PurePosixPath

# The generic parts live with the product's reading of a message (the eval must not be the only
# place that knows a stop word); this module keeps what is particular to the message task.
from ...pipeline.inputs.conversation import MIN_LENGTH, STOPWORDS, clean_message, is_commit_id, looks_like_identifier

__all__ = ["MIN_LENGTH", "STOPWORDS", "looks_like_identifier", "message_mentions"]

_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]+\b")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def message_mentions(message: str, definition_names: Collection[str], file_paths: Iterable[str]) -> tuple[str, ...]:
    """The mentions a user could have written, taken from ``message`` (see the module docstring)."""
    paths = set(file_paths)
    basenames = {PurePosixPath(p).name for p in paths}
    stems = {PurePosixPath(p).stem for p in paths}
    text = clean_message(message)
    out: dict[str, None] = {}

    def keep(word: str) -> None:
        if len(word) >= MIN_LENGTH and word.lower() not in STOPWORDS and not is_commit_id(word):
            out.setdefault(word, None)

    def consider(word: str, backticked: bool) -> None:
        for part in word.split("."):
            if part and (backticked or looks_like_identifier(part) or part in definition_names or part in stems):
                keep(part)

    # Backticked spans and file names first: they are the strongest signals, and a
    # file name would otherwise be split at its dot.
    for match in _BACKTICK.finditer(text):
        for word in _DOTTED.findall(match[1]):
            if word in paths or word in basenames:
                keep(word)
            else:
                consider(word, True)
        for path in _PATHLIKE.findall(match[1]):
            if path in paths or path in basenames:
                keep(path)
    for path in _PATHLIKE.findall(text):
        candidate = path[2:] if path.startswith("./") else path
        if candidate in paths or candidate in basenames:
            keep(candidate)
    for word in _DOTTED.findall(_BACKTICK.sub(" ", text)):
        if word in paths or word in basenames:
            continue  # kept above as a file
        consider(word, False)
    return tuple(out)
