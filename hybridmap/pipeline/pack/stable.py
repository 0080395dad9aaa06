"""A stable layout: what stays in the map keeps its place and its text; what is new goes after.

Model providers cache a prompt's longest repeated prefix and discount it (up to 90 %); a map in
rank order reshuffles at every re-rank, so an agent that puts the map early in its prompt loses
the cached prefix every turn. With a stable layout (``stable_layout``, or a request's
``stable``) a session's map is laid out as:

1. the previous map's items, in its order and blocks, with the summaries they had (and no new
   ones), up to the first one the new ranking no longer wants (not among its best
   ``stable_layout_depth`` x as many items as the previous map had, or gone): the text changes
   there, so what followed it is no prefix to keep and is ranked anew; as many as fit in
   1 - ``stable_layout_fresh_share`` of the budget (the first ones: the prefix is what counts);
2. then the rest of the new ranking, best first, in blocks of their own (a file of the kept part
   with new items gets a second block here, rather than changing its first).

A full re-rank (the plain rank order, which the next maps then keep) happens when fewer than
``stable_layout_min_kept`` of the previous items are still wanted, every
``stable_layout_max_maps`` maps, and when the budget changed. Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ...model import FileTags
from ...settings import Settings
from ..inputs.session import Block, Layout
from ..rank import RankItem


@dataclass(frozen=True, slots=True)
class StableOrder:
    """The items in the order the packer takes them, and what the renderer keeps apart."""

    items: tuple[RankItem, ...]
    """The kept items (the previous text order), then the others, best first."""
    kept_blocks: Mapping[tuple[str, int], int] = field(default_factory=dict)
    """(path, symbol) of each kept item -> the index of its block in the previous layout."""
    summaries_allowed: Collection[tuple[str, int]] | None = None
    """The kept items that may have a summary (those that had one); None: no rule (a full re-rank)."""
    age: int = 0
    """Maps since the last full re-rank, this one counted (0: this is one)."""
    kept: int = 0
    """How many of ``items`` are kept ones (they come first)."""

    def keeping(self, count: int) -> StableOrder:
        """The same order with only the first ``count`` items kept in place; the other kept items
        go back among the rest, in rank order (a chat file's, unranked, last)."""
        if count >= self.kept:
            return self
        kept = self.items[:count]
        rest = sorted(self.items[count:], key=lambda item: -item.score)  # stable: the rest keeps its order
        still = {(item.path, item.symbol) for item in kept}
        blocks = {key: index for key, index in self.kept_blocks.items() if key in still}
        return replace(self, items=(*kept, *rest), kept_blocks=blocks, kept=count)


def stable_order(
    ranked: Sequence[RankItem],
    previous: Layout | None,
    budget: int,
    settings: Settings,
    tags: Mapping[str, FileTags],
    chat: Collection[str] = (),
) -> StableOrder:
    """``ranked`` (best first) laid out after ``previous`` (module doc). A chat file's kept items
    stay too (the ranking leaves chat files out, but dropping their block would cut the prefix
    there, and the agent opens next what the map showed); an item is followed by its name when an
    edit moved it, and is not kept when its file or its name is gone."""
    if previous is None or previous.budget != budget or previous.age + 1 >= settings.stable_layout_max_maps:
        return StableOrder(tuple(ranked))
    shown = sum(len(items) for _, items in previous.blocks)
    depth = max(1, int(shown * settings.stable_layout_depth))
    wanted = {(item.path, item.symbol): item for item in ranked[:depth]}
    kept: list[RankItem] = []
    kept_blocks: dict[tuple[str, int], int] = {}
    for index, (path, items) in enumerate(previous.blocks):
        stop = False
        for was, name in sorted(items, key=lambda pair: _line_of(tags, path, pair)):  # as the text shows them
            symbol = _now_at(tags, path, was, name)
            item = wanted.get((path, symbol)) if symbol is not None else None
            if item is None and symbol is not None and path in chat:
                item = RankItem(0.0, path, symbol)
            if item is None or symbol is None:
                stop = True  # the text changes here: what followed is no longer a prefix to keep
                break
            if (path, symbol) not in kept_blocks:
                kept.append(item)
                kept_blocks[(path, symbol)] = index
        if stop:
            break
    if not shown or len(kept) < settings.stable_layout_min_kept * shown:
        return StableOrder(tuple(ranked))
    rest = [item for item in ranked if (item.path, item.symbol) not in kept_blocks]
    allowed = previous.summarized & kept_blocks.keys()
    return StableOrder((*kept, *rest), kept_blocks, allowed, previous.age + 1, len(kept))


def _line_of(tags: Mapping[str, FileTags], path: str, pair: tuple[int, str]) -> int:
    """Where a previous item's definition starts now (-1: the file by name; unknown: its index)."""
    symbol = _now_at(tags, path, *pair)
    return tags[path].symbols[symbol].span.start_line if symbol is not None and symbol >= 0 else -1


def _now_at(tags: Mapping[str, FileTags], path: str, was: int, name: str) -> int | None:
    """Where the symbol ``name`` that was ``path``'s symbol ``was`` is now: the same index when it
    still has that name, else the nearest symbol of that name (an edit above it moved it); None
    when the file or the name is gone."""
    if _name_at(tags, path, was) == name:
        return was
    file_tags = tags.get(path)
    if file_tags is None or was < 0:
        return None
    found = [i for i, symbol in enumerate(file_tags.symbols) if symbol.name == name]
    return min(found, key=lambda i: abs(i - was)) if found else None


def _name_at(tags: Mapping[str, FileTags], path: str, symbol: int) -> str | None:
    """The name of ``path``'s symbol ``symbol`` ("" for the file itself); None when gone."""
    file_tags = tags.get(path)
    if file_tags is None:
        return None
    if symbol < 0:
        return ""
    return file_tags.symbols[symbol].name if symbol < len(file_tags.symbols) else None


def layout_of(
    items: Sequence[RankItem],
    order: StableOrder,
    summarized: Collection[tuple[str, int]],
    budget: int,
    tags: Mapping[str, FileTags],
) -> Layout:
    """The layout a map packed from ``order`` shows: its blocks in text order (the renderer's:
    each block where its first item is)."""
    blocks: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for item in items:
        key = (item.path, order.kept_blocks.get((item.path, item.symbol), -1))
        blocks.setdefault(key, []).append((item.symbol, _name_at(tags, item.path, item.symbol) or ""))
    laid: tuple[Block, ...] = tuple((path, tuple(block)) for (path, _), block in blocks.items())
    return Layout(laid, frozenset(summarized), budget, order.age)
