"""Symbol search: ranked, typo-tolerant, case- and style-insensitive, on SQLite FTS5.

``compute``, ``COMPUTE_TOTAL``, ``computeTotal``, ``compute-total``, ``comp tot`` and
``cmpute_totl`` all find ``compute_total``. Every name is indexed three ways:

* ``norm``: the name lowercased without separators (``computetotal``), in a B-tree (exact and
  prefix matches by range) and in an FTS5 **trigram** table (substrings, and typos: a misspelt
  query still shares most of its trigrams with the name; the best-sharing candidates are then
  kept within an edit distance);
* ``words``: the name split into its parts (camelCase, snake_case, kebab-case, acronyms:
  ``HTTPServer`` -> ``http server``) with the signature's and the path's parts, in an FTS5
  ``unicode61`` table with prefix indexes (``comp tot`` finds ``compute_total``; ``decoder
  json`` finds ``JSONDecoder`` in ``json/decoder.py``);
* a subsequence pass (``getusr`` -> ``get_user``) as a ``GLOB`` scan inside SQLite, only when
  the indexed passes found fewer matches than asked for.

Why FTS5 and not a fuzzy-matching library (``benchmarks/bench_search.py``, ``docs/benchmarks.md``,
"Symbol search"): on the CPython standard library (63,423 definitions, 40,846 distinct names), 32
queries with known answers (exact names, style and case variants, prefixes, word parts,
abbreviations, typos), this index puts 32 answers in the first five and 28 first; rapidfuzz's
``process.extract`` over the normalized names, at its best scorers (``ratio``, ``QRatio``), 29 and
26: a character-distance score cannot see that ``seqmatch`` abbreviates ``SequenceMatcher`` or
that ``get_close`` is a prefix of ``get_close_matches``. So rapidfuzz is not at equal quality;
in speed, it scans every name for every query (2.5-3.5 ms here, growing with the repository),
where this index answers an exact name, any style, in 0.2-0.4 ms and a fuzzy one in 9-13 ms (the
subsequence scan and the edit-distance checks run in Python): median 7.4 ms against 3.5 ms.
Agents mostly ask for names they have seen, and a right answer matters more than 5 ms, so FTS5
(stdlib ``sqlite3``, no new dependency) is kept.

The index is updated from the tags of changed files only: each file is keyed by path and
content sha, so an unchanged file is never re-indexed. It lives in memory, one per
:class:`~hybridmap.api.repo.AsyncRepoMap` (the standard library indexes in 1.2-2.4 s from tags
it already holds; a copy on disk would save that once per process at the price of invalidation
across processes, and the tags themselves come from the disk cache). An update of unchanged
files costs 15-30 ms (one sha comparison per file).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from typing_extensions import TypedDict  # what pydantic reads MCP output schemas from (Python < 3.12)

from ..infra.sanitize import escape_path, safe_line
from ..infra.spelling import edit_distance
from ..languages.lexical import all_name_parts, name_parts
from ..languages.paths import is_test_path
from ..model import FileTags, Symbol

#: How a match was found, best first (the first element of the ranking key). ``server``: a
#: language server's ``workspace/symbol`` found it and none of the index's ways would
#: (:mod:`.search_merge`).
HOW = (
    "exact",
    "start",
    "word",
    "prefix",
    "part",
    "substring",
    "words",
    "typo",
    "subsequence",
    "context",
    "scattered",
    "server",
)
_TYPO = HOW.index("typo")
SIGNATURE_CHARS = 240
#: Names the typo pass measures (those sharing the most trigrams with the query first).
TYPO_CHECKS = 200
#: Rows one scanning pass (subsequence, context) may return: a one- or two-letter query is a
#: subsequence of half the names, and scoring each costs ~50 µs.
SCAN_ROWS = 2_000


def normalized(text: str) -> str:
    """``text`` without case and separators: the form names are compared in."""
    return "".join(name_parts(text))


def typo_limit(query: str) -> int:
    """Edits a query of this length may carry and still match: none below 4 letters, 1 up to 6,
    2 up to 12, then 3."""
    return 0 if len(query) < 4 else 1 if len(query) <= 6 else 2 if len(query) <= 12 else 3


class SymbolMatchJson(TypedDict):
    name: str
    kind: str
    path: str
    line: int
    end_line: int
    signature: str
    container: str | None
    match: str
    sources: list[str]


class ServerAnswerJson(TypedDict):
    server: str
    root: str
    outcome: str
    hits: int
    kept: int
    dropped: int
    seconds: float
    detail: str


class SymbolSearchJson(TypedDict):
    query: str
    matches: list[SymbolMatchJson]
    total: int
    truncated: bool
    servers: list[ServerAnswerJson]


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    name: str
    kind: str
    path: str
    line: int
    """1-based line of the name."""
    end_line: int
    signature: str
    """The signature on one line (raw; :meth:`to_json` makes it safe)."""
    container: str | None
    match: str
    """How it matched: one of :data:`HOW`."""
    sources: tuple[str, ...] = ("index",)
    """Which searches returned it: ``index`` (this module's), ``lsp:<server>`` (a language
    server's ``workspace/symbol``, :mod:`.search_merge`), or both."""

    def to_json(self) -> SymbolMatchJson:
        signature = safe_line(self.signature)
        return {
            "name": safe_line(self.name),
            "kind": self.kind,
            "path": escape_path(self.path),
            "line": self.line,
            "end_line": self.end_line,
            "signature": signature if len(signature) <= SIGNATURE_CHARS else signature[:SIGNATURE_CHARS] + "...",
            "container": None if self.container is None else safe_line(self.container),
            "match": self.match,
            "sources": [safe_line(source) for source in self.sources],
        }


@dataclass(frozen=True, slots=True)
class ServerAnswer:
    """What one language server did for one search (:mod:`.search_merge`)."""

    server: str
    """``lsp:<server name>``."""
    root: str
    """Its project root, relative to the repository root (``.``: the root itself)."""
    outcome: str
    """``answered``, ``timeout`` (not within ``search_server_timeout``) or ``error``."""
    hits: int = 0
    """Symbols in its answer."""
    kept: int = 0
    """Of those, definitions in files inside the root (``kind`` and ``path`` narrow them after)."""
    dropped: int = 0
    """Outside the root, not a ``file:`` URI, without a range, of a kind that is no definition,
    in a file the listing excludes, or beyond ``search_server_max_hits``."""
    seconds: float = 0.0
    detail: str = ""

    def to_json(self) -> ServerAnswerJson:
        return {
            "server": safe_line(self.server),
            "root": escape_path(self.root),
            "outcome": self.outcome,
            "hits": self.hits,
            "kept": self.kept,
            "dropped": self.dropped,
            "seconds": round(self.seconds, 4),
            "detail": safe_line(self.detail),
        }


@dataclass(frozen=True, slots=True)
class SymbolSearch:
    """The answer to one search: the best ``limit`` matches and how many were found."""

    query: str
    matches: tuple[SymbolMatch, ...]
    total: int
    """Definitions matched by the passes that ran (the subsequence, typo and context passes run
    only when the earlier ones found fewer than ``limit``), plus those only servers found."""
    servers: tuple[ServerAnswer, ...] = ()
    """The language servers asked (hybrid mode, ready servers only), in the order asked."""
    files_indexed: int = 0
    """Files (re-)indexed to answer this search: those whose content changed since the last one
    (the whole repository the first time). Not in the JSON: a cost, not an answer."""

    @property
    def truncated(self) -> bool:
        return self.total > len(self.matches)

    def to_json(self) -> SymbolSearchJson:
        return {
            "query": safe_line(self.query),
            "matches": [m.to_json() for m in self.matches],
            "total": self.total,
            "truncated": self.truncated,
            "servers": [answer.to_json() for answer in self.servers],
        }


def _signature_line(sym: Symbol) -> str:
    return " ".join(line.strip() for line in sym.signature.strip().splitlines())


_SCHEMA = """
create table files (path text primary key, sha text not null);
create table symbols (
    id integer primary key, path text not null, name text not null, norm text not null,
    kind text not null, line integer not null, end_line integer not null,
    signature text not null, container text
);
create index symbols_norm on symbols(norm);
create index symbols_path on symbols(path);
create table names (id integer primary key, norm text not null unique);
create virtual table norm_fts using fts5(norm, tokenize = 'trigram');
create virtual table norm_vocab using fts5vocab(norm_fts, 'row');
create virtual table words_fts using fts5(name, context, tokenize = 'unicode61', detail = 'column');
"""


def _fingerprint(tags: FileTags) -> str:
    """A file's key when no content sha is known (tags made by hand): its symbols."""
    return (
        "tags:"
        + hashlib.sha256(
            repr([(s.name, s.kind, s.name_line, s.signature) for s in tags.symbols]).encode("utf-8", "surrogatepass")
        ).hexdigest()
    )


class SymbolIndex:
    """An in-memory FTS5 index of every definition's name, signature and path, per file by sha.

    Distinct names are trigram-indexed once (``names``; the standard library has 63,000
    definitions and 41,000 distinct names, and inserting trigrams is the costly part).
    Thread-safe (one lock): updates run in a worker thread, searches anywhere."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._last: Mapping[str, FileTags] | None = None
        self._next_id = 0
        self.files_indexed = 0
        """Files (re-)indexed over this index's life; unchanged files are never counted again."""
        self.files_reused = 0

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def update(self, tags: Mapping[str, FileTags], shas: Mapping[str, str]) -> int:
        """Bring the index to ``tags`` (path -> tags; ``shas``: path -> content sha): files whose
        sha moved are re-indexed, files gone are dropped. Returns the files re-indexed."""
        if tags is self._last:  # the base source replaces its mapping, never edits it
            return 0
        with self._lock, self._db:
            db = self._db
            known = dict(db.execute("select path, sha from files"))
            keys = {p: shas.get(p) or _fingerprint(t) for p, t in tags.items()}
            gone = [p for p in known if p not in tags]
            moved = [p for p in tags if known.get(p) != keys[p]]
            dropped = [p for p in moved if p in known] + gone
            self._drop(dropped)
            for path in moved:
                self._add(path, tags[path], keys[path])
            self._add_names()
            self.files_indexed += len(moved)
            self.files_reused += len(tags) - len(moved)
            self._last = tags
        return len(moved)

    def _drop(self, paths: list[str]) -> None:
        db = self._db
        for path in paths:
            ids = db.execute("select id, norm from symbols where path = ?", (path,)).fetchall()
            db.executemany("delete from words_fts where rowid = ?", [(i,) for i, _ in ids])
            db.execute("delete from symbols where path = ?", (path,))
            db.execute("delete from files where path = ?", (path,))
            orphans = db.execute(
                "select id from names where norm in (select value from json_each(?))"
                " and not exists (select 1 from symbols s where s.norm = names.norm)",
                (json.dumps(sorted({n for _, n in ids})),),
            ).fetchall()
            db.executemany("delete from norm_fts where rowid = ?", orphans)
            db.executemany("delete from names where id = ?", orphans)

    def _add(self, path: str, tags: FileTags, sha: str) -> None:
        db = self._db
        path_words = " ".join(all_name_parts(path))
        db.execute("insert into files values (?, ?)", (path, sha))
        rows, words = [], []
        for sym in tags.symbols:
            parent = tags.symbols[sym.parent].name if 0 <= sym.parent < len(tags.symbols) else None
            signature = _signature_line(sym)
            parts = all_name_parts(sym.name)
            norm = "".join(parts) or sym.name.lower()
            self._next_id += 1
            ident = self._next_id
            line, end = sym.name_line + 1, sym.span.end_line + 1
            rows.append((ident, path, sym.name, norm, sym.kind, line, end, signature, parent))
            words.append((ident, " ".join(parts), signature[:SIGNATURE_CHARS] + " " + path_words))
        db.executemany("insert into symbols values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.executemany("insert into words_fts (rowid, name, context) values (?, ?, ?)", words)

    def _add_names(self) -> None:
        """Trigram-index the names no indexed name had yet."""
        db = self._db
        new = db.execute(
            "select distinct norm from symbols where norm not in (select norm from names) order by norm"
        ).fetchall()
        db.executemany("insert into names (norm) values (?)", new)
        db.execute(
            "insert into norm_fts (rowid, norm) select id, norm from names where id > coalesce(?, 0)",
            (db.execute("select max(rowid) from norm_fts").fetchone()[0],),
        )

    def definitions(self, path: str, name: str) -> list[SymbolMatch]:
        """The indexed definitions named ``name`` in ``path`` (``match`` empty: none was asked)."""
        with self._lock:
            rows = self._db.execute(
                f"select {_COLUMNS} from symbols s where s.path = ? and s.name = ? order by s.line",  # noqa: S608
                (path, name),
            ).fetchall()
        return [SymbolMatch(r[2], r[4], r[1], r[5], r[6], r[7], r[8], "") for r in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("select count(*) from symbols").fetchone()[0])

    def search(self, query: str, *, limit: int = 20, kind: str | None = None, path: str | None = None) -> SymbolSearch:
        """The best ``limit`` definitions for ``query`` (``kind``: only this kind; ``path``:
        only this file or under this directory, relative to the root)."""
        words = name_parts(query)
        q = "".join(words)
        if not q:
            return SymbolSearch(query, (), 0)
        with self._lock:
            found = _Passes(self._db, q, words, kind, path).run(limit)
        ranked = sorted(found.values(), key=lambda hit: hit[0])
        return SymbolSearch(query, tuple(hit[1] for hit in ranked[:limit]), len(found))


_COLUMNS = "s.id, s.path, s.name, s.norm, s.kind, s.line, s.end_line, s.signature, s.container"
_Row = tuple[int, str, str, str, str, int, int, str, str | None]
#: The ranking key: tier (:data:`HOW`), query words missing from the name (context matches) or
#: 1 for a typo in the start of a longer name,
#: length difference, in a test path, path, line.
_Key = tuple[int, int, int, bool, str, int]


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _fts_phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class _Passes:
    """One search: the passes in order of match quality, each adding what it found.

    SQL is composed only from this module's constants and placeholders (``?``): the query's
    text, kind and path are always parameters (hence the ``S608`` waivers)."""

    def __init__(self, db: sqlite3.Connection, q: str, words: list[str], kind: str | None, path: str | None) -> None:
        self.db, self.q, self.words = db, q, words
        where: list[str] = []
        params: list[object] = []
        if kind:
            where.append("s.kind = ?")
            params.append(kind)
        prefix = None if path in (None, "", ".") else path.rstrip("/")
        if prefix:
            where.append("(s.path = ? or substr(s.path, 1, ?) = ?)")
            params += [prefix, len(prefix) + 1, prefix + "/"]
        self.filter = "".join(f" and {w}" for w in where)
        self.params = params
        self.found: dict[int, tuple[_Key, SymbolMatch]] = {}
        self._how_memo: dict[str, str | None] = {}

    def run(self, limit: int) -> dict[int, tuple[_Key, SymbolMatch]]:
        q = self.q
        upper = q[:-1] + chr(ord(q[-1]) + 1)
        self._rows("s.norm >= ? and s.norm < ?", [q, upper])
        if len(q) >= 3:
            self._rows(f"s.norm in ({_NAMES_MATCHING})", [_fts_phrase(q)])
        if len(self.words) > 1:
            match = "name : " + " ".join(_fts_phrase(w) + "*" for w in self.words)
            self._rows("s.id in (select rowid from words_fts where words_fts match ?)", [match])
        if self._exact:  # a name that exists was typed: its near misses are noise
            return self.found
        if self._better_than(_TYPO) < limit:
            pattern = "*" + "*".join(_glob_escape(c) for c in q) + "*"
            if self.filter:  # narrowed by kind or path: scan those definitions, not every name
                self._rows(f"s.norm glob ? limit {SCAN_ROWS}", [pattern])
            else:
                names = f"select norm from names where norm glob ? limit {SCAN_ROWS}"  # noqa: S608
                self._rows(f"s.norm in ({names})", [pattern])
        if self._better_than(_TYPO) < limit and typo_limit(q):
            self._typos()
        if len(self.found) < limit and len(self.words) > 1:
            match = " AND ".join(_fts_phrase(w) + "*" for w in self.words)
            sub = f"select rowid from words_fts where words_fts match ? limit {SCAN_ROWS}"  # noqa: S608
            self._rows(f"s.id in ({sub})", [match], context=True)
        return self.found

    @property
    def _exact(self) -> bool:
        return any(key[0] == 0 for key, _ in self.found.values())

    def _better_than(self, tier: int) -> int:
        return sum(1 for key, _ in self.found.values() if key[0] < tier)

    def _typos(self) -> None:
        """Names within the edit limit. Each edit spoils at most 3 of the query's trigrams, so such
        a name carries one of the query's ``3 * limit + 1`` rarest trigrams (``norm_vocab`` counts
        them), and shares at least ``trigrams - 3 * limit`` of them: only names passing both are
        measured, each distinct name once."""
        q, limit = self.q, typo_limit(self.q)
        if limit == 1:  # a short query may have no trigram left intact: look up every variant
            variants = json.dumps(sorted(_edits1(q)))
            self._rows("s.norm in (select value from json_each(?))", [variants], typo=True)
            head = "select distinct s.norm from symbols s join json_each(?) v on s.norm > v.value"
            prefixed = f"{head} and s.norm < v.value || '{chr(0x10FFFF)}'"
            longer = [n for (n,) in self.db.execute(prefixed, [variants]) if n[0] == q[0]]
            if longer:
                self._rows("s.norm in (select value from json_each(?))", [json.dumps(longer)], typo=True)
            return
        grams = {q[i : i + 3] for i in range(len(q) - 2)}
        marks = ",".join("?" * len(grams))
        vocab = f"select term, doc from norm_vocab where term in ({marks})"  # noqa: S608 - placeholders only
        counts = dict(self.db.execute(vocab, sorted(grams)))
        rare = sorted((g for g in grams if g in counts), key=lambda g: (counts[g], g))[: 3 * limit + 1]
        if not rare:
            return
        need = len(grams) - 3 * limit
        names = self.db.execute(
            f"{_NAMES_MATCHING} and (length(norm) between ? and ? or substr(norm, 1, 1) = ?)",
            [" OR ".join(_fts_phrase(g) for g in rare), len(q) - limit, len(q) + limit, q[0]],
        ).fetchall()
        shared = []
        for (norm,) in names:
            head = norm[: len(q) + limit]
            count = sum(1 for i in range(len(head) - 2) if head[i : i + 3] in grams)
            if count >= need:
                shared.append((-count, abs(len(norm) - len(q)), norm))
        shared.sort()
        close = [
            norm
            for _, _, norm in shared[:TYPO_CHECKS]
            if edit_distance(q, norm, limit) <= limit or _typo_in_prefix(q, norm, limit)
        ]
        if close:
            self._rows("s.norm in (select value from json_each(?))", [json.dumps(close)], typo=True)

    def _rows(self, condition: str, params: list[object], context: bool = False, typo: bool = False) -> None:
        if " limit " in condition:  # the filter goes before the limit
            head, _, tail = condition.rpartition(" limit ")
            sql = f"select {_COLUMNS} from symbols s where {head}{self.filter} limit {tail}"  # noqa: S608
        else:
            sql = f"select {_COLUMNS} from symbols s where {condition}{self.filter}"  # noqa: S608
        for row in self.db.execute(sql, [*params, *self.params]):
            known = self.found.get(row[0])
            if known is None or (typo and known[0][0] > _TYPO):
                self._score(row, context, typo)

    def _score(self, row: _Row, context: bool, typo: bool) -> None:
        ident, path, name, norm, kind, line, end_line, signature, container = row
        if name not in self._how_memo:
            self._how_memo[name] = _how(self.q, self.words, name, norm)
        how = self._how_memo[name]
        if typo and (how is None or HOW.index(how) > _TYPO):
            how = "typo"  # a close misspelling beats a loose subsequence
        elif how is None and context:
            how = "context"
        if how is None:
            return
        key = rank_key(self.q, self.words, how, name, norm, path, line)
        self.found[ident] = (key, SymbolMatch(name, kind, path, line, end_line, signature, container, how))


def rank_key(q: str, words: list[str], how: str, name: str, norm: str, path: str, line: int) -> _Key:
    """A match's place in the ranking (``q``: the normalized query, ``words`` its parts; ``norm``
    the normalized name): how it matched, query words the name lacks (context matches) or 1 for
    a typo in the start of a longer name, length difference, in a test path, path, line."""
    if how == "context":  # query words the name lacks
        missing = sum(1 for w in words if not any(p.startswith(w) for p in all_name_parts(name)))
    elif how == "typo":  # a misspelt whole name before a misspelt start of a longer one
        limit = typo_limit(q)
        missing = int(edit_distance(q, norm, limit) > limit)
    else:
        missing = 0
    return (HOW.index(how), missing, abs(len(norm) - len(q)), is_test_path(path), path, line)


def how_matched(q: str, words: list[str], name: str) -> str | None:
    """How the index would say ``name`` matches the normalized query ``q`` (None: it would not)."""
    return _how(q, words, name, "".join(all_name_parts(name)) or name.lower())


def name_norm(name: str) -> str:
    """The form a name is indexed in (lowercase, no separators; the name lowercased if none)."""
    return "".join(all_name_parts(name)) or name.lower()


_NAMES_MATCHING = "select norm from names where id in (select rowid from norm_fts where norm_fts match ?)"


def _how(q: str, words: list[str], name: str, norm: str) -> str | None:
    """How ``name`` (``norm`` normalized) matches the normalized query ``q``, or None."""
    if norm == q:
        return "exact"
    parts = all_name_parts(name)
    starts = [0]
    for part in parts:
        starts.append(starts[-1] + len(part))
    ends = set(starts)
    for start in starts[:-1]:
        if norm.startswith(q, start):
            whole = start + len(q) in ends
            return ("start" if start == 0 else "word") if whole else ("prefix" if start == 0 else "part")
    if q in norm:
        return "substring"
    if _abbreviates(q, parts):
        return "words"
    window = _subsequence_window(q, norm)
    if window is not None:
        return "subsequence" if window <= 2 * len(q) else "scattered"
    return None


def _abbreviates(q: str, parts: tuple[str, ...]) -> bool:
    """``q`` is made of prefixes of the name's parts, in order (``seqmatch`` and ``seq match``
    for ``SequenceMatcher``, ``comp tot`` for ``compute_total``); parts may be skipped."""
    reach = {0}
    for part in parts:
        more = set()
        for j in reach:
            k = 0
            while k < len(part) and j + k < len(q) and q[j + k] == part[k]:
                k += 1
                more.add(j + k)
        reach |= more
        if len(q) in reach:
            return True
    return False


def _subsequence_window(needle: str, hay: str) -> int | None:
    """The length of the shortest stretch of ``hay`` holding ``needle`` in order, or None."""
    best = None
    start = hay.find(needle[0])
    while start >= 0:
        pos = start
        for char in needle[1:]:
            pos = hay.find(char, pos + 1)
            if pos < 0:
                return best
        width = pos - start + 1
        best = width if best is None else min(best, width)
        start = hay.find(needle[0], start + 1)
    return best


_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def _edits1(q: str) -> set[str]:
    """Every string one edit from ``q`` (deletion, transposition, substitution, insertion)."""
    letters = set(_ALPHABET) | set(q)
    splits = [(q[:i], q[i:]) for i in range(len(q) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    out.discard(q)
    return out


def _typo_in_prefix(q: str, norm: str, limit: int) -> bool:
    """A misspelt start of a longer name (``cmpute`` for ``compute_total``)."""
    return len(norm) > len(q) and norm[0] == q[0] and edit_distance(q, norm[: len(q)], limit) <= limit
