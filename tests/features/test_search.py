"""Symbol search (hybridmap/features/search.py): style variants, typos, filters, incremental updates, on
real repositories mapped by the real pipeline, through the API, the sync facade and the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.errors import RequestError
from hybridmap.features.search import SymbolIndex, normalized
from hybridmap.infra.spelling import edit_distance
from hybridmap.languages.lexical import name_parts

from ..conftest import GitRepoFactory, git, write_files

FILES = {
    "billing/totals.py": (
        "def compute_total(items: list[int]) -> int:\n    return sum(items)\n\n\n"
        "class InvoiceBuilder:\n    def add_line(self, amount: int) -> None:\n        pass\n"
    ),
    "billing/tax.py": "RATE = 0.2\n\n\ndef compute_tax(total: int) -> float:\n    return total * RATE\n",
    "web/server.ts": (
        "export class HTTPServer {\n  listen(port: number): void {}\n}\n"
        "export function parseRequestHeaders(raw: string): string[] { return [] }\n"
    ),
    "cmd/main.go": "package main\n\nfunc LoadConfigFile(path string) error { return nil }\n\nfunc main() {}\n",
    "tests/test_totals.py": "from billing.totals import compute_total\n\n\ndef test_compute_total():\n    pass\n",
}


def names(found) -> list[str]:
    return [m.name for m in found.matches]


def test_name_parts_and_normalized() -> None:
    assert name_parts("parseHTTPResponse2") == ["parse", "http", "response", "2"]
    assert name_parts("COMPUTE_TOTAL") == ["compute", "total"] == name_parts("compute-total")
    assert normalized("computeTotal") == normalized("compute_total") == "computetotal"
    assert edit_distance("cmputetotl", "computetotal", 2) == 2
    assert edit_distance("urlopne", "urlopen", 1) == 1  # a transposition is one edit
    assert edit_distance("abc", "xyzxyz", 2) == 3  # over the limit: limit + 1


@pytest.mark.parametrize(
    "query",
    ["compute_total", "COMPUTE_TOTAL", "computeTotal", "compute-total", "ComputeTotal", "comp tot", "cmpute_totl"],
)
def test_style_variants_and_typos_find_compute_total(git_repo: GitRepoFactory, tmp_path: Path, query: str) -> None:
    root = git_repo(FILES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        found = repo.search_symbols(query, limit=5)
    assert found.matches[0].name == "compute_total", (query, names(found))
    assert found.matches[0].path == "billing/totals.py"  # the definition, not the test of it


def test_ranking_tiers_and_how(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        compute = repo.search_symbols("compute", limit=10)
        server = repo.search_symbols("http_server")
        typo = repo.search_symbols("LoadConfgFile")
        abbreviation = repo.search_symbols("parsereqhead")
        context = repo.search_symbols("billing tax")
        nothing = repo.search_symbols("zzzqqq")
        short = repo.search_symbols("raet")  # four letters, no trigram of the name left
    # Whole first words before a test's name that only contains them; the test file last.
    assert [(m.name, m.match) for m in compute.matches[:2]] == [("compute_tax", "start"), ("compute_total", "start")]
    assert compute.matches[2].name == "test_compute_total" and compute.matches[2].match == "word"
    assert [(m.name, m.path, m.match) for m in server.matches] == [("HTTPServer", "web/server.ts", "exact")]
    assert (typo.matches[0].name, typo.matches[0].match) == ("LoadConfigFile", "typo")
    assert (abbreviation.matches[0].name, abbreviation.matches[0].match) == ("parseRequestHeaders", "words")
    # Words found in the path and the name: "billing" is only in the path of compute_tax.
    assert context.matches[0].name == "compute_tax" and context.matches[0].match == "context"
    assert nothing.matches == () and nothing.total == 0
    assert [(m.name, m.match) for m in short.matches] == [("RATE", "typo")]


def test_kind_and_path_filters(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        in_billing = repo.search_symbols("compute", path="billing")
        classes = repo.search_symbols("er", kind="class")
        one_file = repo.search_symbols("ad", path="billing/totals.py", kind="method")
        with pytest.raises(RequestError):
            repo.search_symbols("compute", path="../elsewhere")
    assert {m.path for m in in_billing.matches} == {"billing/totals.py", "billing/tax.py"}
    assert {m.kind for m in classes.matches} == {"class"} and len(classes.matches) == 2
    assert [(m.name, m.line, m.container) for m in one_file.matches] == [("add_line", 6, "InvoiceBuilder")]


def test_index_follows_edits_by_content(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    """Only files whose content changed are re-indexed; a removed file's names go with it."""
    root = git_repo(FILES)

    async def main() -> None:
        async with AsyncRepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
            first = await repo.search_symbols("compute_total", limit=1)
            assert names(first) == ["compute_total"] and first.files_indexed == len(FILES)
            assert (await repo.search_symbols("anything")).files_indexed == 0  # nothing changed

            write_files(root, {"billing/totals.py": "def compute_grand_total(items):\n    return 0\n"})
            (root / "cmd/main.go").unlink()
            (root / "billing/tax.py").touch()  # touched, same content: not re-indexed
            found = await repo.search_symbols("compute total")
            assert found.files_indexed == 1
            assert "compute_grand_total" in names(found) and "InvoiceBuilder" not in names(
                await repo.search_symbols("InvoiceBuilder")
            )
            assert (await repo.search_symbols("LoadConfigFile")).matches == ()

    asyncio.run(main())


def test_unchanged_tags_are_not_reindexed_and_orphan_names_go() -> None:
    from hybridmap.model import FileTags, Span, Symbol

    def tags(*names: str) -> FileTags:
        return FileTags(
            tuple(Symbol(n, "function", Span(i, 0, i, 5), i, 4, f"def {n}():") for i, n in enumerate(names))
        )

    index = SymbolIndex()
    first = {"a.py": tags("alpha_one", "shared_name"), "b.py": tags("shared_name")}
    assert index.update(first, {"a.py": "1", "b.py": "2"}) == 2
    assert index.update(dict(first), {"a.py": "1", "b.py": "2"}) == 0
    assert index.update({"b.py": first["b.py"]}, {"b.py": "2"}) == 0  # a.py gone: dropped only
    assert index.search("alpha_one").matches == ()
    assert [m.path for m in index.search("shared_name").matches] == ["b.py"]
    assert [n for (n,) in index._db.execute("select norm from names")] == ["sharedname"]
    assert len(index) == sum(1 for _ in index._db.execute("select 1 from symbols")) == 1
    index.close()


def test_repository_strings_are_escaped(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo({"evil\x1b]0;x\x07.py": "def payload_func():\n    pass\n", "ok.py": "x = 1\n"})
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "search", str(root), "payload", "--cache-dir", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "evil\\x1b]0;x\\x07.py:1: function payload_func  [start]" in proc.stdout


def test_cli_search_json(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    git(root, "rm", "-q", "--cached", "tests/test_totals.py")  # untracked files are listed too
    args = ["search", str(root), "COMPUTE_TOTAL", "--limit", "1", "--format", "json", "--cache-dir", str(tmp_path)]
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 1 and data["query"] == "COMPUTE_TOTAL"
    assert data["matches"] == [
        {
            "name": "compute_total",
            "kind": "function",
            "path": "billing/totals.py",
            "line": 1,
            "end_line": 2,
            "signature": "def compute_total(items: list[int]) -> int:",
            "container": None,
            "match": "exact",
            "sources": ["index"],
        }
    ]
    assert data["total"] == 2 and data["truncated"] is True  # the test's own function matches too
    assert data["servers"] == []  # a one-shot call without --server-wait starts no server
