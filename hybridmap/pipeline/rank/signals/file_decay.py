"""Diminishing returns within a file: the budget covers more files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..context import RankContext, Signal


@dataclass(frozen=True)
class FileDecay(Signal):
    """The k-th best definition of each file (k = 0, 1, ...) is worth ``file_symbol_decay ** k``
    of its score: the tenth definition of the best file is worth less to a model than the best
    definition of the next file."""

    name: ClassVar[str] = "file_decay"

    def boost_definitions(self, ctx: RankContext, scores: np.ndarray) -> np.ndarray:
        decay = ctx.settings.file_symbol_decay
        if decay >= 1.0 or not len(scores):
            return scores
        return decay_within_files(scores, ctx.graph.symbol_file, decay)


def decay_within_files(scores: np.ndarray, symbol_file: np.ndarray, decay: float) -> np.ndarray:
    """Multiply the k-th best symbol of each file (k = 0, 1, ...) by ``decay ** k``."""
    order, files_sorted = _best_first_by_file(scores, symbol_file)
    starts = np.flatnonzero(np.r_[True, files_sorted[1:] != files_sorted[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    k = np.arange(len(order)) - run_start
    out = scores.copy()
    out[order] = scores[order] * np.power(decay, k)
    return out


def _best_first_by_file(scores: np.ndarray, symbol_file: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The symbols by file, best first within a file (ties in index order), and their files: what
    ``np.lexsort((-scores, symbol_file))`` gives. A graph keeps each file's symbols together, in
    file order; then one stable sort by score and one sort of unique integer keys (file, then the
    score's place) give the same order in about 60 % of the lexsort's time on 2 M symbols."""
    n = len(scores)
    if n == 0 or bool(np.any(symbol_file[1:] < symbol_file[:-1])):
        order = np.lexsort((-scores, symbol_file))
        return order, symbol_file[order]
    by_score = np.argsort(-scores, kind="stable")
    place = np.empty(n, np.int64)
    place[by_score] = np.arange(n)
    keys = np.sort(symbol_file.astype(np.int64) * n + place)  # unique: no tie to break
    return by_score[keys % n], symbol_file
