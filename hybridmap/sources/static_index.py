"""The tree-sitter symbol source: answers at once, for every file, from parse or cache.

One :class:`TreeSitterSource` lives as long as its repository map. Between calls
it remembers each file's stat signature and tags, so a warm call re-reads only
files whose (mtime, ctime, size, inode) changed, and re-parses only those whose
*content* hash is not already cached. A file that changed just before it was
looked at is re-read next time whatever its signature says (a second write in
the same timestamp tick would not show), so the next map always sees the last
write.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import Cache, tags_key
from ..languages import LanguageRegistry
from ..model import Diagnostic, FileStatus, FileTags, Symbol
from ..settings import Settings
from ..walk import is_special_file, list_files, read_source, stat_signature
from .base import SourceResult
from .treesitter import NO_DEADLINE, ParseOptions, ParseOutcome, default_workers, parse_many

Progress = Callable[[str, int, int], None]

#: Paths named in a ``parse_deadline`` diagnostic; the rest are counted.
DEFERRED_NAMES_SHOWN = 20


@dataclass(frozen=True, slots=True)
class _Entry:
    signature: tuple[int, ...]
    """Stat signature when read; () for a file that changed just before: never matches."""
    language: str
    tags: FileTags | None
    diagnostics: tuple[Diagnostic, ...]
    sha256: str = ""


def _well_formed(value: object) -> bool:
    """A cached outcome of today's shape. An entry pickled from an older shape of these
    records unpickles with fields missing or of other types, and would fail later."""
    if not isinstance(value, ParseOutcome):
        return False
    try:
        tags, problems = value.tags, value.problems
        if not isinstance(problems, tuple):
            return False
        if tags is None:
            return True
        return (
            isinstance(tags, FileTags)
            and isinstance(tags.symbols, tuple)
            and isinstance(tags.ref_names, tuple)
            and isinstance(tags.ref_positions, bytes)
            and isinstance(tags.ref_kinds, bytes)
            and isinstance(tags.line_count, int)
            and isinstance(tags.complete, bool)
            and len(tags.ref_positions) == 8 * len(tags.ref_names) == 8 * len(tags.ref_kinds)
            and all(isinstance(symbol, Symbol) for symbol in tags.symbols[:1])
        )
    except AttributeError:
        return False


def _deadline_diagnostic(deferred: list[str], queued: int, settings: Settings) -> Diagnostic:
    """One line for every file the parse deadline left out: how many, and the first few by name."""
    shown = sorted(deferred)[:DEFERRED_NAMES_SHOWN]
    more = f" and {len(deferred) - len(shown)} more" if len(deferred) > len(shown) else ""
    return Diagnostic(
        ".",
        "parse_deadline",
        f"{len(deferred)} of {queued} files to parse did not fit in "
        f"parse_deadline_seconds={settings.parse_deadline_seconds:g} and have no symbols "
        f"in this map: {', '.join(shown)}{more}; what was parsed is cached, and the "
        "next map parses the rest",
    )


def _entry(
    rel: str, sig: tuple[int, ...], language: str, outcome: ParseOutcome, notes: tuple[Diagnostic, ...], sha: str
) -> _Entry:
    problems = tuple(Diagnostic(rel, kind, message) for kind, message in outcome.problems)
    return _Entry(sig, language, outcome.tags, notes + problems, sha if outcome.tags is not None else "")


class TreeSitterSource:
    name = "tree-sitter"
    STORE_BATCH = 256
    """Parsed files written to the disk cache per transaction during a cold parse."""

    def __init__(self, registry: LanguageRegistry, cache: Cache, settings: Settings) -> None:
        self._registry = registry
        self._cache = cache
        self._settings = settings
        self._entries: dict[str, _Entry] = {}
        self._fingerprints: dict[str, str] = {}
        self._options = ParseOptions.from_settings(settings)

    def _fingerprint(self, language: str) -> str:
        fp = self._fingerprints.get(language)
        if fp is None:
            fp = self._fingerprints[language] = self._registry.fingerprint(language)
        return fp

    def collect(self, root: Path, progress: Progress | None = None) -> SourceResult:
        settings = self._settings
        t0 = time.perf_counter()
        listing = list_files(root, settings)
        t_list = time.perf_counter()
        total = len(listing.paths)
        if progress is not None:
            progress("listing", total, total)
        diagnostics: list[Diagnostic] = list(listing.diagnostics)
        special: list[str] = []
        entries: dict[str, _Entry] = {}
        to_parse: list[tuple[str, str, bytes]] = []
        # path -> (cache key, content sha256, language, stat signature, bytes, read notes)
        lookups: dict[str, tuple[str, str, str, tuple[int, ...], bytes, tuple[Diagnostic, ...]]] = {}
        # path -> (cache key, content sha256, language, stat signature, read notes)
        pending: dict[str, tuple[str, str, str, tuple[int, ...], tuple[Diagnostic, ...]]] = {}
        reused = read_count = 0
        # Files whose ctime is at or after this were changing while we looked (see module doc).
        racy_from = time.time_ns() - int(settings.stat_racy_seconds * 1e9)
        for index, rel in enumerate(listing.paths, start=1):
            if is_special_file(rel):
                special.append(rel)
            language = self._registry.language_for(rel)
            if language is None:
                continue
            sig = stat_signature(root, rel)
            old = self._entries.get(rel)
            if sig is not None and old is not None and old.signature == sig and old.language == language:
                entries[rel] = old
                reused += 1
                continue
            kept: tuple[int, ...] = () if sig is None or sig[1] >= racy_from else sig
            read = read_source(root, rel, settings)
            read_count += 1
            if progress is not None:
                progress("reading", index, total)
            if read.status is not FileStatus.OK:
                diag = Diagnostic(rel, str(read.status), read.message)
                if sig is not None:
                    entries[rel] = _Entry(kept, language, None, (diag,))
                else:
                    diagnostics.append(diag)
                continue
            if old is not None and old.sha256 == read.sha256 and old.language == language:
                entries[rel] = _Entry(kept, language, old.tags, old.diagnostics, old.sha256)  # touched only
                continue
            key = tags_key(self._fingerprint(language), read.sha256, self._options.key)
            notes = tuple(Diagnostic(rel, kind, message) for kind, message in read.notes)
            lookups[rel] = (key, read.sha256, language, kept, read.data, notes)
        t_read = time.perf_counter()
        hits = self._cache.get_many({v[0] for v in lookups.values()})
        unusable = {key for key, value in hits.items() if not _well_formed(value)}
        if unusable:
            self._cache.drop(unusable, "written by another hybridmap version, or damaged")
        queued: set[str] = set()
        for rel, (key, sha, language, kept, data, notes) in lookups.items():
            outcome = hits.get(key)
            if outcome is not None and key not in unusable:
                entries[rel] = _entry(rel, kept, language, outcome, notes, sha)
            else:
                pending[rel] = (key, sha, language, kept, notes)
                if key not in queued:  # identical contents are parsed once
                    queued.add(key)
                    to_parse.append((rel, language, data))
        t_cache = time.perf_counter()
        workers = default_workers(settings.parse_workers)
        if len(to_parse) < settings.parallel_parse_min_files:
            workers = 1
        parse_stats: dict[str, float] = {}
        outcomes, unsaved = self._parse(to_parse, pending, workers, parse_stats, progress)
        t_parse = time.perf_counter()
        self._cache.set_many(unsaved)
        t_store = time.perf_counter()
        no_result = ParseOutcome(None, (("parse_error", "no result from the parser"),))
        deferred: list[str] = []
        for rel, (key, sha, language, kept, notes) in pending.items():
            outcome = outcomes.get(key, no_result)
            if outcome.deferred:  # no symbols this map; never remembered, so the next map parses it
                deferred.append(rel)
                entries[rel] = _Entry((), language, None, ())
                continue
            entries[rel] = _entry(rel, kept, language, outcome, notes, sha)
        if deferred:
            diagnostics.append(_deadline_diagnostic(deferred, len(to_parse), settings))
        self._entries = entries

        tags: dict[str, FileTags] = {}
        languages: dict[str, str] = {}
        shas: dict[str, str] = {}
        for rel, entry in entries.items():
            languages[rel] = entry.language
            if entry.tags is not None:
                tags[rel] = entry.tags
                shas[rel] = entry.sha256
            diagnostics.extend(entry.diagnostics)
        diagnostics.extend(self._cache.diagnostics)
        self._cache.diagnostics.clear()
        stats = {
            "list": t_list - t0,
            "read": t_read - t_list,
            "cache_lookup": t_cache - t_read,
            "parse": t_parse - t_cache,
            "cache_store": t_store - t_parse,
            "files_listed": float(len(listing.paths)),
            "files_read": float(read_count),
            "files_reused": float(reused),
            "files_parsed": float(len(to_parse)),
            "cache_hits": float(len(hits) - len(unusable)),
            "parse_workers": float(workers),
            "files_deferred": float(len(deferred)),
            **parse_stats,
        }
        return SourceResult(tags, languages, tuple(diagnostics), stats, tuple(special), shas)

    def _parse(
        self,
        to_parse: list[tuple[str, str, bytes]],
        pending: Mapping[str, tuple[Any, ...]],
        workers: int,
        parse_stats: dict[str, float],
        progress: Progress | None,
    ) -> tuple[dict[str, ParseOutcome], dict[str, ParseOutcome]]:
        """Parse within ``parse_deadline_seconds``: (cache key -> outcome, cacheable outcomes not
        stored yet). Full batches are stored while workers still parse (this process is otherwise
        idle)."""
        settings = self._settings
        outcomes: dict[str, ParseOutcome] = {}
        unsaved: dict[str, ParseOutcome] = {}
        # Wall clock: worker processes share it. Files it leaves out are parsed by the next map.
        deadline = time.time() + settings.parse_deadline_seconds if settings.parse_deadline_seconds > 0 else NO_DEADLINE
        for done, (rel, outcome) in enumerate(
            parse_many(
                to_parse,
                self._registry,
                workers=workers,
                config_dirs=[str(d) for d in self._registry.config_dirs],
                query_dirs=[str(d) for d in self._registry.query_dirs],
                options=self._options,
                deadline=deadline,
                stats=parse_stats,
            ),
            start=1,
        ):
            key = pending[rel][0]
            outcomes[key] = outcome
            if outcome.cacheable:
                unsaved[key] = outcome
            if len(unsaved) >= self.STORE_BATCH:
                self._cache.set_many(unsaved)
                unsaved = {}
            if progress is not None:
                progress("parsing", done, len(to_parse))
        return outcomes, unsaved
