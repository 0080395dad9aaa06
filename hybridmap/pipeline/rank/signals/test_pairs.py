"""A chat file's own tests, and the code a chat test tests: paired by name, not by reference.

A change to a module and a change to its tests go together, and naming conventions say which
tests are whose (``foo.py`` / ``test_foo.py``, ``foo.go`` / ``foo_test.go``, ``Foo.java`` /
``FooTest.java``, ``foo.ts`` / ``foo.test.ts``, ``src/foo.rs`` / ``tests/foo.rs``, and a
package ``search/__init__.py`` / ``test_search.py``): the pairing rule is
:func:`hybridmap.languages.paths.subject_stem`. A test's name may also spell its subject's
directories before the stem (``tests/test_util/test_util_typing.py`` for ``pkg/util/typing.py``,
``test_downloadermiddleware_retry.py`` for ``downloadermiddlewares/retry.py``:
:func:`~hybridmap.languages.paths.qualified_subjects`); without it a repository named that way
had a fifth of its co-changed tests paired (scrapy 68 of 537, sphinx 19 of 353, in their last
1,500 commits), with it half (243, 97). The graph often misses
the pair (a test runs a binary, or calls through a package's root), and the history only knows
pairs that changed together before. A pair gets a lift of its best definition that does not
depend on its PageRank (as history partners do): ``test_pair_boost`` times the best score of
any definition outside the chat files. Where several files have the stem, the nearest win:
most directory names shared at the start and at the end of the two paths' directories
(``src/main/java/org/x/Foo.java`` and ``src/test/java/org/x/FooTest.java`` share ``src`` and
``java/org/x``), each directory word a test's name spells counting as one more, at most
``test_pair_files`` of them.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from dataclasses import dataclass
from itertools import compress
from typing import ClassVar

import numpy as np

from ....languages.paths import TEST, directories_hold, qualified_subjects, subject_stem
from ..context import FileFactor, PerFileList, RankContext, Signal, best_first, kinds_of_files

#: The reason a test of a chat file gives, and the reason its subject gives.
WHY_TEST = "tests a chat file (by name)"
WHY_SUBJECT = "tested by a chat file (by name)"


@dataclass(frozen=True, slots=True)
class _Stems:
    """Each file's pairing stem and test-ness, the files by stem, and the tests whose names
    qualify a stem with directories (:func:`~hybridmap.languages.paths.qualified_subjects`)."""

    stem: tuple[str, ...]
    is_test: tuple[bool, ...]
    by_stem: dict[str, tuple[int, ...]]
    """stem -> its files, for stems that can pair."""
    qualified: dict[str, tuple[tuple[int, tuple[str, ...]], ...]]
    """stem -> (test, the directory words its name puts before the stem), for stems a non-test
    file has."""

    @classmethod
    def of(cls, files: tuple[str, ...]) -> _Stems:
        tests = tuple(bool(kinds & TEST) for kinds in kinds_of_files(files))
        stems = tuple(map(subject_stem, files, tests))
        by_stem: dict[str, list[int]] = {}
        for fi, stem in enumerate(stems):
            if stem:
                by_stem.setdefault(stem, []).append(fi)
        qualified: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for fi in compress(range(len(files)), tests):
            for stem, words in qualified_subjects(files[fi]):
                if any(not tests[o] for o in by_stem.get(stem, ())):
                    qualified.setdefault(stem, []).append((fi, words))
        # A stem of one file pairs with nothing, unless a test's name qualifies it.
        kept = {s: tuple(f) for s, f in by_stem.items() if len(f) > 1 or s in qualified}
        return cls(stems, tests, kept, {s: tuple(q) for s, q in qualified.items()})

    def _candidates(self, files: tuple[str, ...], fi: int) -> Iterator[tuple[int, int]]:
        """``fi``'s pairs by name, each with how many directory words its test's name spells."""
        test, stem = self.is_test[fi], self.stem[fi]
        for o in self.by_stem.get(stem, ()):
            if self.is_test[o] != test:
                yield o, 0
        if test:
            for qualified_stem, words in qualified_subjects(files[fi]):
                for o in self.by_stem.get(qualified_stem, ()):
                    if not self.is_test[o] and directories_hold(words, files[o]):
                        yield o, len(words)
        else:
            for o, words in self.qualified.get(stem, ()):
                if directories_hold(words, files[fi]):
                    yield o, len(words)

    def nearest(self, files: tuple[str, ...], fi: int, limit: int, outside: Container[int] = ()) -> list[int]:
        """``fi``'s pairs by name (its tests, or a test's subjects) not in ``outside``: the nearest
        by :func:`_closeness` plus the directory words a test's name spells, at most ``limit`` of
        them, in index order."""
        near: dict[int, int] = {}
        for o, spelled in self._candidates(files, fi):
            if o not in outside:
                near[o] = max(near.get(o, -1), _closeness(files[fi], files[o]) + spelled)
        if not near:
            return []
        best = max(near.values())
        return sorted(o for o, score in near.items() if score == best)[:limit]


stems_of: PerFileList[_Stems] = PerFileList(_Stems.of)


def _closeness(a: str, b: str) -> int:
    """How many directory names two paths share at the start plus at the end of their
    directories (all of them, plus one, for the same directory)."""
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    if da == db:
        return len(da) + 1
    start = 0
    for x, y in zip(da, db, strict=False):
        if x != y:
            break
        start += 1
    end = 0
    for x, y in zip(reversed(da[start:]), reversed(db[start:]), strict=False):
        if x != y:
            break
        end += 1
    return start + end


@dataclass(frozen=True)
class TestPairs(Signal):
    """The tests of each chat or edited file, and the subject of each chat or edited test, by
    name (see the module docstring), get a lift of their best definition."""

    name: ClassVar[str] = "test_pairs"

    def _pairs(self, ctx: RankContext) -> dict[int, str]:
        """Paired file -> why, for every chat or edited file."""
        settings = ctx.settings
        if settings.test_pair_boost <= 0 or settings.test_pair_files <= 0 or not (ctx.chat or ctx.edited):
            return {}
        files = ctx.graph.files
        stems = stems_of(files)
        sources = dict.fromkeys((*ctx.chat, *ctx.edited))
        found: dict[int, str] = {}
        for fi in sources:
            why = WHY_SUBJECT if stems.is_test[fi] else WHY_TEST
            for o in stems.nearest(files, fi, settings.test_pair_files, sources):
                found.setdefault(o, why)
        return found

    def file_factors(self, ctx: RankContext) -> Iterator[FileFactor]:
        """No factor: the reason only (the lift is on the definitions, below)."""
        for fi, why in self._pairs(ctx).items():
            yield FileFactor(fi, why=why)

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        weight = ctx.settings.test_pair_boost
        if weight > 0 and len(scores):
            ctx.lift_best_definitions(scores, ((fi, 1.0) for fi in self._pairs(ctx)), weight)
        return scores


#: The reason a test pulled up behind its subject gives.
WHY_FOLLOWS = "tests a first-ranked file (by name)"


@dataclass(frozen=True)
class PairsFollow(Signal):
    """A request that names code (a message, mentioned names or files) and has no chat or edited
    file: the tests of its first-ranked files follow them. After every other lift, each of the
    ``paired_follow_files`` best files (by its best definition) that is not a test pulls its
    nearest tests by name (at most ``test_pair_files``) up to ``paired_follow_share`` of its own
    best score, never down. A commit that changes a module changes its tests with it (four in ten
    of the message tasks' target files are tests), while the test path weight keeps a test below
    the code it tests and a message names the code. The other way (a first-ranked test pulling
    its subject) was right once in 20. A chat or edited file's own pairs are
    :class:`TestPairs`'."""

    name: ClassVar[str] = "pairs_follow"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        settings = ctx.settings
        take, share = settings.paired_follow_files, settings.paired_follow_share
        named = ctx.idents or ctx.mentioned_files or ctx.message_words
        if take <= 0 or share <= 0 or not len(scores) or ctx.chat or ctx.edited or not named:
            return scores
        graph = ctx.graph
        files, starts = graph.files, graph.symbol_offsets
        stems = stems_of(files)
        for fi in _first_files(scores, graph.symbol_file, take):
            if stems.is_test[fi]:
                continue  # a first-ranked test's subject was a target once in 20 (docs/evaluation.md)
            best = float(scores[starts[fi] : starts[fi + 1]].max())
            if best <= 0:
                continue
            for o in stems.nearest(files, fi, settings.test_pair_files):
                lo, hi = int(starts[o]), int(starts[o + 1])
                if hi > lo:
                    top = lo + int(np.argmax(scores[lo:hi]))
                    if scores[top] < share * best:
                        scores[top] = share * best
                        ctx.late_reasons.setdefault(o, []).append(WHY_FOLLOWS)
        return scores


def _first_files(scores: np.ndarray, symbol_file: np.ndarray, take: int) -> list[int]:
    """The ``take`` files with the best definitions, best first (ties in index order): found
    among the best ``256 * take`` definitions, else (files of hundreds of definitions each)
    among all of them."""
    for window in (min(len(scores), 256 * take), len(scores)):
        firsts = list(dict.fromkeys(symbol_file[best_first(scores, window)].tolist()))[:take]
        if len(firsts) == take or window == len(scores):
            break
    return [int(fi) for fi in firsts]
