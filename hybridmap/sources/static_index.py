"""The tree-sitter symbol source: answers at once, for every file, from parse or cache.

One :class:`TreeSitterSource` lives as long as its repository map. Between calls
it remembers each file's stat signature and tags, so a warm call re-reads only
files whose (mtime, size, inode) changed, and re-parses only those whose
*content* hash is not already cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..cache import Cache, tags_key
from ..languages import LanguageRegistry
from ..model import Diagnostic, FileStatus, FileTags
from ..settings import Settings
from ..walk import is_special_file, list_files, read_source, stat_signature
from .base import SourceResult
from .treesitter import default_workers, parse_many

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class _Entry:
    signature: tuple[int, int, int]
    language: str
    tags: FileTags | None
    diagnostic: Diagnostic | None
    sha256: str = ""


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
        self._extraction_key = f"sig{settings.max_signature_lines}-ml{settings.query_match_limit}"

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
        diagnostics: list[Diagnostic] = list(listing.diagnostics)
        special: list[str] = []
        entries: dict[str, _Entry] = {}
        to_parse: list[tuple[str, str, bytes]] = []
        # path -> (cache key, content sha256, language, stat signature, bytes, transcoding note)
        lookups: dict[str, tuple[str, str, str, tuple[int, int, int], bytes, str]] = {}
        # path -> (cache key, content sha256, language, stat signature, transcoding note)
        pending: dict[str, tuple[str, str, str, tuple[int, int, int], str]] = {}
        reused = read_count = 0
        for rel in listing.paths:
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
            read = read_source(root, rel, settings)
            read_count += 1
            if read.status is not FileStatus.OK:
                diag = Diagnostic(rel, str(read.status), read.message)
                if sig is not None:
                    entries[rel] = _Entry(sig, language, None, diag)
                else:
                    diagnostics.append(diag)
                continue
            key = tags_key(self._fingerprint(language), read.sha256, self._extraction_key)
            lookups[rel] = (key, read.sha256, language, sig or (0, 0, 0), read.data, read.message)
        t_read = time.perf_counter()
        hits = self._cache.get_many({v[0] for v in lookups.values()})
        queued: set[str] = set()
        for rel, (key, sha, language, sig, data, note_msg) in lookups.items():
            note = Diagnostic(rel, "transcoded", note_msg) if note_msg else None
            tags = hits.get(key)
            if isinstance(tags, FileTags):
                entries[rel] = _Entry(sig, language, tags, note, sha)
            else:
                pending[rel] = (key, sha, language, sig, note_msg)
                if key not in queued:  # identical contents are parsed once
                    queued.add(key)
                    to_parse.append((rel, language, data))
        t_cache = time.perf_counter()
        workers = default_workers(settings.parse_workers)
        if len(to_parse) < settings.parallel_parse_min_files:
            workers = 1
        new_values: dict[str, FileTags] = {}
        failed: dict[str, str] = {}
        unsaved: dict[str, FileTags] = {}
        for done, (rel, outcome) in enumerate(
            parse_many(to_parse, self._registry, workers=workers,
                       config_dirs=[str(d) for d in self._registry.config_dirs],
                       query_dirs=[str(d) for d in self._registry.query_dirs],
                       max_signature_lines=settings.max_signature_lines,
                       match_limit=settings.query_match_limit),
            start=1,
        ):
            if isinstance(outcome, FileTags):
                new_values[pending[rel][0]] = unsaved[pending[rel][0]] = outcome
            else:
                failed[pending[rel][0]] = outcome
            if len(unsaved) >= self.STORE_BATCH:
                # Stored while workers still parse: this process is otherwise idle.
                self._cache.set_many(unsaved)
                unsaved = {}
            if progress is not None:
                progress("parsing", done, len(to_parse))
        t_parse = time.perf_counter()
        self._cache.set_many(unsaved)
        t_store = time.perf_counter()
        for rel, (key, sha, language, sig, note_msg) in pending.items():
            outcome = new_values.get(key)
            if outcome is None:
                error = failed.get(key, "no result from the parser")
                entries[rel] = _Entry(sig, language, None, Diagnostic(rel, "parse_error", error))
                continue
            diag = None
            if not outcome.complete:
                diag = Diagnostic(rel, "partial_parse", "query match limit reached; symbols of this file are partial")
            elif note_msg:
                diag = Diagnostic(rel, "transcoded", note_msg)
            entries[rel] = _Entry(sig, language, outcome, diag, sha)
        self._entries = entries

        tags: dict[str, FileTags] = {}
        languages: dict[str, str] = {}
        shas: dict[str, str] = {}
        for rel, entry in entries.items():
            languages[rel] = entry.language
            if entry.tags is not None:
                tags[rel] = entry.tags
                shas[rel] = entry.sha256
            if entry.diagnostic is not None:
                diagnostics.append(entry.diagnostic)
        diagnostics.extend(self._cache.diagnostics)
        self._cache.diagnostics.clear()
        stats = {
            "list": t_list - t0, "read": t_read - t_list, "cache_lookup": t_cache - t_read,
            "parse": t_parse - t_cache, "cache_store": t_store - t_parse,
            "files_listed": float(len(listing.paths)), "files_read": float(read_count),
            "files_reused": float(reused), "files_parsed": float(len(to_parse)),
            "cache_hits": float(len(hits)), "parse_workers": float(workers),
        }
        return SourceResult(tags, languages, tuple(diagnostics), stats, tuple(special), shas)
