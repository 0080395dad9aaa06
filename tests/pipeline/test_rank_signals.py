"""Golden test: the ranker composed of signals ranks exactly as the monolithic ``rank()`` did.

A *case* is a repository reduced to what ranking reads (each file's definition names and
reference names) plus requests chosen from it (chat files, mentioned files and identifiers, a
word matching a path) under two settings (the defaults, and one that turns every optional
branch the other way). A *ranking* is the whole answer: every item with its score, every
file's score, every reason, the item count.

Two sources of "before", both computed by the code before the refactor, never hard-coded:

* a checkout of it (``git worktree add /tmp/rank-before <commit>``, or
  ``HYBRIDMAP_RANK_BEFORE``): real repositories (this one, the benchmark corpora when present,
  the standard library's ``json`` and ``email`` copied into git repositories) are mapped in
  static mode by the current code, and each case is ranked by the checkout in a subprocess
  (``PYTHONPATH``) and by the current code in-process. Skipped without the checkout.
* ``tests/fixtures/rank_golden/*.json.gz``: cases with the rankings that checkout computed,
  written by ``python -m tests.test_rank_signals --write`` (with the checkout present). Always run.

Ids must be equal in order, scores equal within :data:`REL_TOL` relative. Last, the signal API
itself: ``docs/ranking.md``'s worked example, run as written, adds a signal without touching
the ranker.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import types
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BEFORE = Path(
    os.environ.get("HYBRIDMAP_RANK_BEFORE", "/tmp/rank-before")
)  # where the README of this test says to make it
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "rank_golden"
CORPORA = REPO / "benchmarks" / ".work" / "corpora"
REL_TOL = 1e-9

#: Settings that flip every optional branch of the ranker (with the defaults, both are run).
ALTERNATE = {
    "chat_dependent_personalization": 2.0,
    "path_weighted_teleport": True,
    "pin_mentioned_definitions": False,
    "file_symbol_decay": 1.0,
    "uniform_personalization_share": 0.0,
    "chat_neighbor_boost": 0.5,
    "mentioned_file_boost": 2.0,
    "chat_dependent_boost": 0.0,
}

#: Signals added after the golden rankings were stored, off (their defaults may be on): the
#: golden test checks the composed ranker against the monolithic one; tests/pipeline/test_rank_boosts.py
#: checks these.
AFTER_GOLDEN = {
    "chat_neighbor_boost": 1.0,  # its default when the goldens were stored (0 since issue 17)
    "directory_proximity_personalization": 0.0,
    "directory_proximity_boost": 0.0,
    "reference_name_personalization": 0.0,
    "reference_name_boost": 0.0,
    "definition_token_personalization": 0.0,
    "definition_token_boost": 1.0,
    "text_similarity_boost": 0.0,
    "text_similarity_message_boost": 0.0,
    "text_similarity_personalization": 0.0,
    "test_pair_boost": 0.0,
    "paired_follow_files": 0,
    "pin_mentioned_files": False,
    "path_stem_mention_boost": 0.0,
}

Case = dict[str, Any]
RankingJson = dict[str, Any]


# --- cases ------------------------------------------------------------------------------------


def make_case(name: str, tags: Mapping[str, Any]) -> Case:
    """``tags`` (path -> FileTags) reduced to names, with requests chosen from it deterministically."""
    files = {path: [[s.name for s in t.symbols], list(t.ref_names)] for path, t in sorted(tags.items())}
    paths = sorted(files)
    defining = [p for p in paths if files[p][0]] or paths
    busiest = min(defining, key=lambda p: (-len(files[p][1]), p))
    middle = defining[len(defining) // 2]
    quarter = paths[len(paths) // 4]
    used = Counter(ref for _, refs in files.values() for ref in refs)
    names = sorted({s for syms, _ in files.values() for s in syms if len(s) >= 4})
    by_use = sorted(names, key=lambda s: (-used[s], s))
    popular = by_use[0] if by_use else "main"
    rare = next((s for s in reversed(by_use) if used[s] > 0), popular)
    parts = [part for part in PurePosixPath(middle).parts[:-1] if part.isidentifier()]
    word = parts[-1] if parts else PurePosixPath(middle).stem
    requests = [
        {"chat": [], "files": [], "idents": []},
        {"chat": [busiest], "files": [], "idents": []},
        {"chat": [busiest, middle], "files": [], "idents": [popular]},
        {"chat": [], "files": [quarter], "idents": [rare, word]},
        {"chat": [middle], "files": [quarter], "idents": [popular, word], "limit": 40},
    ]
    return {"name": name, "files": files, "requests": requests, "settings": [{}, ALTERNATE]}


def compute(case: Case) -> list[RankingJson]:
    """Every ranking of ``case`` by whichever ``hybridmap`` is importable (imported here, so the
    subprocess gets the checkout's)."""
    from hybridmap.model import FileTags, Span, Symbol
    from hybridmap.pipeline.graph.repo_graph import build_graph
    from hybridmap.pipeline.rank import rank
    from hybridmap.settings import Settings

    tags = {
        path: FileTags(
            tuple(Symbol(n, "function", Span(i, 0, i + 1, 0), i, 0, "") for i, n in enumerate(syms)), tuple(refs)
        )
        for path, (syms, refs) in case["files"].items()
    }
    out: list[RankingJson] = []
    for overrides in case["settings"]:
        later = {k: v for k, v in AFTER_GOLDEN.items() if hasattr(Settings, k)}  # a before-checkout has none
        settings = dataclasses.replace(Settings(), **{**later, **overrides})
        graph = build_graph(tags, settings)
        index = {path: i for i, path in enumerate(graph.files)}
        for request in case["requests"]:
            ranking = rank(
                graph,
                tags,
                chat_files=request["chat"],
                mentioned_files=request["files"],
                mentioned_idents=request["idents"],
                settings=settings,
                limit=request.get("limit"),
            )
            out.append(
                {
                    "items": [[index[item.path], item.symbol, item.score] for item in ranking.items],
                    "files": list(graph.files),
                    "file_scores": [ranking.file_scores[path] for path in graph.files],
                    "reasons": {path: list(why) for path, why in sorted(ranking.reasons.items())},
                    "total": ranking.total_items,
                }
            )
    return out


def compute_before(cases: list[Case]) -> list[list[RankingJson]]:
    """:func:`compute` run by the before-checkout in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(BEFORE)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--compute"],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),  # not REPO: its hybridmap must not shadow the checkout's
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result: list[list[RankingJson]] = json.loads(proc.stdout)
    return result


def differences(expected: list[RankingJson], actual: list[RankingJson]) -> tuple[list[str], float]:
    """What differs between two lists of rankings (empty when equal), and the largest relative
    score difference seen."""
    problems: list[str] = []
    worst = 0.0

    def close(a: float, b: float, where: str) -> None:
        nonlocal worst
        if a == b:
            return
        rel = abs(a - b) / max(abs(a), abs(b))
        worst = max(worst, rel)
        if rel > REL_TOL:
            problems.append(f"{where}: {a!r} != {b!r} (relative {rel:.3g})")

    if len(expected) != len(actual):
        return [f"{len(expected)} rankings expected, {len(actual)} computed"], worst
    for k, (want, got) in enumerate(zip(expected, actual, strict=True)):
        for key in ("files", "total", "reasons"):
            if want[key] != got[key]:
                problems.append(f"ranking {k}: {key} differ")
        ids_want = [(p, s) for p, s, _ in want["items"]]
        ids_got = [(p, s) for p, s, _ in got["items"]]
        if ids_want != ids_got:
            first = next((i for i, (a, b) in enumerate(zip(ids_want, ids_got, strict=False)) if a != b), None)
            problems.append(f"ranking {k}: items differ (first at {first}; {len(ids_want)} vs {len(ids_got)})")
            continue
        for i, (w, g) in enumerate(zip(want["items"], got["items"], strict=True)):
            close(w[2], g[2], f"ranking {k} item {i}")
        for i, (w, g) in enumerate(zip(want["file_scores"], got["file_scores"], strict=True)):
            close(w, g, f"ranking {k} file {i}")
    return problems, worst


# --- repositories -----------------------------------------------------------------------------


def stdlib_repository(package: str, parent: Path) -> Path:
    """The standard library's ``package`` copied into a fresh git repository."""
    from tests.conftest import git

    root = parent / f"stdlib-{package}"
    shutil.copytree(
        Path(sysconfig.get_paths()["stdlib"]) / package, root / package, ignore=shutil.ignore_patterns("__pycache__")
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "stdlib")
    return root


def static_tags(root: Path) -> Mapping[str, Any]:
    """The tags of ``root`` after one static map by the current code."""
    from hybridmap import RepoMap

    with RepoMap(root, overrides={"use_cache": False}, start_servers=False) as repo:
        repo.map(mode="static", tokens=256)
        return repo.tags()


def repositories(scratch: Path) -> Iterator[tuple[str, Path]]:
    """(case name, root) of every real repository available here."""
    yield "hybridmap", REPO
    for name in ("pflag", "chi", "rich", "jq", "hono"):
        if (CORPORA / name / ".git").exists():
            yield name, CORPORA / name
    for package in ("json", "email"):
        yield f"stdlib-{package}", stdlib_repository(package, scratch)


#: The cases kept as fixtures: small enough to commit, large enough to exercise every signal.
STORED = ("stdlib-json", "stdlib-email", "pflag", "chi")


# --- tests ------------------------------------------------------------------------------------


def golden_files() -> list[Path]:
    return sorted(GOLDEN.glob("*.json.gz"))


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.name.removesuffix(".json.gz"))
def test_ranking_equals_the_stored_golden(path: Path) -> None:
    stored = json.loads(gzip.decompress(path.read_bytes()))
    problems, _ = differences(stored["rankings"], compute(stored["case"]))
    assert not problems, problems[:10]


def test_golden_fixtures_exist() -> None:
    assert {p.name.removesuffix(".json.gz") for p in golden_files()} >= {"stdlib-json", "stdlib-email"}


def test_a_changed_score_is_caught() -> None:
    """The comparison can fail: one score moved by 1e-6 relative, or two items swapped."""
    stored = json.loads(gzip.decompress((GOLDEN / "stdlib-json.json.gz").read_bytes()))
    rankings = compute(stored["case"])
    moved = json.loads(json.dumps(rankings))
    moved[1]["items"][0][2] *= 1 + 1e-6
    assert differences(rankings, moved)[0]
    swapped = json.loads(json.dumps(rankings))
    swapped[0]["items"][0], swapped[0]["items"][1] = swapped[0]["items"][1], swapped[0]["items"][0]
    assert differences(rankings, swapped)[0]


@pytest.mark.skipif(not (BEFORE / "hybridmap" / "rank.py").exists(), reason="no before-checkout of hybridmap")
def test_ranking_equals_the_before_checkout_on_real_repositories(tmp_path: Path) -> None:
    cases = [make_case(name, static_tags(root)) for name, root in repositories(tmp_path)]
    before = compute_before(cases)
    for case, want in zip(cases, before, strict=True):
        problems, worst = differences(want, compute(case))
        assert not problems, (case["name"], problems[:10])
        print(f"{case['name']}: {len(want)} rankings, max relative difference {worst:.3g}")


def doc_example() -> Any:
    """The signal class of ``docs/ranking.md``'s worked example, as written there."""
    text = (REPO / "docs" / "ranking.md").read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace("from ..context import", "from hybridmap.pipeline.rank.context import")
    module = types.ModuleType("ranking_md_example")
    sys.modules[module.__name__] = module  # dataclasses resolve the ClassVar annotation there
    exec(compile(code, "docs/ranking.md", "exec"), module.__dict__)  # noqa: S102  # our own documentation
    return module.FocusDir


def test_a_signal_is_one_class_in_the_list() -> None:
    from hybridmap.pipeline.graph.repo_graph import build_graph
    from hybridmap.pipeline.rank import DEFAULT_SIGNALS, rank
    from hybridmap.settings import Settings
    from tests.helpers import rank_corpus as _corpus

    names = [signal.name for signal in DEFAULT_SIGNALS]
    assert all(names) and len(set(names)) == len(names)
    # Without the built-in directory proximity, whose reasons would join the example's.
    tags, settings = _corpus(), Settings(directory_proximity_boost=0.0, text_similarity_boost=0.0)
    graph = build_graph(tags, settings)
    ask: dict[str, Any] = {
        "chat_files": ["cli.py"],
        "mentioned_files": [],
        "mentioned_idents": [],
        "settings": settings,
    }
    plain = rank(graph, tags, **ask)
    focus_dir = doc_example()
    focused = rank(graph, tags, **ask, signals=(*DEFAULT_SIGNALS, focus_dir()))
    assert focused.file_scores["store/memory.py"] > 2 * plain.file_scores["store/memory.py"]
    assert focused.reasons["store/memory.py"] == ("under store/",)
    assert "under store/" not in focused.reasons["app.py"]
    # Leaving a signal out leaves its contribution out, and nothing else.
    no_kinds = rank(graph, tags, **ask, signals=tuple(s for s in DEFAULT_SIGNALS if s.name != "path_kinds"))
    assert plain.reasons["tests/test_disk.py"][-1] == "test path x0.4"
    assert "tests/test_disk.py" not in no_kinds.reasons
    test_score = plain.file_scores["tests/test_disk.py"]
    assert no_kinds.file_scores["tests/test_disk.py"] == pytest.approx(test_score / settings.test_path_weight)
    assert no_kinds.file_scores["lonely.py"] == plain.file_scores["lonely.py"]
    assert [s.name for s in DEFAULT_SIGNALS] == names  # nothing was registered globally


def write_golden() -> None:
    """Rank the stored cases with the before-checkout and write them as fixtures."""
    with tempfile.TemporaryDirectory() as scratch:
        cases = [make_case(name, static_tags(root)) for name, root in repositories(Path(scratch)) if name in STORED]
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for case, rankings in zip(cases, compute_before(cases), strict=True):
        data = json.dumps({"case": case, "rankings": rankings}, separators=(",", ":"), sort_keys=True)
        (GOLDEN / f"{case['name']}.json.gz").write_bytes(gzip.compress(data.encode(), mtime=0))


if __name__ == "__main__":
    if sys.argv[1:] == ["--compute"]:
        json.dump([compute(case) for case in json.load(sys.stdin)], sys.stdout)
    elif sys.argv[1:] == ["--write"]:
        write_golden()
    else:
        raise SystemExit("usage: python -m tests.test_rank_signals --write | --compute < cases.json")
