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
    order = np.lexsort((-scores, symbol_file))  # by file, best first within a file
    files_sorted = symbol_file[order]
    starts = np.flatnonzero(np.r_[True, files_sorted[1:] != files_sorted[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    k = np.arange(len(order)) - run_start
    out = scores.copy()
    out[order] = scores[order] * np.power(decay, k)
    return out
