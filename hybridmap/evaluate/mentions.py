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

MIN_LENGTH = 2

STOPWORDS = frozenset(
    """a about above after again against all also an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either else
    even ever every few for from further had has have having he her here hers him his how however
    if in into is it its itself just least less let like made many may me might more most much must
    my need needs new no nor not now of off old on once one only or other our out over own per
    same she should since so some still such than that the their them then there these they this
    those though through thus to too under until up upon us very via was we were what when where
    whether which while who whom whose why will with within without would yet you your
    add added adding adds allow allows avoid bump bumped change changed changes changing check
    chore cleanup correct correctly docs doc feat fix fixed fixes fixing handle handles improve
    improved improves improvement instead issue make makes merge merged minor move moved pull
    refactor refactored release remove removed removes rename renamed request revert support
    supports test tests tested typo update updated updates use used uses using version wip
    better bug bugs case cases code default first properly really small simple simplify tweak
    """.split()
)

_TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*-by:\s|^(?:Fixes|Closes|Refs|See|Resolves|Co-authored-by):\s", re.I)
_URL = re.compile(r"\b\w+://\S+|\bwww\.\S+")
_EMAIL = re.compile(r"\S+@\S+\.\w+")
_COMMIT_ID = re.compile(r"(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}")  # an abbreviated or full commit sha
_BACKTICK = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]+\b")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def looks_like_identifier(word: str) -> bool:
    """snake_case, SCREAMING_CASE, camelCase or PascalCase with at least two humps."""
    letters = any(c.isalpha() for c in word)
    if "_" in word.strip("_") and letters:
        return True
    return re.search(r"[a-z][A-Z]", word) is not None  # camelCase, TableColumn


def _clean(message: str) -> str:
    lines = [line for line in message.splitlines() if not _TRAILER.match(line.strip())]
    text = "\n".join(lines)
    text = _URL.sub(" ", text)
    return _EMAIL.sub(" ", text)


def message_mentions(message: str, definition_names: Collection[str], file_paths: Iterable[str]) -> tuple[str, ...]:
    """The mentions a user could have written, taken from ``message`` (see the module docstring)."""
    paths = set(file_paths)
    basenames = {PurePosixPath(p).name for p in paths}
    stems = {PurePosixPath(p).stem for p in paths}
    text = _clean(message)
    out: dict[str, None] = {}

    def keep(word: str) -> None:
        if len(word) >= MIN_LENGTH and word.lower() not in STOPWORDS and not _COMMIT_ID.fullmatch(word):
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
