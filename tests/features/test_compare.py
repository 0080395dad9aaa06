"""`hybridmap compare`: the static and the hybrid map of one request, with real language servers."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from hybridmap import AsyncRepoMap, Comparison, MapRequest, RepoMap, ServerState
from hybridmap.features.compare import Edge, choose_layout, compare_maps, render_comparison

from ..conftest import git, run_on_pty
from ..helpers import CASES, require, run_cli
from ..helpers import LSP_FIXTURES as FIXTURES

# The python fixture: app.py uses `load` from store.disk and `Runner.run` from store.memory;
# each store module's Runner.run calls its *own* load. Name matching links every use of a
# name to every file defining it; ty resolves each use to one file. A module's call of its
# own load is a self-reference, which the graph has no edge for, so there the server only
# removes the guessed edge to the other module.
PY_RESOLVED = (
    Edge("app.py", "store/disk.py", "load"),
    Edge("app.py", "store/memory.py", "Runner"),
    Edge("app.py", "store/memory.py", "run"),
)
PY_REMOVED = (
    Edge("app.py", "store/disk.py", "Runner"),
    Edge("app.py", "store/disk.py", "run"),
    Edge("app.py", "store/memory.py", "load"),
    Edge("store/disk.py", "store/memory.py", "load"),
    Edge("store/memory.py", "store/disk.py", "load"),
)
# Small enough that rank decides what is shown.
PY_TOKENS = 60


def make_repo(root: Path, source: Path) -> Path:
    shutil.copytree(source, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")
    return root


@pytest.fixture(scope="module")
def python_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("cmp") / "python", FIXTURES / "python")


@pytest.fixture(scope="module")
def python_comparison(python_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Comparison:
    """One compare through the async API (closed before any test runs: no server outlives it)."""
    require("ty")
    cache = str(tmp_path_factory.mktemp("cmp_cache"))

    async def run() -> Comparison:
        # Without the + and [R:N] marks: the expected lines below were chosen at this budget
        # (tests/languages/test_visibility.py covers the marks).
        overrides = {"cache_dir": cache, "render_public_marks": False, "render_dependents_marks": False}
        async with AsyncRepoMap(python_repo, overrides=overrides) as repo:
            return await repo.compare(tokens=PY_TOKENS, server_wait=60)

    return asyncio.run(run())


def test_resolved_and_removed_edges_are_listed_exactly(python_comparison: Comparison) -> None:
    c = python_comparison
    assert c.servers["python"].state is ServerState.READY and c.servers["python"].server == "ty"
    assert c.servers_ready and c.notes == ()
    assert c.resolved == PY_RESOLVED
    assert c.removed == PY_REMOVED
    # Every resolved edge was one of the name-matched guesses; nothing else was name-matched.
    assert c.confirmed == frozenset(PY_RESOLVED) and c.kept == 0
    # The edge sets partition: static = kept + removed + confirmed, hybrid = kept + resolved.
    assert c.static.edges == {"name-match": c.kept + len(c.removed) + len(c.confirmed), "lsp": 0}
    assert c.hybrid.edges == {"name-match": c.kept, "lsp": len(c.resolved)}
    assert c.static.mode == "static" and c.static.servers == {} and c.hybrid.mode == "hybrid"


def test_rank_moves_follow_the_two_maps(python_comparison: Comparison) -> None:
    c = python_comparison
    static_order = [f.path for f in c.static.files]
    hybrid_order = [f.path for f in c.hybrid.files]
    assert static_order != hybrid_order, "the fixture's servers must change the map at this budget"
    assert {m.path for m in c.files} == set(static_order) | set(hybrid_order)
    for move in c.files:
        assert move.static == (static_order.index(move.path) + 1 if move.path in static_order else None)
        assert move.hybrid == (hybrid_order.index(move.path) + 1 if move.path in hybrid_order else None)
        expected = (
            "entered"
            if move.static is None
            else "left"
            if move.hybrid is None
            else "up"
            if move.hybrid < move.static
            else "down"
            if move.hybrid > move.static
            else "same"
        )
        assert move.change == expected
    assert [m.path for m in c.files if m.hybrid is not None] == hybrid_order

    for result, side in ((c.static, "static"), (c.hybrid, "hybrid")):
        shown = sorted(((s.rank, f.path, s.name, s.line) for f in result.files for s in f.symbols), key=lambda t: -t[0])
        positions = {(m.path, m.name, m.line): getattr(m, side) for m in c.symbols if getattr(m, side)}
        assert sorted(positions.values()) == list(range(1, len(shown) + 1))
        ranks_by_position = [
            rank
            for rank, *_ in sorted(
                (
                    (s.rank, pos)
                    for f in result.files
                    for s in f.symbols
                    for pos in [positions[(f.path, s.name, s.line)]]
                ),
                key=lambda t: t[1],
            )
        ]
        assert ranks_by_position == sorted(ranks_by_position, reverse=True)
    # Servers showed memory.py's Runner.run (what app.py really calls) instead of disk.py's Runner.
    by_key = {(m.path, m.name): m for m in c.symbols}
    assert by_key[("store/memory.py", "run")].change == "entered"
    assert by_key[("store/disk.py", "Runner")].change == "left"
    assert c.static_budget.tokens == c.static.tokens <= PY_TOKENS
    assert c.hybrid_budget.symbols == sum(len(f.symbols) for f in c.hybrid.files)


def test_columns_fit_the_width_and_keep_each_map_on_its_side(python_comparison: Comparison) -> None:
    for width in (60, 97, 140):
        text = render_comparison(python_comparison, "columns", width)
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width
        column = (width - 3) // 2
        maps = [line.ljust(column + 3) for line in lines[2 : lines.index("")]]  # rows are right-stripped
        assert all(line[column : column + 3] in (" │ ", " < ", " > ", " ≠ ") for line in maps)
        left = [line[:column].rstrip() for line in maps if line[column : column + 3] in (" │ ", " < ", " ≠ ")]
        right = [line[column + 3 :] for line in maps if line[column : column + 3] in (" │ ", " > ", " ≠ ")]
        cut = column - 1  # a cut line ends with "…"
        assert [x[:cut] for x in left] == [x[:cut] for x in python_comparison.static.text.splitlines()]
        assert [x[:cut] for x in right] == [x[:cut] for x in python_comparison.hybrid.text.splitlines()]


def test_unified_marks_each_map_and_fits_the_width(python_comparison: Comparison) -> None:
    text = render_comparison(python_comparison, "unified", None)
    lines = text.splitlines()
    maps = lines[2 : lines.index("")]
    static = [line[2:] for line in maps if line[:2] in ("  ", "- ")]
    hybrid = [line[2:] for line in maps if line[:2] in ("  ", "+ ")]
    assert static == python_comparison.static.text.splitlines()
    assert hybrid == python_comparison.hybrid.text.splitlines()
    assert "- class Runner:" in lines and "+     def run(self, key: str) -> int:" in lines
    below = "\n".join(lines[lines.index("") :])
    for edge in (*PY_RESOLVED, *PY_REMOVED):
        assert f"{edge.src} -> {edge.dst}  {edge.ident}" in below
    assert "Removed name-matched guesses: 5" in below and "Resolved by servers: 3 lsp edges" in below
    assert max(len(line) for line in render_comparison(python_comparison, "unified", 45).splitlines()) <= 45


def test_long_lists_are_capped_with_counts(python_comparison: Comparison) -> None:
    text = render_comparison(python_comparison, "unified", None, limit=2)
    assert "… and 1 more resolved edges" in text and "… and 3 more removed edges" in text
    assert "  store/disk.py -> store/memory.py  load" not in text


def test_auto_layout() -> None:
    assert choose_layout("auto", 200, is_terminal=True) == "columns"
    assert choose_layout("auto", 60, is_terminal=True) == "unified"
    assert choose_layout("auto", 200, is_terminal=False) == "unified"
    assert choose_layout("columns", None, is_terminal=False) == "columns"


def test_compare_rejects_maps_of_the_wrong_modes(python_comparison: Comparison) -> None:
    with pytest.raises(ValueError, match="static and a hybrid"):
        compare_maps(
            python_comparison.request,
            python_comparison.hybrid,
            None,  # type: ignore[arg-type]
            python_comparison.static,
            None,
        )  # type: ignore[arg-type]


def test_later_compare_without_wait_uses_earlier_server_answers(python_repo: Path, tmp_path: Path) -> None:
    require("ty")
    with RepoMap(python_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        repo.map(tokens=PY_TOKENS, server_wait=60)
        c = repo.compare(MapRequest(tokens=PY_TOKENS, server_wait=0))
    assert c.resolved == PY_RESOLVED and c.removed == PY_REMOVED
    assert c.request.server_wait == 0


def test_cli_json_shape(python_repo: Path, tmp_path: Path) -> None:
    require("ty")
    proc = run_cli(
        "compare", str(python_repo), "--tokens", str(PY_TOKENS), "--format", "json", "--cache-dir", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {
        "schema_version",
        "request",
        "static",
        "hybrid",
        "edges",
        "rank",
        "budget",
        "servers",
        "servers_ready",
        "diagnostics",
        "notes",
    } == set(data)
    for side in ("static", "hybrid"):
        assert {"text", "tokens", "budget", "mode", "files", "servers", "edges", "diagnostics", "timings"} <= set(
            data[side]
        )
        assert data[side]["mode"] == side and data[side]["tokens"] <= PY_TOKENS
        assert data["budget"][side] == {
            "budget": PY_TOKENS,
            "tokens": data[side]["tokens"],
            "files": len(data[side]["files"]),
            "symbols": sum(len(f["symbols"]) for f in data[side]["files"]),
        }
    assert data["request"]["server_wait"] == 60 and data["request"]["tokens"] == PY_TOKENS
    assert data["servers"]["python"]["state"] == "ready" and data["servers_ready"] is True
    assert data["edges"]["resolved"] == [
        {**e.to_json(), "name_matched": True, "provenance": "lsp"} for e in PY_RESOLVED
    ]
    assert data["edges"]["removed"] == [e.to_json() for e in PY_REMOVED]
    assert data["edges"]["kept"] == 0
    assert data["edges"]["static"] == data["static"]["edges"]
    static_paths = [f["path"] for f in data["static"]["files"]]
    for move in data["rank"]["files"]:
        assert move["static"] == (static_paths.index(move["path"]) + 1 if move["path"] in static_paths else None)
    assert {"path", "name", "kind", "line", "static", "hybrid", "change"} <= set(data["rank"]["symbols"][0])
    assert proc.stderr == ""


def test_cli_columns_respect_columns(python_repo: Path, tmp_path: Path) -> None:
    require("ty")
    proc = run_cli(
        "compare",
        str(python_repo),
        "--tokens",
        str(PY_TOKENS),
        "--layout",
        "columns",
        "--cache-dir",
        str(tmp_path),
        env={"COLUMNS": "72"},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 72
    assert lines[0].startswith("static: ") and " │ hybrid, 3 lsp edges: " in lines[0]
    assert lines[1] == "─" * 34 + "─┼─" + "─" * 34
    assert "Resolved by servers: 3 lsp edges" in proc.stdout


def run_on_terminal(args: list[str], columns: int) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    code, text, _ = run_on_pty(["compare", *args], stream="stdout", columns=columns, env=env, timeout=120)
    assert code == 0
    return text


def test_terminal_width_picks_the_layout(python_repo: Path, tmp_path: Path) -> None:
    require("ty")
    args = [str(python_repo), "--tokens", str(PY_TOKENS), "--cache-dir", str(tmp_path)]
    wide = run_on_terminal(args, 110).splitlines()
    assert " │ hybrid, 3 lsp edges: " in wide[0] and max(map(len, wide)) <= 110
    assert wide[1] == "─" * 53 + "─┼─" + "─" * 53
    narrow = run_on_terminal(args, 64).splitlines()
    assert narrow[0].startswith("--- static: ") and max(map(len, narrow)) <= 64


def test_go_server_resolves_its_collisions(tmp_path: Path) -> None:
    # (TypeScript behaves alike but its server takes ~8 s to start; test_lsp covers it.)
    language = "go"
    fixture, command, right, wrong = CASES[language]
    require(command)
    root = make_repo(tmp_path / fixture, FIXTURES / fixture)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        c = repo.compare(tokens=256, server_wait=60)
    assert c.servers[language].state is ServerState.READY
    assert set(map(Edge._make, right)) <= set(c.resolved)
    assert set(map(Edge._make, wrong)) <= set(c.removed)
    assert not set(c.resolved) & set(c.removed)


def test_repository_with_a_missing_server(tmp_path: Path) -> None:
    """rust-analyzer is configured but not installed here (only a rustup proxy): nothing resolves."""
    root = make_repo(tmp_path / "rust", FIXTURES.parent / "languages" / "rust")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        c = repo.compare(tokens=512, server_wait=60)
    if c.servers["rust"].state is not ServerState.MISSING:
        pytest.skip("a working rust-analyzer is installed on this machine")
    assert not c.servers_ready
    assert c.resolved == () and c.removed == () and c.kept == c.static.edges["name-match"] > 0
    assert c.static.text == c.hybrid.text and not c.moved_files and not c.moved_symbols
    assert any(d.kind == "server_missing" for d in c.diagnostics)
    assert any(n.startswith("rust (rust-analyzer): server missing") for n in c.notes)
    data = json.loads(json.dumps(c.to_json()))
    assert data["servers"]["rust"]["state"] == "missing" and data["servers_ready"] is False
    assert data["edges"]["resolved"] == [] and data["edges"]["removed"] == []
    text = render_comparison(c, "unified", 100)
    assert "  rust: missing (rust-analyzer" in text and "Resolved by servers: 0 lsp edges" in text
    assert "Note: rust (rust-analyzer): server missing" in text


def test_repository_without_any_server(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "lua", FIXTURES.parent / "languages" / "lua")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        c = repo.compare(MapRequest(tokens=200, server_wait=60))
    assert c.servers == {} and not c.servers_ready
    assert c.resolved == () and c.removed == () and c.kept > 0
    assert c.static.text == c.hybrid.text and not c.moved_files and not c.moved_symbols
    assert any("no language server is configured" in n for n in c.notes)
    assert "none configured" in render_comparison(c, "unified", 80)


def test_server_wait_zero_says_servers_were_not_used(python_repo: Path, tmp_path: Path) -> None:
    proc = run_cli(
        "compare", str(python_repo), "--server-wait", "0", "--tokens", str(PY_TOKENS), "--cache-dir", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("--- static: ") and "\n+++ hybrid, 0 lsp edges: " in proc.stdout
    assert "  python: disabled (" in proc.stdout
    assert "Resolved by servers: 0 lsp edges" in proc.stdout
    assert "Note: python: server disabled: server wait is 0" in proc.stdout


def test_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    proc = run_cli("compare", str(tmp_path / "missing"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("hybridmap: error: ")
    assert "does not exist" in proc.stderr
    proc = run_cli("compare", str(tmp_path), "--chat", "/etc/passwd")
    assert proc.returncode == 2 and "outside the root" in proc.stderr and proc.stderr.count("\n") == 1
