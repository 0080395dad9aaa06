"""Ranking: personalized PageRank over the repository graph, spread to definitions, shaped by
small named signals (``docs/ranking.md``).

:mod:`.pagerank` is the power iteration; :mod:`.context` says what a signal reads and may
contribute; :mod:`.signals` holds one module per signal and the default list; :mod:`.ranker`
runs the phases. ``from hybridmap.pipeline.rank import rank, pagerank, Ranking, RankItem`` is the API
the rest of the package uses.
"""

from __future__ import annotations

from .context import EdgeFactor, FileFactor, Mass, Prior, RankContext, Signal
from .pagerank import CSR_MIN_EDGES, pagerank
from .ranker import Ranking, RankItem, rank
from .signals import DEFAULT_SIGNALS

__all__ = [
    "CSR_MIN_EDGES",
    "DEFAULT_SIGNALS",
    "EdgeFactor",
    "FileFactor",
    "Mass",
    "Prior",
    "RankContext",
    "RankItem",
    "Ranking",
    "Signal",
    "pagerank",
    "rank",
]
