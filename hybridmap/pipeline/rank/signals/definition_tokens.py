"""Definitions whose name contains the user's words: ``tab focus`` finds ``focus_next_tab``.

A mentioned identifier lifts the definitions spelled like it (:mod:`.mentioned_idents`); a word
that is only *part* of a name (``focus``, ``compute``, ``auth``) finds nothing that way. Here a
word matches a defined name when each of the word's parts (:func:`hybridmap.features.search.name_parts`:
camel humps, snake and kebab parts, the same split the symbol search indexes) begins one of the
name's parts: Mistral Vibe's definition-token match, SoulForge's full-text boost. The search
index itself (:mod:`hybridmap.features.search`) is not built for a map: on the standard library it takes
1.2-2.4 s, where this prefix index over the graph's 43,000 defined names takes 90-190 ms once,
only when a request names something, and is then updated from one graph to the next.
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ....languages.lexical import name_parts
from ...graph.repo_graph import RepoGraph
from ..context import Mass, PerGraph, RankContext, Signal


@dataclass(frozen=True, slots=True)
class NameParts:
    """The graph's defined names by part: the parts sorted (for prefix ranges), each part's names."""

    parts: tuple[str, ...]
    names_of: Mapping[str, frozenset[str]]
    names: frozenset[str] = frozenset()
    """Every name indexed."""

    @classmethod
    def of(cls, names: Iterator[str] | tuple[str, ...]) -> NameParts:
        names_of: dict[str, set[str]] = {}
        every = frozenset(names)
        for name in every:
            for part in set(name_parts(name)):
                names_of.setdefault(part, set()).add(name)
        return cls(tuple(sorted(names_of)), {p: frozenset(n) for p, n in names_of.items()}, every)

    def updated(self, names: frozenset[str]) -> NameParts:
        """The index of ``names``, from this one: only the names added or gone are split again
        (an edit changes a few of the standard library's 43,000 names; indexing them all takes
        90-190 ms, more than the rest of the edit's map)."""
        if names == self.names:
            return self
        changed: dict[str, set[str]] = {}
        for name in self.names - names:
            for part in set(name_parts(name)):
                changed.setdefault(part, set(self.names_of.get(part, ()))).discard(name)
        for name in names - self.names:
            for part in set(name_parts(name)):
                changed.setdefault(part, set(self.names_of.get(part, ()))).add(name)
        names_of = dict(self.names_of)
        for part, held in changed.items():
            if held:
                names_of[part] = frozenset(held)
            else:
                names_of.pop(part, None)
        same_parts = names_of.keys() == self.names_of.keys()
        return NameParts(self.parts if same_parts else tuple(sorted(names_of)), names_of, names)

    def starting(self, prefix: str) -> set[str]:
        """Every name with a part that begins with ``prefix``."""
        found: set[str] = set()
        i = bisect.bisect_left(self.parts, prefix)
        while i < len(self.parts) and self.parts[i].startswith(prefix):
            found |= self.names_of[self.parts[i]]
            i += 1
        return found

    def matching(self, word: str, min_part: int) -> set[str]:
        """The names each of whose ``word``'s parts (``min_part`` characters or longer) begins a part of."""
        parts = [p for p in name_parts(word) if len(p) >= min_part]
        if not parts:
            return set()
        found = self.starting(parts[0])
        for part in parts[1:]:
            if not found:
                break
            found &= self.starting(part)
        found.discard(word)
        return found


Matches = dict[str, tuple[str, frozenset[int]]]
"""name -> (the mentioned word it matched, the files defining it)."""
#: Per graph, the last request's matches (personalization and boosts both ask for them).
_MATCHES: weakref.WeakKeyDictionary[RepoGraph, tuple[object, Matches]] = weakref.WeakKeyDictionary()


#: The last index built, per process: the next graph's is derived from it (see NameParts.updated).
_LAST_INDEX: list[NameParts] = []


def _index_of(graph: RepoGraph) -> NameParts:
    names = frozenset(graph.definers)
    index = _LAST_INDEX[0].updated(names) if _LAST_INDEX else NameParts.of(tuple(names))
    _LAST_INDEX[:] = [index]
    return index


#: The graph's defined names by part, once per graph.
name_index: PerGraph[NameParts] = PerGraph(_index_of)


@dataclass(frozen=True)
class DefinitionTokens(Signal):
    """For each mentioned word, the defined names it is part of (not itself: that is
    :class:`~.mentioned_idents.MentionedIdents`, which runs after this one, so its pinned
    definitions stay first): their definitions' scores are multiplied by
    ``definition_token_boost`` and their files get ``definition_token_personalization``, once per
    word. A word matching names in more than ``definition_token_max_files`` files matches none
    (``get`` is part of half the names of a repository)."""

    name: ClassVar[str] = "definition_tokens"

    def _matches(self, ctx: RankContext) -> Matches:
        settings, graph = ctx.settings, ctx.graph
        key = (ctx.idents, settings.definition_token_min_chars, settings.definition_token_max_files)
        held = _MATCHES.get(graph)
        if held is not None and held[0] == key:
            return held[1]
        index = name_index(graph)
        out: Matches = {}
        for word in ctx.idents:
            names = index.matching(word, settings.definition_token_min_chars)
            files = {fi for name in names for fi in graph.definers.get(name, ())}
            if names and len(files) <= settings.definition_token_max_files:
                for name in sorted(names):
                    out.setdefault(name, (word, frozenset(graph.definers.get(name, ()))))
        _MATCHES[graph] = (key, out)
        return out

    def personalization(self, ctx: RankContext) -> Iterator[Mass]:
        amount = ctx.settings.definition_token_personalization
        if not amount or not ctx.idents:
            return
        given: set[tuple[str, int]] = set()
        for word, files in self._matches(ctx).values():
            for fi in sorted(files):
                if (word, fi) not in given:
                    given.add((word, fi))
                    yield Mass(fi, amount, f"defines a name containing '{word}'")

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        boost = ctx.settings.definition_token_boost
        if boost == 1.0 or not ctx.idents or not len(scores):
            return scores
        matched = self._matches(ctx)
        if matched:
            graph = ctx.graph
            hit = np.isin(graph.symbol_name, graph.names.numbers(matched))
            scores[hit] *= boost
        return scores
