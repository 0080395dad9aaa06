"""The tree-sitter symbol source, the base of every map: answers at once, for every file.

One :class:`TreeSitterSource` lives as long as its repository map. It takes each snapshot of
the :class:`~hybridmap.workspace.state.Workspace` with its change set and keeps the tags of files
whose content hash did not change; the others come from the cache (keyed by content, grammar
and options) or are parsed, in worker processes when there are many, within
``parse_deadline_seconds`` (a file left out is parsed by the next map).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, NamedTuple

from ..infra.patched import Patched, changed_keys
from ..languages.notebooks import is_notebook
from ..languages.registry import LanguageRegistry
from ..model import Diagnostic, FileStatus, FileTags, ParseOutcome
from ..settings import Settings
from ..store.cache import Cache, tags_key
from ..store.kept_keys import KeptKeys
from ..workspace.state import ChangeSet, FileState, Progress, Snapshot
from ..workspace.walk import read_source
from .base import PassiveSource, SourceRequest, SourceView
from .reparse import KeptTrees
from .treesitter import NO_DEADLINE, ParseOptions, default_workers, parse_many
from .unread_tags import UnreadTags, well_formed

#: Paths named in a ``parse_deadline`` diagnostic; the rest are counted.
DEFERRED_NAMES_SHOWN = 20
#: Files per step of a background parse of what the deadline left out (their bytes are held for
#: one step; a close waits at most for the file being parsed).
BACKGROUND_PARSE_CHUNK = 2_048


class _Entry(NamedTuple):
    """One indexed file. A named tuple, not a frozen dataclass: one is made per file of a one-shot
    map, and at 100,000 files the dataclass's field-by-field ``__init__`` was 0.1 s of it."""

    language: str
    tags: FileTags | None
    diagnostics: tuple[Diagnostic, ...]
    sha256: str = ""
    key: str = ""
    """The cache key of the tags (content, grammar, query, options)."""
    cached: bool = True
    """Whether the outcome is the cache's (a parse that failed for the machine, out of memory,
    is not: it is never kept for the next process)."""


def _deadline_diagnostic(deferred: list[str], queued: int, settings: Settings) -> Diagnostic:
    """One line for every file the parse deadline left out: how many, and the first few by name."""
    shown = sorted(deferred)[:DEFERRED_NAMES_SHOWN]
    more = f" and {len(deferred) - len(shown)} more" if len(deferred) > len(shown) else ""
    return Diagnostic(
        ".",
        "parse_deadline",
        f"{len(deferred)} of {queued} files to parse did not fit in "
        f"parse_deadline_seconds={settings.parse_deadline_seconds:g} and have no symbols "
        f"in this map: {', '.join(shown)}{more}; what was parsed is cached, and the rest is "
        "parsed in the background by a long-lived map (the MCP server, the daemon, the API), or "
        "by the next map",
    )


def _patched(
    tags: Mapping[str, FileTags], keys: Mapping[str, str], now: Mapping[str, _Entry | None]
) -> tuple[dict[str, FileTags], dict[str, str]]:
    """``tags`` and ``keys`` with each path of ``now`` set to its entry's, or removed; the tags
    say which paths they were patched at (:func:`~hybridmap.infra.patched.changed_keys`)."""
    new_keys = dict(keys)
    for rel, entry in now.items():
        if entry is None or entry.tags is None:
            new_keys.pop(rel, None)
        else:
            new_keys[rel] = entry.key
    changes = {rel: entry.tags if entry is not None else None for rel, entry in now.items()}
    return Patched.patch(tags, changes), new_keys


def _entry(rel: str, language: str, outcome: ParseOutcome, sha: str, key: str) -> _Entry:
    problems = tuple(Diagnostic(rel, kind, message) for kind, message in outcome.problems)
    return _Entry(language, outcome.tags, problems, sha, key, outcome.cacheable)


def _settle(
    entries: dict[str, _Entry],
    pending: Mapping[str, tuple[str, str, str]],
    outcomes: Mapping[str, ParseOutcome],
) -> list[str]:
    """Put the parsed outcomes into ``entries``; the paths whose parse was deferred."""
    no_result = ParseOutcome(None, (("parse_error", "no result from the parser"),))
    deferred: list[str] = []
    for rel, (key, sha, language) in pending.items():
        outcome = outcomes.get(key, no_result)
        if outcome.deferred:  # no symbols this map; never remembered, so the next map parses it
            deferred.append(rel)
            continue
        entries[rel] = _entry(rel, language, outcome, sha, key)
    return deferred


class TreeSitterSource(PassiveSource):
    name = "tree-sitter"
    STORE_BATCH = 256
    """Parsed files written to the disk cache per transaction during a cold parse."""

    def __init__(
        self,
        registry: LanguageRegistry,
        cache: Cache,
        settings: Settings,
        lazy_tags: bool = False,
        kept_keys: Callable[[], KeptKeys | None] | None = None,
    ) -> None:
        """``lazy_tags``: cached tags are decoded when a later stage first reads them (a one-shot
        map that adopts a kept graph reads a few files' tags: :class:`LazyFileTags`).
        ``kept_keys``: how the first index reads the keys the last one-shot process kept
        (:mod:`hybridmap.store.kept_keys`): a file whose key is the kept one is taken without
        reading its record (fetched when its tags are first read); None: every record is read."""
        self._registry = registry
        self._lazy_tags = lazy_tags
        self._unread = UnreadTags(cache, kept_keys if lazy_tags else None, self._parse_one)
        self._cache = cache
        self._settings = settings
        self._entries: dict[str, _Entry] = {}
        self._problems: dict[str, tuple[Diagnostic, ...]] = {}
        """Per path whose entry has diagnostics, those (what every view reports)."""
        self._indexed: Mapping[str, FileState] | None = None
        """The snapshot files the entries were made from (None: nothing indexed yet)."""
        self._unsettled: list[str] = []
        """Readable files the last index left without an entry (deferred, changed while read)."""
        self._fingerprints: dict[str, str] = {}
        self._options = ParseOptions.from_settings(settings)
        # Made once: a key per file formatted the options' part again (0.15 s at 100,000 files).
        self._options_keys = (self._options.key, self._options.notebook_key)
        self._trees = KeptTrees(settings.reparse_kept_bytes)
        """The last trees of files a map parsed in-process (an edit's), to parse them again from."""
        self._view = SourceView(self.name)
        self._version = 0
        self.deferred: tuple[str, ...] = ()
        """Paths the last index left out (the parse deadline): not in its view yet."""

    def _fingerprint(self, language: str) -> str:
        fp = self._fingerprints.get(language)
        if fp is None:
            fp = self._fingerprints[language] = self._registry.fingerprint(language)
        return fp

    async def update(self, snapshot: Snapshot, changes: ChangeSet, base: SourceView, request: SourceRequest) -> None:
        """Parse what changed (in a worker thread: parsing is computation)."""
        await asyncio.to_thread(self.index, snapshot, changes)

    def index(self, snapshot: Snapshot, changes: ChangeSet, progress: Progress | None = None) -> SourceView:
        """Tags for every readable file of ``snapshot``: kept, from the cache, or parsed."""
        t0 = time.perf_counter()
        kept = self._unread.take()
        entries, lookups, look_at, unread = self._to_look_up(snapshot, changes, kept)
        self._unread.learned(bool(lookups) or (kept is not None and len(kept.keys) != len(unread)))
        t_lookup = time.perf_counter()
        shared_before = self._cache.shared_counts()
        hits = self._cache.get_many({v[0] for v in lookups.values()}, lazy_tags=self._lazy_tags)
        unusable = {key for key, value in hits.items() if not well_formed(value)}
        if unusable:
            self._cache.drop(unusable, "written by another hybridmap version, or damaged")
        pending: dict[str, tuple[str, str, str]] = {}
        to_parse: list[tuple[str, str, bytes]] = []
        queued: set[str] = set()
        for rel, (key, sha, language, data) in lookups.items():
            outcome = hits.get(key)
            if outcome is not None and key not in unusable:
                entries[rel] = _entry(rel, language, outcome, sha, key)
            else:
                if data is None:
                    data = self._reread(snapshot, rel)
                    if data is None:  # changed since the refresh: the next one reads it
                        continue
                pending[rel] = (key, sha, language)
                if key not in queued:  # identical contents are parsed once
                    queued.add(key)
                    to_parse.append((rel, language, data))
        t_cache = time.perf_counter()
        workers = default_workers(self._settings.parse_workers)
        if len(to_parse) < self._settings.parallel_parse_min_files:
            workers = 1
        parse_stats: dict[str, float] = {}
        outcomes, unsaved = self._parse(to_parse, pending, workers, parse_stats, progress)
        t_parse = time.perf_counter()
        self._cache.set_many(unsaved)
        t_store = time.perf_counter()
        deferred = _settle(entries, pending, outcomes)
        # What may differ from the last view: the files looked up again, and those now gone.
        gone = self._entries.keys() - entries.keys() if look_at is None else [p for p in look_at if p not in entries]
        changed = [*lookups, *unread, *(p for p in gone if p in self._entries)]
        self._settled(entries, changed if look_at is not None else None)
        self._indexed = snapshot.files
        files = snapshot.files
        self._unsettled = [
            p
            for p in (look_at if look_at is not None else files)
            if p not in entries and p in files and files[p].sha256
        ]
        self.deferred = tuple(deferred)
        stats = {
            "cache_lookup": (t_cache - t_lookup) + (t_lookup - t0),
            "parse": t_parse - t_cache,
            "cache_store": t_store - t_parse,
            "files_parsed": float(len(to_parse)),
            "cache_hits": float(len(hits) - len(unusable)),
            "tags_unread": float(len(unread)),
            "parse_workers": float(workers),
            "files_deferred": float(len(deferred)),
            **parse_stats,
            **{f"shared_{k}": float(v - shared_before[k]) for k, v in self._cache.shared_counts().items()},
        }
        diagnostics: list[Diagnostic] = []
        if deferred:
            diagnostics.append(_deadline_diagnostic(deferred, len(to_parse), self._settings))
        self._view = self._make_view(diagnostics, stats, changed)
        return self._view

    def parse_deferred(self, snapshot: Snapshot, stop: threading.Event) -> int:
        """Parse what the last index left out into the cache, and only there: this source's own
        state is the map's (the next :meth:`index` finds them in the cache). A chunk at a time, each
        within ``parse_deadline_seconds``; stops between files once ``stop`` is set. Returns how
        many outcomes were stored."""
        paths = [rel for rel in self.deferred if rel in snapshot.files]
        stored = 0
        for start in range(0, len(paths), BACKGROUND_PARSE_CHUNK):
            if stop.is_set():
                break
            jobs: list[tuple[str, str, bytes]] = []
            keys: dict[str, str] = {}
            for rel in paths[start : start + BACKGROUND_PARSE_CHUNK]:
                state = snapshot.files[rel]
                options_key = self._options_keys[is_notebook(rel)]
                key = tags_key(self._fingerprint(state.language), state.sha256, options_key)
                data = None if key in keys else self._reread(snapshot, rel)  # identical contents: once
                if data is not None:
                    keys[key] = rel
                    jobs.append((rel, state.language, data))
            cached = self._cache.get_many(keys)  # a map may have parsed them meanwhile
            by_path = {rel: key for key, rel in keys.items() if key not in cached}
            stored += self._parse_to_cache([job for job in jobs if job[0] in by_path], by_path, stop)
        return stored

    def _parse_to_cache(
        self, jobs: list[tuple[str, str, bytes]], keys: Mapping[str, str], stop: threading.Event
    ) -> int:
        settings = self._settings
        workers = default_workers(settings.parse_workers) if len(jobs) >= settings.parallel_parse_min_files else 1
        outcomes: dict[str, ParseOutcome] = {}
        parsed = self._parse_within_deadline(jobs, workers)
        try:
            for rel, outcome in parsed:
                if outcome.cacheable:
                    outcomes[keys[rel]] = outcome
                if stop.is_set():
                    break
        finally:
            parsed.close()  # stops the workers when we leave early
        self._cache.set_many(outcomes)
        return len(outcomes)

    def _parse_within_deadline(
        self,
        jobs: list[tuple[str, str, bytes]],
        workers: int,
        stats: dict[str, float] | None = None,
        trees: KeptTrees | None = None,
    ) -> Generator[tuple[str, ParseOutcome], None, None]:
        """:func:`parse_many` of ``jobs`` within ``parse_deadline_seconds`` from now (wall clock:
        worker processes share it); what it leaves out comes back deferred."""
        settings = self._settings
        deadline = time.time() + settings.parse_deadline_seconds if settings.parse_deadline_seconds > 0 else NO_DEADLINE
        return parse_many(
            jobs,
            self._registry,
            workers=workers,
            config_dirs=[str(d) for d in self._registry.config_dirs],
            query_dirs=[str(d) for d in self._registry.query_dirs],
            options=self._options,
            deadline=deadline,
            stats=stats,
            kept=trees,
        )

    def _to_look_up(
        self, snapshot: Snapshot, changes: ChangeSet, kept: KeptKeys | None = None
    ) -> tuple[dict[str, _Entry], dict[str, tuple[str, str, str, bytes | None]], list[str] | None, list[str]]:
        """The entries that stand, the files to look up in the cache (path -> cache key, content
        sha256, language, bytes: None when the refresh did not read them, as for a file trusted by
        its signature or deferred last time: read on a miss only), and the paths looked at (None:
        every file). Only the paths whose state may differ from the last index's (the snapshot's
        patches say which, or a scan of identities) and those it could not settle are looked at:
        at 100,000 files a pass over every file was ~50 ms of an edit's map. A file whose key is
        ``kept``'s is taken as it is, unread (:class:`UnreadTags`): the last list, of those paths."""
        last = self._indexed
        look_at = None if last is None else [*changed_keys(last, snapshot.files), *self._unsettled]
        entries: dict[str, _Entry] = dict(self._entries) if look_at is not None else {}
        lookups: dict[str, tuple[str, str, str, bytes | None]] = {}
        unread: list[str] = []
        for rel in dict.fromkeys(look_at) if look_at is not None else snapshot.files:
            state = snapshot.files.get(rel)
            if state is None or not state.sha256:
                entries.pop(rel, None)
                continue
            old = self._entries.get(rel)
            if old is not None and old.sha256 == state.sha256 and old.language == state.language:
                entries[rel] = old
                continue
            entries.pop(rel, None)
            data = changes.contents.get(rel)
            options_key = self._options_keys[is_notebook(rel)]
            key = tags_key(self._fingerprint(state.language), state.sha256, options_key)
            if kept is not None and kept.keys.get(rel) == key:
                tags, problems = self._unread.tags(snapshot, rel, key, kept)
                entries[rel] = _Entry(state.language, tags, problems, state.sha256, key)
                unread.append(rel)
                continue
            lookups[rel] = (key, state.sha256, state.language, data)
        return entries, lookups, look_at, unread

    def _parse_one(self, snapshot: Snapshot, rel: str) -> ParseOutcome | None:
        """``rel`` parsed now, in this process (None: it no longer holds its snapshot's contents)."""
        data = self._reread(snapshot, rel)
        if data is None:
            return None
        return dict(self._parse_within_deadline([(rel, snapshot.files[rel].language, data)], workers=1)).get(rel)

    def keys_to_keep(self) -> KeptKeys | None:
        """What the next one-shot process may take unread (:meth:`UnreadTags.to_keep`)."""
        return self._unread.to_keep((rel, e.key, e.tags, e.diagnostics, e.cached) for rel, e in self._entries.items())

    def _settled(self, entries: dict[str, _Entry], changed: Sequence[str] | None) -> None:
        """Keep ``entries`` as the index's, and each file's problems, read again only for the
        ``changed`` paths (None: every file's, in the entries' order)."""
        self._entries = entries
        if changed is None:
            self._problems = {rel: e.diagnostics for rel, e in entries.items() if e.diagnostics}
            return
        for rel in changed:
            entry = entries.get(rel)
            if entry is not None and entry.diagnostics:
                self._problems[rel] = entry.diagnostics
            else:
                self._problems.pop(rel, None)

    def _make_view(self, diagnostics: list[Diagnostic], stats: dict[str, float], changed: list[str]) -> SourceView:
        """The view of :attr:`_entries`: the last view's own mappings when no file's tags moved
        (whoever memoizes on them, the merge and the graph, sees no change), else the last ones
        with the ``changed`` paths (every path whose entry may differ from the last view's) set:
        at 100,000 files, a few paths instead of a pass over every entry on each edit."""
        for problems in self._problems.values():
            diagnostics.extend(problems)
        last = self._view
        now = {rel: self._entries.get(rel) for rel in changed}
        moved = any(last.tags.get(rel) is not (e.tags if e is not None else None) for rel, e in now.items())
        tags, keys = _patched(last.tags, last.keys, now) if moved else (last.tags, last.keys)
        self._version += moved
        return SourceView(
            self.name, tags, diagnostics=tuple(diagnostics), stats=stats, version=self._version, keys=keys
        )

    def _reread(self, snapshot: Snapshot, rel: str) -> bytes | None:
        result = read_source(snapshot.root, rel, self._settings)
        state = snapshot.files[rel]
        return result.data if result.status is FileStatus.OK and result.sha256 == state.sha256 else None

    def view(self, snapshot: Snapshot, base: SourceView | None = None) -> SourceView:
        """The tags of the last :meth:`index` (tree-sitter is the base: ``base`` is ignored)."""
        return self._view

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
        outcomes: dict[str, ParseOutcome] = {}
        unsaved: dict[str, ParseOutcome] = {}
        parsed = self._parse_within_deadline(to_parse, workers, parse_stats, self._trees)
        for done, (rel, outcome) in enumerate(parsed, start=1):
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
