"""A chat file's own tests, and the code a chat test tests: paired by name, not by reference.

A change to a module and a change to its tests go together, and naming conventions say which
tests are whose (``foo.py`` / ``test_foo.py``, ``foo.go`` / ``foo_test.go``, ``Foo.java`` /
``FooTest.java``, ``foo.ts`` / ``foo.test.ts``, ``src/foo.rs`` / ``tests/foo.rs``): the
pairing rule is :func:`hybridmap.languages.paths.subject_stem`. The graph often misses
the pair (a test runs a binary, or calls through a package's root), and the history only knows
pairs that changed together before. A pair gets a lift of its best definition that does not
depend on its PageRank (as history partners do): ``test_pair_boost`` times the best score of
any definition outside the chat files. Where several files have the stem, the nearest win:
most directory names shared at the start and at the end of the two paths' directories
(``src/main/java/org/x/Foo.java`` and ``src/test/java/org/x/FooTest.java`` share ``src`` and
``java/org/x``), at most ``test_pair_files`` of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....languages.paths import is_test_path, subject_stem
from ..context import FileFactor, PerFileList, RankContext, Signal

#: The reason a test of a chat file gives, and the reason its subject gives.
WHY_TEST = "tests a chat file (by name)"
WHY_SUBJECT = "tested by a chat file (by name)"


@dataclass(frozen=True, slots=True)
class _Stems:
    """Each file's pairing stem and test-ness, and the files by stem."""

    stem: tuple[str, ...]
    is_test: tuple[bool, ...]
    by_stem: dict[str, tuple[int, ...]]

    @classmethod
    def of(cls, files: tuple[str, ...]) -> _Stems:
        tests = tuple(map(is_test_path, files))
        stems = tuple(map(subject_stem, files, tests))
        by_stem: dict[str, list[int]] = {}
        for fi, stem in enumerate(stems):
            if stem:
                by_stem.setdefault(stem, []).append(fi)
        return cls(stems, tests, {s: tuple(f) for s, f in by_stem.items() if len(f) > 1})


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
            test = stems.is_test[fi]
            others = [o for o in stems.by_stem.get(stems.stem[fi], ()) if stems.is_test[o] != test and o not in sources]
            if not others:
                continue
            near = {o: _closeness(files[fi], files[o]) for o in others}
            best = max(near.values())
            for o in sorted(o for o in others if near[o] == best)[: settings.test_pair_files]:
                found.setdefault(o, WHY_SUBJECT if test else WHY_TEST)
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
