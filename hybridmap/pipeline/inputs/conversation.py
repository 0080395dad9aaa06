"""The user's words as free text: the files and identifiers they name, in the repository's spelling.

An agent passes what the user wrote (``message=``); :class:`MessageIndex` finds in it what a
model would take as a reference to the code:

* paths (``src/app/config.py``, ``./config.py``, a trailing part such as ``app/config.py``),
  file names (``config.py``: every listed file of that name), dotted module names whose parts
  end a path (``app.config``), and a word equal to one file's stem (``config``, when exactly
  one listed file is called ``config.*``); a word that names a directory (``middleware``) is
  passed as an identifier in the directory's spelling, which lifts the files under it;
* identifiers: words of letters, digits and ``_`` (a dotted name, ``Config.load`` or
  ``Config::load``, gives each part; a kebab word, ``load-config``, is tried whole, then by
  part), and every word between backticks;
* matched against the repository's definitions, exactly or (``message_style_insensitive``, for
  a word of two parts or more) regardless of case and of ``_`` / ``-`` between parts:
  ``loadConfig``, ``LoadConfig`` and ``LOAD_CONFIG`` all find a repository's ``load_config``
  and are passed in its spelling, while ``windows`` does not find ``WINDOWS`` (a file's stem is
  matched regardless of case and style: ``Router`` names ``router.ts``);
* a plain lowercase word (``config``, ``table``) is matched too with ``message_plain_words``
  (without it, it can only name a file by its stem);
* an identifier-shaped word (snake_case, camelCase, SCREAMING_CASE, or backticked) that
  names no definition is passed as written with ``message_unmatched_words`` (the ranker can
  still match the references of an external name, and paths named like it);

dropped: English stop words and generic commit verbs, words shorter than ``MIN_LENGTH`` or
starting with a digit, commit ids, URLs, e-mail addresses and trailer lines
(``Signed-off-by: ...``).

The text is untrusted. Only its first ``message_max_chars`` characters are read, and every
step is linear in them: the regular expressions are single character classes or anchored
prefixes (no nested quantifier can backtrack), and a partial path is compared with at most
``_SUFFIX_CANDIDATES`` listed paths. What is returned is spelled by the repository (files,
matched identifiers) or made of word characters only (unmatched words).

The generic parts (:data:`STOPWORDS`, :func:`clean_message`, :func:`is_trailer`, :func:`is_commit_id`,
:func:`looks_like_identifier`) are shared with the evaluation's message task
(``hybridmap/frontends/evaluate/mentions.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ...infra.spelling import edit_distance

if TYPE_CHECKING:
    from ...model import FileTags
    from ...settings import Settings

MIN_LENGTH = 2
"""Shorter words are never mentions."""

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
"""English stop words and generic commit verbs, lowercase: never a mention, whatever the case."""

_MAX_WORD = 256
"""Longer words are not identifiers (nor file names: a path part is at most 255 bytes)."""
_MAX_PATH = 4_096
_SUFFIX_CANDIDATES = 64
"""A partial path (``app/config.py``) is compared with the listed paths ending in its last two
parts, when there are at most this many (a monorepo with hundreds of ``src/index.ts`` needs
more of the path, or the whole of it)."""

# Anchored at a line's start (``match``): the greedy part can only backtrack within that line.
_TRAILER = re.compile(r"[A-Za-z][A-Za-z-]*-by:\s|(?:Fixes|Closes|Refs|See|Resolves|Co-authored-by):\s", re.I)
# \b restricts the starts to word starts, so each word is scanned once or twice: linear.
_URL = re.compile(r"\b\w+://\S+|\bwww\.\S+")
_RUN = re.compile(r"\S+")
_DOT_WORD = re.compile(r"\.\w")
_COMMIT_ID = re.compile(r"(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}")  # fullmatch only: one start
_CAMEL = re.compile(r"[a-z][A-Z]")
_HUMP = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
# Terminal escapes (``ESC [ 31 m``) pasted from a log: the three classes are disjoint, so linear.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]+")
_TOKEN = re.compile(r"[\w./:@\\-]+")
"""A run of word characters and the punctuation of paths and qualified names."""
_PIECE = re.compile(r"[\w-]+")
"""A run of word characters and hyphens, inside a token (split at ``.``, ``/``, ``::``...)."""
_PART = re.compile(r"\w+")


@dataclass(frozen=True)
class MessageMentions:
    """What a message names, spelled as the repository spells it, in order of first mention."""

    files: tuple[str, ...]
    """Listed paths, relative to the root."""
    idents: tuple[str, ...]
    """Identifiers: a definition's name exactly as defined, or (``message_unmatched_words``) an
    identifier-shaped word of the message as written."""
    by_stem: frozenset[str] = frozenset()
    """Those of :attr:`files` named only by a word equal to their stem (``config`` for
    ``app/config.py``): prose says ``context`` or ``router`` without meaning the file, so they
    are not pinned first as a file named by its path or name is (``pin_mentioned_files``)."""


def looks_like_identifier(word: str) -> bool:
    """snake_case, SCREAMING_CASE, camelCase or PascalCase with at least two humps."""
    if "_" in word.strip("_") and any(c.isalpha() for c in word):
        return True
    return _CAMEL.search(word) is not None  # camelCase, TableColumn


def is_compound(word: str) -> bool:
    """A word of two parts or more: ``load_config``, ``loadConfig``, ``HTTPServer``, ``LOAD_CONFIG``,
    ``load-config`` (not ``config``, ``Config``, ``CONFIG``)."""
    return "_" in word.strip("_") or "-" in word.strip("-") or _HUMP.search(word) is not None


def is_commit_id(word: str) -> bool:
    """An abbreviated or full commit id: 7 to 40 lowercase hex digits, at least one a digit."""
    return _COMMIT_ID.fullmatch(word) is not None


def style_key(word: str) -> str:
    """``word`` regardless of case and of ``_`` / ``-`` between its parts: ``load_config``,
    ``loadConfig``, ``LoadConfig``, ``LOAD_CONFIG`` and ``load-config`` give ``loadconfig``.
    Leading and trailing underscores stay (``_load`` and ``__init__`` are other names)."""
    core = word.strip("_")
    if not core:
        return word
    start = word.index(core[0])
    return word[:start] + core.replace("_", "").replace("-", "").lower() + word[start + len(core) :]


def is_trailer(line: str) -> bool:
    """A commit trailer line: ``Signed-off-by: ...``, ``Co-authored-by: ...``, ``Fixes: ...``."""
    return _TRAILER.match(line.strip()) is not None


def _without_email(run: str) -> str:
    """``run`` (no whitespace) without the e-mail address ``\\S+@\\S+\\.\\w+`` finds in it,
    computed without that pattern's quadratic backtracking: the address starts at the run's
    start and ends after the word following the run's last ``.`` + word character."""
    at = run.find("@", 1)
    last = None
    if at > 0:
        for last in _DOT_WORD.finditer(run, at + 2):  # noqa: B007 (the last one is wanted)
            pass
    if last is None:
        return run
    end = _PART.match(run, last.start() + 1)
    return " " + run[end.end() if end else last.end() :]


def clean_message(text: str) -> str:
    """``text`` without trailer lines (``Signed-off-by: ...``, ``Fixes: ...``), URLs and e-mail
    addresses (each replaced by a space)."""
    text = "\n".join(line for line in text.splitlines() if not is_trailer(line))
    text = _URL.sub(" ", text)
    if "@" not in text:
        return text
    return _RUN.sub(lambda m: _without_email(m[0]) if "@" in m[0] else m[0], text)


def _code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` cut at its backticks, in order: (piece, whether it is a backticked span on one line)."""
    if "`" not in text:
        return [(text, False)]
    pieces = text.split("`")
    last = len(pieces) - 1
    return [(piece, i % 2 == 1 and i < last and "\n" not in piece) for i, piece in enumerate(pieces)]


class MessageIndex:
    """The repository's files and definition names, indexed to find them in a message.

    Built once per repository state (its cost is linear in the paths and distinct names);
    :meth:`extract` is then linear in the message and never changes the index.
    """

    def __init__(self, paths: Iterable[str], identifiers: Iterable[str], settings: Settings) -> None:
        self._max_chars = settings.message_max_chars
        self._style = settings.message_style_insensitive
        self._unmatched = settings.message_unmatched_words
        self._plain = settings.message_plain_words
        self._typo_min = settings.message_typo_min_chars
        self._paths = frozenset(paths)
        self._by_name: dict[str, list[str]] = {}
        self._by_tail: dict[str, list[str]] = {}
        self._by_module: dict[str, list[str]] = {}
        self._modules: dict[str, str] = {}
        self._by_stem: dict[str, list[str]] = {}
        for path in sorted(self._paths):
            pure = PurePosixPath(path)
            self._by_name.setdefault(pure.name, []).append(path)
            self._by_tail.setdefault("/".join(pure.parts[-2:]), []).append(path)
            if pure.suffix and len(pure.parts) > 1:
                module = self._modules[path] = path[: -len(pure.suffix)]
                self._by_module.setdefault("/".join(module.split("/")[-2:]), []).append(path)
            self._by_stem.setdefault(self._key(pure.stem), []).append(path)
        self._dirs: dict[str, str] = {}
        for path in self._paths:
            for part in path.split("/")[:-1]:
                self._dirs.setdefault(part.lower(), part)
        self._names = frozenset(identifiers)
        self._by_key: dict[str, list[str]] = {}
        if self._style or self._typo_min:
            for name in sorted(self._names):
                self._by_key.setdefault(style_key(name), []).append(name)
        # One edit leaves a key of 4+ letters its first two or its last two: a misspelt key's
        # candidates are the compound keys sharing either, then checked by edit distance.
        self._by_ends: dict[str, list[str]] = {}
        if self._typo_min:
            for key, names in self._by_key.items():
                if len(key) >= self._typo_min and any(is_compound(n) for n in names):
                    self._by_ends.setdefault("^" + key[:2], []).append(key)
                    self._by_ends.setdefault(key[-2:] + "$", []).append(key)

    @classmethod
    def from_tags(cls, tags: Mapping[str, FileTags], settings: Settings) -> MessageIndex:
        """The index of a parsed repository: its files and every name they define."""
        return cls(tags.keys(), {s.name for t in tags.values() for s in t.symbols}, settings)

    def _key(self, word: str) -> str:
        return style_key(word) if self._style else word

    def respelled(self, words: Sequence[str]) -> list[str]:
        """Identifiers named on purpose (``--mention``, ``mentioned_idents``), each as given and,
        when the repository does not define it so, as the definitions it names in another case
        or style (``COMPUTE_TOTAL``, ``computeTotal`` -> ``compute_total``): the rule a
        message's words follow (``message_style_insensitive``, compound words only)."""
        out: list[str] = []
        for word in words:
            out.append(word)
            if word not in self._names:
                out.extend(self._restyled(word) or self._misspelt(word))
        return out

    def _restyled(self, word: str) -> list[str]:
        """The definitions ``word`` names in any case or style (``message_style_insensitive``).
        A word of one part (``windows``, ``Handler``) only as spelled: across case it found
        WINDOWS and Method in prose and cost MRR on every corpus (docs/evaluation.md)."""
        return self._by_key.get(style_key(word), []) if self._style and is_compound(word) else []

    def _misspelt(self, word: str) -> list[str]:
        """The compound definitions one edit from compound ``word`` (``message_typo_min_chars``),
        in any style: ``compute_totl`` and ``computeTotla`` name ``compute_total``."""
        key = style_key(word)
        if not self._typo_min or len(key) < self._typo_min or not is_compound(word):
            return []
        near = {*self._by_ends.get("^" + key[:2], ()), *self._by_ends.get(key[-2:] + "$", ())}
        keys = sorted(k for k in near if edit_distance(key, k, 1) == 1)
        return [name for k in keys for name in self._by_key[k] if is_compound(name)]

    def extract(self, text: str) -> MessageMentions:
        """The files and identifiers ``text`` names (see the module docstring)."""
        found = _Found()
        text = _CONTROL.sub(" ", _ANSI.sub(" ", text[: self._max_chars]))
        for piece, code in _code_spans(clean_message(text)):
            for token in _TOKEN.findall(piece):
                self._token(token, found, code)
        return MessageMentions(tuple(found.files), tuple(found.idents), frozenset(found.by_stem - found.named))

    def _token(self, token: str, found: _Found, code: bool) -> None:
        token = token.replace("\\", "/").strip(".:,-/@")
        if not token or len(token) > _MAX_PATH or (not code and "@" in token):
            return  # a remnant of an address, or not a word
        files = self._files_of(token.removeprefix("./"))
        if files:
            found.add_files(files)
            return
        for piece in _PIECE.findall(token):
            piece = piece.strip("-")
            if "-" in piece and self._word(piece, found, code, whole=True):
                continue
            for word in _PART.findall(piece):
                self._word(word, found, code, whole=False)

    def _files_of(self, token: str) -> list[str]:
        """The listed files ``token`` names: as a path, a file name, a trailing part of a path,
        or a dotted module name (``app.config``)."""
        if token in self._paths:
            return [token]
        if "/" in token:
            return self._ending(self._by_tail, token, lambda p: p)
        named = self._by_name.get(token)
        if named:
            return named
        if "." in token and ":" not in token:
            return self._ending(self._by_module, token.replace(".", "/"), self._modules.__getitem__)
        return []

    @staticmethod
    def _ending(index: Mapping[str, list[str]], tail: str, spelled: Callable[[str], str]) -> list[str]:
        """The paths of ``index`` (keyed by their last two parts) whose spelling is ``tail`` or
        ends with ``/tail``; none when too many share those two parts."""
        candidates = index.get("/".join(tail.split("/")[-2:]), [])
        if len(candidates) > _SUFFIX_CANDIDATES:
            return []
        return [p for p in candidates if spelled(p) == tail or spelled(p).endswith("/" + tail)]

    def _word(self, word: str, found: _Found, code: bool, whole: bool) -> bool:
        """Adds what ``word`` names; whether it named anything."""
        if len(word) < MIN_LENGTH or len(word) > _MAX_WORD or word[0].isdigit():
            return False
        if word.lower() in STOPWORDS or is_commit_id(word):
            return False
        named = False
        stem = self._by_stem.get(self._key(word))
        if stem is not None and len(stem) == 1 and len(word) > MIN_LENGTH:
            found.add_files(stem, by_stem=True)
            named = True
        directory = self._dirs.get(word.lower()) if len(word) > MIN_LENGTH else None
        if directory is not None:
            found.add_idents([directory])  # the ranker lifts the files under it (path_mentions)
            named = True
        if not (code or self._plain) and word.islower() and "_" not in word:
            return named  # a plain lowercase word: a file's stem at most
        if word in self._names:
            found.add_idents([word])
            named = True
        matches = self._restyled(word) or (None if named else self._misspelt(word))
        if matches:
            found.add_idents(matches)
            named = True
        if not named and not whole and self._unmatched and (code or looks_like_identifier(word)):
            found.add_idents([word])
        return named


class _Found:
    """Files and identifiers in order of first mention, each once."""

    def __init__(self) -> None:
        self.files: dict[str, None] = {}
        self.idents: dict[str, None] = {}
        self.named: set[str] = set()
        """Files named by path or name somewhere in the message."""
        self.by_stem: set[str] = set()
        """Files named by their stem somewhere in the message."""

    def add_files(self, paths: Iterable[str], *, by_stem: bool = False) -> None:
        for path in paths:
            self.files.setdefault(path, None)
            (self.by_stem if by_stem else self.named).add(path)

    def add_idents(self, names: Iterable[str]) -> None:
        for name in names:
            self.idents.setdefault(name, None)
