"""A symbol's neighbourhood (``map --symbol``): its definitions, callers and callees, through the
pure walk, the API, a real server, the CLI and a real MCP client."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.errors import RequestError
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.graph.neighbourhood import SymbolQuery, neighbourhood
from hybridmap.pipeline.graph.repo_graph import build_graph
from hybridmap.settings import Settings

from ..conftest import GitRepoFactory
from ..helpers import connect, fixture_repo, ok, require, run_cli, tags_of

FILES = {
    "pricing.py": (
        "from tax import rate\n\n\n"
        "def net(amount):\n    return amount - discount(amount)\n\n\n"
        "def discount(amount):\n    return amount * 0.1\n\n\n"
        "def gross(amount):\n    return net(amount) * (1 + rate())\n"
    ),
    "tax.py": "def rate():\n    return 0.2\n",
    "checkout.py": (
        "from pricing import gross, net\n\n\n"
        "def total(items):\n    return sum(gross(i) for i in items)\n\n\n"
        "def preview(items):\n    return [net(i) for i in items]\n\n\n"
        "print(total([1]))\n"
    ),
    "report.py": "from checkout import total\n\n\ndef monthly(items):\n    return total(items)\n",
    "other.py": "def net(x):\n    return x\n",
}


def _walk(name: str, depth: int = 1, limit: int = 200) -> dict[tuple[str, str], tuple[str, int]]:
    tags = tags_of(LanguageRegistry.load(), FILES)
    graph = build_graph(tags, Settings())
    hood = neighbourhood(graph, tags, SymbolQuery.parse(name, depth), limit)

    def named(key: tuple[str, int]) -> tuple[str, str]:
        return key[0], tags[key[0]].symbols[key[1]].name if key[1] >= 0 else "<top>"

    return {named(key): related for key, related in hood.related.items()}


def test_callers_and_callees_one_call_away() -> None:
    assert _walk("pricing.py:net") == {
        ("pricing.py", "net"): ("definition", 0),
        ("pricing.py", "gross"): ("caller", 1),
        ("checkout.py", "preview"): ("caller", 1),
        ("pricing.py", "discount"): ("callee", 1),
    }


def test_depth_follows_calls_further_and_a_top_level_use_is_a_caller() -> None:
    found = _walk("pricing.py:gross", depth=2)
    assert found[("checkout.py", "total")] == ("caller", 1)
    assert found[("checkout.py", "<top>")] == ("caller", 2)  # print(total(...)) at module level
    assert found[("report.py", "monthly")] == ("caller", 2)
    assert found[("pricing.py", "net")] == ("callee", 1)
    assert found[("tax.py", "rate")] == ("callee", 1)
    assert found[("pricing.py", "discount")] == ("callee", 2)


def test_an_ambiguous_name_has_every_definition_and_a_limit_says_it_stopped() -> None:
    both = _walk("net")
    assert {key for key, (relation, _) in both.items() if relation == "definition"} == {
        ("pricing.py", "net"),
        ("other.py", "net"),
    }
    tags = tags_of(LanguageRegistry.load(), FILES)
    hood = neighbourhood(build_graph(tags, Settings()), tags, SymbolQuery("gross", "", 3), limit=2)
    assert not hood.complete and len(hood.related) == 3  # the definition and two neighbours


def test_the_map_shows_the_neighbourhood_first(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(symbol="pricing.py:net", mode="static", tokens=300)
        missing = repo.map(symbol="nowhere_defined", mode="static", tokens=300)
        with pytest.raises(RequestError):
            repo.map(symbol="../outside.py:net", mode="static")
    lines = result.text.splitlines()
    assert lines[0].startswith("Symbol 'net' (pricing.py:4): * defines it, < calls it, > is called by it")
    assert "*def net(amount):" in result.text
    assert "<def gross(amount):" in result.text and "<def preview(items):" in result.text
    assert ">def discount(amount):" in result.text
    assert "def net(x):" not in result.text.split("other.py")[0]  # other.py's net is not the one asked
    related = {(f.path, s.name): (s.relation, s.distance) for f in result.files for s in f.symbols if s.relation}
    assert related[("pricing.py", "net")] == ("definition", 0)
    assert related[("checkout.py", "preview")] == ("caller", 1)
    assert result.symbol is not None and result.symbol.definitions == (("pricing.py", 4),)
    assert missing.text.startswith("No definition named 'nowhere_defined'")
    assert any(d.kind == "symbol_not_found" for d in missing.diagnostics)


def test_a_server_decides_who_calls_a_name_two_files_define(tmp_path: Path) -> None:
    """Both stores define ``load``; app.py calls disk's. By name, app.py calls memory's too; with
    the server, it does not."""
    require("ty")
    root = fixture_repo(tmp_path, "python")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        static = repo.map(mode="static", symbol="store/memory.py:load", tokens=1024)
        hybrid = repo.map(mode="hybrid", symbol="store/memory.py:load", server_wait=60, tokens=1024)
    assert hybrid.servers["python"].state is ServerState.READY

    def callers(result: Any) -> set[tuple[str, str]]:
        return {(f.path, s.name) for f in result.files for s in f.symbols if s.relation == "caller"}

    assert ("app.py", "main") in callers(static)
    assert ("app.py", "main") not in callers(hybrid)
    assert ("store/memory.py", "run") in callers(hybrid)


def test_cli_and_mcp(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    cache = str(tmp_path / "cache")
    proc = run_cli("map", str(root), "--symbol", "gross", "--depth", "2", "--mode", "static", "--format", "json",
                   "--cache-dir", cache)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    jsonschema.validate(data, json.loads((resources.files("hybridmap.schema") / "map.schema.json").read_text()))
    assert data["symbol"] == {
        "name": "gross",
        "path": "",
        "depth": 2,
        "definitions": [{"path": "pricing.py", "line": 12}],
        "complete": True,
    }
    relations = {
        (f["path"], s["name"]): (s["relation"], s["distance"])
        for f in data["files"]
        for s in f["symbols"]
        if "relation" in s
    }
    assert relations[("report.py", "monthly")] == ("caller", 2)
    bad = run_cli("map", str(root), "--symbol", "gross", "--depth", "0", "--cache-dir", cache)
    assert bad.returncode == 2

    pytest.importorskip("mcp")
    import anyio

    async def body() -> tuple[str, dict[str, Any]]:
        async with connect(root, tmp_path) as session:
            return await ok(session, "repo_map", symbol="net", depth=1, mode="static", tokens=400)

    text, structured = anyio.run(body)
    assert text.startswith("Symbol 'net' (2 definitions: other.py:1, pricing.py:4)")
    assert structured["symbol"]["definitions"] == [{"path": "other.py", "line": 1}, {"path": "pricing.py", "line": 4}]
