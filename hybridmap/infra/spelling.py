"""How far apart two spellings are: the one edit distance the symbol search's typo pass and a
message's misspelt names (:mod:`.conversation`) both use."""

from __future__ import annotations


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (a transposition counts 1); ``limit + 1`` when over."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            value = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, prev2[j - 2] + 1)
            cur[j] = value
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]
