"""Symbol search: hybridmap's FTS5 index (``hybridmap/features/search.py``) against rapidfuzz.

    python benchmarks/bench_search.py [--corpus DIR] [--repeats 5]

Both answer the same 32 queries with known answers (exact names, style variants, case, word
parts, abbreviations, typos) over the definitions of ``--corpus`` (default: the CPython 3.11
standard library of ``benchmarks/.work/corpora/stdlib``), tagged once by hybridmap. A query
scores when the expected (name, path) is the first answer (hit@1) or among the first five
(hit@5). rapidfuzz (``pip install rapidfuzz``; not a dependency) runs ``process.extract`` over
the distinct normalized names (case and separators removed, as the index does), each scorer
tried, with the same tie-break among definitions of one name (non-test paths first, then
path). Times are per query (median and maximum over ``--repeats`` runs of every query), after
the index is built; the index build and the rapidfuzz name list are timed apart.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from hybridmap import RepoMap  # noqa: E402
from hybridmap.features.search import SymbolIndex, normalized  # noqa: E402

#: (query, expected name, expected path, kind of query)
QUERIES = [
    ("JSONDecoder", "JSONDecoder", "json/decoder.py", "exact"),
    ("urlopen", "urlopen", "urllib/request.py", "exact"),
    ("ArgumentParser", "ArgumentParser", "argparse.py", "exact"),
    ("SequenceMatcher", "SequenceMatcher", "difflib.py", "exact"),
    ("ThreadPoolExecutor", "ThreadPoolExecutor", "concurrent/futures/thread.py", "exact"),
    ("json_decoder", "JSONDecoder", "json/decoder.py", "style"),
    ("ARGUMENT_PARSER", "ArgumentParser", "argparse.py", "style"),
    ("http-server", "HTTPServer", "http/server.py", "style"),
    ("sequence_matcher", "SequenceMatcher", "difflib.py", "style"),
    ("thread_pool_executor", "ThreadPoolExecutor", "concurrent/futures/thread.py", "style"),
    ("namedTuple", "namedtuple", "collections/__init__.py", "style"),
    ("temporary-directory", "TemporaryDirectory", "tempfile.py", "style"),
    ("argumentparser", "ArgumentParser", "argparse.py", "case"),
    ("HTTPSERVER", "HTTPServer", "http/server.py", "case"),
    ("SequenceMatch", "SequenceMatcher", "difflib.py", "prefix"),
    ("ThreadPoolExec", "ThreadPoolExecutor", "concurrent/futures/thread.py", "prefix"),
    ("get_close", "get_close_matches", "difflib.py", "prefix"),
    ("close matches", "get_close_matches", "difflib.py", "words"),
    ("seqmatch", "SequenceMatcher", "difflib.py", "abbreviation"),
    ("tmpdirectory", "TemporaryDirectory", "tempfile.py", "abbreviation"),
    ("tpexecutor", "ThreadPoolExecutor", "concurrent/futures/thread.py", "abbreviation"),
    ("arguemntparser", "ArgumentParser", "argparse.py", "typo"),
    ("urlopne", "urlopen", "urllib/request.py", "typo"),
    ("SequenceMatchr", "SequenceMatcher", "difflib.py", "typo"),
    ("namedtupel", "namedtuple", "collections/__init__.py", "typo"),
    ("TemporaryDirecotry", "TemporaryDirectory", "tempfile.py", "typo"),
    ("ThreadPoolExecuter", "ThreadPoolExecutor", "concurrent/futures/thread.py", "typo"),
    ("jsondecodr", "JSONDecoder", "json/decoder.py", "typo"),
    ("get_clsoe_matches", "get_close_matches", "difflib.py", "typo"),
    ("HTTPSevrer", "HTTPServer", "http/server.py", "typo"),
    ("getusr", "getuser", "getpass.py", "typo"),
    ("dedent_text", "dedent", "textwrap.py", "typo"),
]

_TEST = re.compile(r"(^|/)(tests?|testing)(/|$)|(^|/)test_[^/]*$")


def tags_of(corpus: Path, cache: Path) -> tuple[dict, dict]:
    with RepoMap(corpus, start_servers=False, overrides={"cache_dir": str(cache)}) as repo:
        repo.map(tokens=64, mode="static")
        return dict(repo.tags()), dict(repo._async._engine.snapshot.shas)


def timed(function, repeats: int) -> tuple[list[float], object]:
    times, answer = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        answer = function()
        times.append(time.perf_counter() - started)
    return times, answer


def by_kind(times: dict[str, list[float]]) -> dict[str, float]:
    """Median milliseconds per kind of query."""
    grouped: dict[str, list[float]] = defaultdict(list)
    for q, _, _, kind in QUERIES:
        grouped[kind].extend(times[q])
    return {kind: round(statistics.median(values) * 1000, 2) for kind, values in grouped.items()}


def score(answers: dict[str, list[tuple[str, str]]]) -> dict[str, object]:
    hit1 = [q for q, name, path, _ in QUERIES if answers[q][:1] == [(name, path)]]
    hit5 = [q for q, name, path, _ in QUERIES if (name, path) in answers[q][:5]]
    return {"hit@1": len(hit1), "hit@5": len(hit5), "missed@5": [q for q, *_ in QUERIES if q not in hit5]}


def bench_index(tags: dict, shas: dict, repeats: int) -> dict[str, object]:
    index = SymbolIndex()
    started = time.perf_counter()
    index.update(tags, shas)
    build = time.perf_counter() - started
    started = time.perf_counter()
    index.update(dict(tags), shas)  # a new mapping, same shas: nothing re-indexed
    unchanged = time.perf_counter() - started
    per_query, answers, each = [], {}, {}
    for q, *_ in QUERIES:
        times, found = timed(lambda q=q: index.search(q, limit=5), repeats)
        per_query.extend(times)
        each[q] = times
        answers[q] = [(m.name, m.path) for m in found.matches]  # type: ignore[attr-defined]
    return {
        "symbols": len(index),
        "build_s": round(build, 3),
        "update_unchanged_s": round(unchanged, 4),
        "median_ms": round(statistics.median(per_query) * 1000, 2),
        "max_ms": round(max(per_query) * 1000, 2),
        "median_ms_by_kind": by_kind(each),
        **score(answers),
    }


def bench_rapidfuzz(tags: dict, repeats: int) -> dict[str, object]:
    from rapidfuzz import fuzz, process

    started = time.perf_counter()
    by_norm: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for path, file_tags in tags.items():
        for sym in file_tags.symbols:
            by_norm[normalized(sym.name) or sym.name.lower()].append((sym.name, path))
    for hits in by_norm.values():
        hits.sort(key=lambda h: (bool(_TEST.search(h[1])), h[1]))
    choices = list(by_norm)
    prepared = time.perf_counter() - started
    out: dict[str, object] = {"names": len(choices), "prepare_s": round(prepared, 3)}
    for scorer_name in ("WRatio", "QRatio", "ratio", "partial_ratio", "token_set_ratio"):
        scorer = getattr(fuzz, scorer_name)
        per_query, answers, each = [], {}, {}
        for q, *_ in QUERIES:
            nq = normalized(q)

            def run(nq: str = nq, scorer: object = scorer) -> list[tuple[str, str]]:
                best = process.extract(nq, choices, scorer=scorer, limit=5)
                return [hit for norm, _, _ in best for hit in by_norm[norm]][:5]

            times, found = timed(run, repeats)
            per_query.extend(times)
            each[q] = times
            answers[q] = found  # type: ignore[assignment]
        out[scorer_name] = {
            "median_ms": round(statistics.median(per_query) * 1000, 2),
            "max_ms": round(max(per_query) * 1000, 2),
            "median_ms_by_kind": by_kind(each),
            **score(answers),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE / ".work/corpora/stdlib")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tags, shas = tags_of(args.corpus, HERE / ".work/search-cache")
    result = {
        "corpus": str(args.corpus),
        "files": len(tags),
        "queries": len(QUERIES),
        "fts5": bench_index(tags, shas, args.repeats),
        "rapidfuzz": bench_rapidfuzz(tags, args.repeats),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
