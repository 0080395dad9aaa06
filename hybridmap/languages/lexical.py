"""Words of names and texts, one splitting rule for all, and the lexical similarity of files.

:func:`name_parts` splits an identifier or a phrase into its lowercased parts (camel humps,
acronyms, digits, separators): the symbol search indexes and matches names by them, and
:func:`is_well_named` says which names carry meaning for name matching. A file's *words* are
the parts of every identifier and word in its text, two characters or longer
(``parseHTTPResponse`` -> ``parse http response``), so ``computeTotal`` in one file and
``compute_total`` in another share words. :class:`Bm25Files` ranks files by BM25 against a bag
of query words (another file's words, a message's): the classic lexical baseline of code
localization, and the score behind the ranking's text-similarity signal.

Why FTS5: it is the stdlib's (``sqlite3``), the symbol search already uses it, its ``bm25()``
is the standard Okapi BM25 (k1 = 1.2, b = 0.75), and rows are added and removed one file at a
time, so an edit re-indexes that file only.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Symbol

#: One word of source text or of a name: an acronym (``HTTP`` in ``HTTPServer``), a capitalised
#: or lowercase word, digits, or a run of other letters (no case to split on). The symbol search
#: splits names with it too (:func:`name_parts`).
WORD_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W0-9A-Za-z_]+")
#: Shorter words (``x``, ``i``, ``s`` of ``items``' plural) say nothing about what a file is about.
MIN_WORD = 2


@functools.lru_cache(maxsize=65_536)
def name_words(name: str) -> tuple[str, ...]:
    """The words of one name (or of any text without punctuation), lowercased, the short ones left out."""
    return tuple(w.lower() for w in WORD_PART.findall(name) if len(w) >= MIN_WORD)


def words(text: str) -> list[str]:
    """The words of ``text`` (see the module docstring), in order, repeated as often as they occur."""
    return [w.lower() for w in WORD_PART.findall(text) if len(w) >= MIN_WORD]


def word_counts(text: str) -> Counter[str]:
    """``Counter(words(text))``, faster: the text is cut at ASCII punctuation and white space
    (``str.translate`` and ``split``, in C; no word spans them) and each distinct piece is split
    into words once. Over the standard library's definitions (7.6 MB of names, signatures and doc
    lines) the regular expression over the whole text took 0.7-1.0 s, this 0.6 s (timed beside a test run)."""
    out: Counter[str] = Counter()
    pieces = text.encode("utf-8", "surrogatepass").translate(_CUT).split()
    for piece, times in Counter(pieces).items():
        for word in name_words(piece.decode("utf-8", "surrogatepass")):
            out[word] += times
    return out


def encode_words(counts: Counter[str]) -> str:
    """``counts`` as ``FileTags.words`` keeps them: ``word<TAB>count`` lines (a word holds
    neither: it is letters or digits)."""
    return "\n".join(f"{word}\t{times}" for word, times in counts.items())


def decode_words(text: str) -> dict[str, int]:
    """What :func:`encode_words` wrote, in its order (one split and a C-level ``dict(zip)``: a
    loop per line was twice as slow over a 100,000-file repository's words). ``ValueError`` for
    text it did not write (a damaged or planted cache entry): a word without a count, a count
    that is not a plain non-negative number."""
    if not text:
        return {}
    parts = text.replace("\n", "\t").split("\t")
    counts = parts[1::2]
    if not "".join(counts).isdigit() or not all(counts):
        raise ValueError("not words as encode_words writes them")
    return dict(zip(parts[0::2], map(int, counts), strict=True))


def name_counts(symbols: Sequence[Symbol], ref_names: Iterable[str]) -> Counter[str]:
    """The words of a file's names: of the text of its definitions' signatures and doc lines
    (in one pass, joined), then the parts of every name it uses (``ref_names``) and defines, each
    name split once however often it occurs. The order is the words' first appearance, which the
    BM25 sums follow. The one rule for both the parse (``FileTags.name_words``) and a ranker
    counting tags the parse did not count."""
    counts = word_counts("\n".join((*(s.signature for s in symbols), *(s.doc for s in symbols))))
    for name, times in Counter((*ref_names, *(s.name for s in symbols))).items():
        for part in name_words(name):
            counts[part] += times
    return counts


#: ASCII punctuation (the underscore too) and white space become spaces (bytes: a 256-entry
#: table; a ``str.translate`` mapping looked each character up in a dict, as slow as the regex).
_CUT = bytes(b if chr(b) not in string.punctuation + string.whitespace else 32 for b in range(256))


class Bm25Files:
    """An in-memory BM25 index of files (path -> words), updated one file at a time."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        # detail=column: positions are never asked for (no phrase queries), a third of the size.
        self._db.execute("create virtual table docs using fts5(path unindexed, body, detail = 'column')")
        self._rows: dict[str, int] = {}
        self._keys: dict[str, object] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def key(self, path: str) -> object:
        """What ``path`` was last indexed under (its content hash, say), or None."""
        return self._keys.get(path)

    def put(self, path: str, file_words: Iterable[str], key: object = None) -> None:
        """Index (or re-index) ``path`` with ``file_words``, remembered under ``key``."""
        self.remove(path)
        cursor = self._db.execute("insert into docs (path, body) values (?, ?)", (path, " ".join(file_words)))
        self._rows[path] = int(cursor.lastrowid or 0)
        self._keys[path] = key

    def remove(self, path: str) -> None:
        row = self._rows.pop(path, None)
        self._keys.pop(path, None)
        if row is not None:
            self._db.execute("delete from docs where rowid = ?", (row,))

    def keep_only(self, paths: Iterable[str]) -> None:
        """Remove every file not in ``paths``."""
        wanted = set(paths)
        for path in [p for p in self._rows if p not in wanted]:
            self.remove(path)

    def scores(
        self, query: Iterable[str] | Mapping[str, int], limit: int, max_terms: int = 256
    ) -> list[tuple[str, float]]:
        """The ``limit`` best files for ``query`` (words; a mapping: word -> count), best first,
        each with its BM25 score (positive, higher is closer). A long query keeps its
        ``max_terms`` most frequent words (a whole file's words are thousands)."""
        counts = Counter(query)
        terms = [w for w, _ in counts.most_common(max_terms) if _PLAIN.fullmatch(w)]
        if not terms or not self._rows or limit <= 0:
            return []
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = self._db.execute(
            "select path, -bm25(docs) from docs where docs match ? order by bm25(docs) limit ?", (expression, limit)
        ).fetchall()
        return [(str(path), float(score)) for path, score in rows]

    def close(self) -> None:
        self._db.close()


#: A word FTS5 takes as one token inside quotes (no quote, no separator).
_PLAIN = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=65_536)
def all_name_parts(text: str) -> tuple[str, ...]:
    return tuple(p.lower() for p in WORD_PART.findall(text))


def name_parts(text: str) -> list[str]:
    """The words of an identifier or a phrase, lowercased: camel humps, acronyms, digits,
    snake/kebab separators (``parseHTTPResponse2`` -> ``parse http response 2``)."""
    return list(all_name_parts(text))


def is_well_named(ident: str, min_length: int) -> bool:
    """snake_case, kebab-case or camelCase names of some length carry meaning."""
    if len(ident) < min_length:
        return False
    if ident.isascii():  # the same answer in three C calls: ASCII letters are its cased characters
        lower, upper = ident.lower(), ident.upper()  # (a static graph asks ~280,000 names at 100k files)
        return (("_" in ident.strip("_") or "-" in ident) and lower != upper) or lower != ident != upper
    return well_named_any(ident)


def well_named_any(ident: str) -> bool:
    """:func:`is_well_named`'s rule for any text, whatever its length."""
    has_alpha = any(c.isalpha() for c in ident)
    snake_or_kebab = ("_" in ident.strip("_") or "-" in ident) and has_alpha
    camel = any(c.isupper() for c in ident) and any(c.islower() for c in ident)
    return snake_or_kebab or camel
