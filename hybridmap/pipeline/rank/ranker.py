"""Personalized PageRank over the repository graph, spread to definitions, shaped by signals.

Pure computation. :func:`rank` builds the request's :class:`~.context.RankContext` and runs
the phases over an ordered tuple of signals (:data:`~.signals.DEFAULT_SIGNALS`): edge weights
-> personalization -> file priors -> PageRank -> file multipliers -> spread to definitions ->
definition boosts -> the best ``limit`` items. What each phase takes from a signal is in
:mod:`.context`; the signals themselves are one module each in :mod:`.signals`.

What stays here is what every ranking does whatever its signals: a share of the teleport
reaches every file (``uniform_personalization_share``), each file's rank flows along its
out-edges to the (file, identifier) definitions it uses, definitions nobody references keep
``unreferenced_definition_share`` of their file's rank, files without definitions are shown by
name, and chat files are never items (the model has them already).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...languages.visibility import Visibility
from ...model import FileTags
from ...settings import Settings
from ..graph.neighbourhood import Neighbourhood
from ..graph.repo_graph import RepoGraph
from ..inputs.cochange import CoChange
from ..inputs.session import SessionFiles
from .context import Prior, RankContext, Signal, best_first
from .lexical import LexicalIndex
from .pagerank import pagerank
from .signals import DEFAULT_SIGNALS
from .signals.path_kinds import PathKinds


@dataclass(frozen=True, slots=True)
class RankItem:
    score: float
    path: str
    symbol: int
    """Index into the file's symbols, or -1 for a file shown by name only."""


@dataclass(frozen=True, slots=True)
class Ranking:
    items: tuple[RankItem, ...]
    """The best items, best first (at most the ``limit`` asked for)."""
    file_scores: Mapping[str, float]
    reasons: Mapping[str, tuple[str, ...]]
    total_items: int
    """How many items the full ranking has (more than ``items`` when limited)."""


Reasons = dict[int, list[str]]
"""file index -> the request's reasons for it, in the order they were added."""


def rank(
    graph: RepoGraph,
    tags: Mapping[str, FileTags],
    *,
    chat_files: Sequence[str],
    mentioned_files: Sequence[str],
    mentioned_idents: Sequence[str],
    settings: Settings,
    named_files: Sequence[str] | None = None,
    limit: int | None = None,
    signals: Sequence[Signal] = DEFAULT_SIGNALS,
    session: SessionFiles | None = None,
    co_change: CoChange | None = None,
    visibility: Visibility | None = None,
    message_words: Sequence[str] = (),
    changed: Mapping[str, tuple[int, ...]] | None = None,
    neighbourhood: Neighbourhood | None = None,
    lexical: LexicalIndex | None = None,
) -> Ranking:
    """Rank every file and definition for one request; return the best ``limit`` items.
    ``named_files``: those of ``mentioned_files`` named by path or file name (None: all of them);
    ``message_words``: the words of the user's message (:func:`hybridmap.languages.lexical.words`);
    ``changed``: in a map of a change, each changed file -> its changed definitions (the files are
    the focus, like chat files, but shown: :class:`~.signals.changed_code.ChangedCode`);
    ``neighbourhood``: a symbol's (:class:`~.signals.symbol_neighbourhood.SymbolNeighbourhood`);
    ``lexical``: the repository's lexical index, kept by the caller between requests (None: a
    new one, read from the tags for this request alone)."""
    index = graph.index

    def ids(paths: Sequence[str]) -> tuple[int, ...]:
        return tuple(dict.fromkeys(index[f] for f in paths if f in index))

    changed_ids = {index[path]: local for path, local in (changed or {}).items() if path in index}

    session = session or SessionFiles()
    ctx = RankContext(
        graph=graph,
        tags=tags,
        settings=settings,
        chat=tuple(dict.fromkeys([*ids(chat_files), *changed_ids])),
        mentioned_files=ids(mentioned_files),
        named_files=ids(mentioned_files if named_files is None else named_files),
        idents=tuple(dict.fromkeys(mentioned_idents)),
        message_words=tuple(dict.fromkeys(message_words)),
        edited=ids(session.edited),
        read=ids(session.read),
        active=ids(session.active),
        co_change=co_change,
        visibility=visibility,
        changed=changed_ids,
        neighbourhood=neighbourhood,
        lexical=lexical if lexical is not None else LexicalIndex(),
    )
    reasons: Reasons = {}
    weights = graph.edge_weight.copy()
    for signal in signals:
        for factor in signal.edge_factors(ctx):
            weights[factor.rows] *= factor.factor
    personal = np.zeros(ctx.n)
    for signal in signals:
        for mass in signal.personalization(ctx):
            personal[mass.file] += mass.amount
            _because(reasons, mass.file, mass.why)
    prior = priors(ctx, signals)
    x = _pagerank(ctx, weights, personal, prior.multiplier)
    multipliers = _file_multipliers(ctx, signals, prior, reasons)
    file_score = x * multipliers
    scores = _definition_scores(ctx, x, weights, multipliers, file_score)
    for signal in signals:
        scores = signal.boost_definitions(ctx, scores)
    for fi, whys in ctx.late_reasons.items():
        for why in whys:
            _because(reasons, fi, why)
    return _ranking(ctx, scores, file_score, limit, reasons, prior.reasons)


def _file_multipliers(ctx: RankContext, signals: Sequence[Signal], prior: Prior, reasons: Reasons) -> np.ndarray:
    """Each file's multiplier after PageRank: its prior, then the signals' file factors in order
    (a ``times`` after a ``plus`` scales the sum)."""
    multipliers = prior.multiplier.copy()
    for signal in signals:
        for file_factor in signal.file_factors(ctx):
            fi = file_factor.file
            if file_factor.times != 1.0:
                multipliers[fi] *= file_factor.times
            if file_factor.plus:
                multipliers[fi] += file_factor.plus
            _because(reasons, fi, file_factor.why)
    return multipliers


def _because(reasons: Reasons, fi: int, why: str) -> None:
    if why:
        reasons.setdefault(fi, []).append(why)


#: The combined prior per graph (dropped with it), per (signals, settings): priors read nothing
#: else, and computing them per request would cost a warm re-rank of a large repository
#: milliseconds (a regular expression or two per path).
_PRIORS: weakref.WeakKeyDictionary[RepoGraph, dict[tuple[tuple[Signal, ...], Settings], Prior]] = (
    weakref.WeakKeyDictionary()
)


def priors(ctx: RankContext, signals: Sequence[Signal]) -> Prior:
    """The product of the signals' priors (all ones without any), their reasons joined in
    signal order; computed once per graph, signals and settings."""
    memo = _PRIORS.setdefault(ctx.graph, {})
    key = (tuple(signals), ctx.settings)
    combined = memo.get(key)
    if combined is None:
        combined = memo[key] = _combine(ctx, signals)
    return combined


#: Signals whose prior reads the file paths and the settings only (not the edges): their prior
#: is carried to the next graph when it has the same files, as after an edit (the path kinds'
#: regular expressions cost a map of the standard library ~20 ms per new graph). A signal class
#: can say the same of itself with a true ``prior_reads_paths_only`` attribute.
PATH_ONLY_PRIORS: tuple[type[Signal], ...] = (PathKinds,)
#: (signal, settings) -> (the files its prior was computed for, the prior); the last graph's only.
_PATH_PRIORS: dict[tuple[Signal, Settings], tuple[tuple[str, ...], Prior | None]] = {}


def _prior(ctx: RankContext, signal: Signal) -> Prior | None:
    if not (isinstance(signal, PATH_ONLY_PRIORS) or getattr(signal, "prior_reads_paths_only", False) is True):
        return signal.prior(ctx)
    key = (signal, ctx.settings)
    files = ctx.graph.files
    held = _PATH_PRIORS.get(key)
    if held is not None and (held[0] is files or held[0] == files):
        return held[1]
    prior = signal.prior(ctx)
    if len(_PATH_PRIORS) > 16:  # a few signal lists and settings at a time; never grows unbounded
        _PATH_PRIORS.clear()
    _PATH_PRIORS[key] = (files, prior)
    return prior


def _combine(ctx: RankContext, signals: Sequence[Signal]) -> Prior:
    multiplier: np.ndarray | None = None
    reasons: tuple[tuple[str, ...], ...] | None = None
    for signal in signals:
        prior = _prior(ctx, signal)
        if prior is None:
            continue
        multiplier = prior.multiplier.copy() if multiplier is None else multiplier * prior.multiplier
        if reasons is None:
            reasons = prior.reasons
        else:
            reasons = tuple((*old, *new) for old, new in zip(reasons, prior.reasons, strict=True))
    return Prior(np.ones(ctx.n) if multiplier is None else multiplier, ((),) * ctx.n if reasons is None else reasons)


def _pagerank(ctx: RankContext, weights: np.ndarray, personal: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Each file's PageRank over the file pairs, teleporting by the personalization."""
    settings, graph, n = ctx.settings, ctx.graph, ctx.n
    # The teleport that reaches every file goes to each in proportion to its prior: many small
    # test fixtures otherwise collect PageRank by their number alone (this repository's own
    # first map was mostly language fixtures).
    everyone = prior if settings.path_weighted_teleport and prior.sum() > 0 else np.ones(n)
    if personal.any() and settings.uniform_personalization_share > 0:
        # A little teleport to every file: files the request's files cannot reach still get
        # their structural rank, so a large budget spreads instead of digging into few files.
        share = settings.uniform_personalization_share
        personal = (1 - share) * personal / personal.sum() + share * everyone / everyone.sum()
    elif not personal.any() and settings.path_weighted_teleport:
        personal = everyone.copy()
    pair_of_edge, pair_src, pair_dst = graph.pairs
    pair_weight = np.bincount(pair_of_edge, weights=weights, minlength=len(pair_src)) if len(weights) else weights
    return pagerank(
        n,
        pair_src,
        pair_dst,
        pair_weight,
        personal if personal.any() else None,
        alpha=settings.pagerank_damping,
        max_iter=settings.pagerank_max_iterations,
        tol=settings.pagerank_tolerance,
    )


def _definition_scores(
    ctx: RankContext, x: np.ndarray, weights: np.ndarray, multipliers: np.ndarray, file_score: np.ndarray
) -> np.ndarray:
    """One score per symbol: the rank flowing into its definition plus a share of its file's."""
    graph, n = ctx.graph, ctx.n
    # Rank flows from each file along its out-edges to the definitions it uses.
    n_idents = max(1, len(graph.idents))
    definition_keys = np.zeros(0, dtype=np.int64)
    definition_rank: np.ndarray = np.zeros(0)
    if len(weights):
        out = np.bincount(graph.edge_src, weights=weights, minlength=n)
        src_out = out[graph.edge_src]
        flow = x[graph.edge_src] * weights / np.where(src_out > 0, src_out, 1.0)
        flow *= multipliers[graph.edge_dst]
        edge_def, definition_keys = graph.definition_keys
        definition_rank = np.bincount(edge_def, weights=flow, minlength=len(definition_keys))
    # Score every symbol: its definition's rank plus a share of its file's rank.
    counts = _symbol_counts(graph)
    base = ctx.settings.unreferenced_definition_share * file_score / np.where(counts > 0, counts, 1.0)
    scores = base[graph.symbol_file].copy() if len(graph.symbol_file) else np.zeros(0)
    has_ident = graph.symbol_ident >= 0
    if has_ident.any() and len(definition_keys):
        keys = graph.symbol_file[has_ident].astype(np.int64) * n_idents + graph.symbol_ident[has_ident]
        pos = np.searchsorted(definition_keys, keys)
        pos_clipped = np.minimum(pos, len(definition_keys) - 1)
        found = definition_keys[pos_clipped] == keys
        scores[np.flatnonzero(has_ident)[found]] += definition_rank[pos_clipped[found]]
    return scores


def _symbol_counts(graph: RepoGraph) -> np.ndarray:
    """How many symbols each file has."""
    return np.bincount(graph.symbol_file, minlength=len(graph.files)).astype(np.float64)


def _focus_words(ctx: RankContext) -> Callable[[list[str]], list[str]]:
    """How reasons name the request's focus: the chat signals say "chat file", which in a map of a
    change (its changed files are the focus) is "changed file", or "chat or changed file" when
    the request has chat files too. The one place the word is chosen."""
    if not ctx.changed:
        return lambda said: said
    word = "changed file" if set(ctx.chat) <= set(ctx.changed) else "chat or changed file"
    return lambda said: [why.replace("chat file", word) for why in said]


def _ranking(
    ctx: RankContext,
    scores: np.ndarray,
    file_score: np.ndarray,
    limit: int | None,
    reasons: Reasons,
    prior_reasons: tuple[tuple[str, ...], ...],
) -> Ranking:
    """The best ``limit`` items (chat files' left out; changed files are shown), and every file's
    score and reasons."""
    graph = ctx.graph
    in_chat = np.zeros(ctx.n, dtype=bool)
    in_chat[[fi for fi in ctx.chat if fi not in ctx.changed]] = True
    keep = ~in_chat[graph.symbol_file]
    # Files without definitions are shown by name, ranked by a share of their rank plus any lift.
    bare = np.flatnonzero((_symbol_counts(graph) == 0) & ~in_chat)
    bare_scores = ctx.settings.unreferenced_definition_share * file_score[bare]
    if ctx.bare_lifts:
        bare_scores += np.fromiter((ctx.bare_lifts.get(fi, 0.0) for fi in bare.tolist()), np.float64, len(bare))
    all_scores = np.concatenate([np.where(keep, scores, -np.inf), bare_scores])
    total = int(keep.sum()) + len(bare)
    take = total if limit is None else min(limit, total)
    order = best_first(all_scores, take)
    n_sym = len(scores)
    items = []
    for k in order.tolist():
        if k < n_sym:
            items.append(RankItem(float(all_scores[k]), graph.files[graph.symbol_file[k]], int(graph.symbol_local[k])))
        else:
            items.append(RankItem(float(all_scores[k]), graph.files[int(bare[k - n_sym])], -1))
    with_priors = [fi for fi, said in enumerate(prior_reasons) if said]
    said = _focus_words(ctx)
    why = {
        graph.files[fi]: tuple(dict.fromkeys(said([*reasons.get(fi, ()), *prior_reasons[fi]])))
        for fi in sorted({*reasons, *with_priors})
    }
    return Ranking(
        items=tuple(items),
        file_scores=dict(zip(graph.files, file_score.tolist(), strict=True)),
        reasons=why,
        total_items=total,
    )
