"""``hybridmap map --format graphml|gexf|json-graph`` and ``hybridmap stats``, as subprocesses on
real repositories; the documents are read back with networkx's own readers."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from hybridmap import RepoMap

from ..conftest import GitRepoFactory

FILES = {
    "app.py": "from store import load, save\n\n\ndef main():\n    save(load('x'))\n    load('y')\n",
    "store.py": "def load(path):\n    return path\n\n\ndef save(data):\n    pass\n",
    "util/helpers.go": "package util\n\nfunc Helper() int { return 1 }\n\nfunc Other() int { return Helper() }\n",
    "evil\x1b[2J.py": "from store import save\n\nsave(1)\n",
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hybridmap", *args], capture_output=True, text=True, timeout=180)


def expected_edges() -> set[tuple[str, str, str]]:
    return {("app.py", "store.py", "load"), ("app.py", "store.py", "save"), ("evil\\x1b[2J.py", "store.py", "save")}


@pytest.mark.parametrize("fmt", ["graphml", "gexf", "json-graph"])
def test_graph_export_formats(git_repo: GitRepoFactory, tmp_path: Path, fmt: str) -> None:
    root = git_repo(FILES)
    proc = run("map", str(root), "--format", fmt, "--chat", "app.py", "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout
    if fmt == "graphml":
        graph = nx.read_graphml(io.BytesIO(proc.stdout.encode()), force_multigraph=True)
    elif fmt == "gexf":
        graph = nx.read_gexf(io.BytesIO(proc.stdout.encode()))
    else:
        graph = nx.node_link_graph(json.loads(proc.stdout), edges="edges")
    assert set(graph.nodes) == {"app.py", "store.py", "util/helpers.go", "evil\\x1b[2J.py"}
    edges = {(s, d, data["ident"]) for s, d, data in graph.edges(data=True)}
    assert edges == expected_edges()  # Go's Helper is used in its own file only: no edge
    assert {data["provenance"] for _, _, data in graph.edges(data=True)} == {"name-match"}
    counts = {(s, data["ident"]): int(data["count"]) for s, _, data in graph.edges(data=True)}
    assert counts[("app.py", "load")] == 3 and counts[("app.py", "save")] == 2  # the import counts too
    nodes = graph.nodes
    assert float(nodes["store.py"]["rank"]) > 0 and nodes["store.py"]["in_map"] in (True, "true", "True")
    assert float(nodes["app.py"]["rank"]) == 0  # the chat file is not in the map
    assert nodes["util/helpers.go"]["language"] == "go"


def test_stats_text_and_json(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    cache = str(tmp_path / "c")
    first = run("stats", str(root), "--format", "json", "--cache-dir", cache)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert data["languages"]["python"] == {"files": 3, "lines": 18, "symbols": 3, "kinds": {"function": 3}}
    assert data["languages"]["go"]["files"] == 1 and data["languages"]["go"]["symbols"] == 2
    assert data["totals"] == {"files_listed": 4, "source_files": 4, "lines": 24, "symbols": 5}
    assert data["graph"]["nodes"] == 4 and data["graph"]["edges"] == 3
    assert data["graph"]["edges_by_provenance"]["name-match"] == 3
    assert data["cache"]["files_parsed"] == 4 and data["cache"]["cache_hits"] == 0
    assert data["timings"]["total"] > 0 and set(data["servers"]) == {"python", "go"}
    second = run("stats", str(root), "--cache-dir", cache)
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert lines[0].split() == ["language", "files", "lines", "symbols"]
    assert lines[1].split() == ["python", "3", "18", "3"] and "total" in lines[3]
    assert "graph: 4 files, 3 edges (name-match 3, lsp 0), " in second.stdout
    # The second process trusts the states the first kept: nothing read, every tag from the cache.
    assert "cache: 4 hits of 4 files looked up (100%, 4 by their kept keys), 0 parsed; 0 files read, 4 trusted" in (
        second.stdout
    )


def test_stats_in_the_api(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}, start_servers=False) as repo:
        stats = repo.stats()
        repo.map(chat_files=["app.py"])  # stats' own map is not shown: the session starts here
        assert repo.session_files().edited == ()
    assert stats["totals"]["symbols"] == 5 and stats["graph"]["edges"] == 3
