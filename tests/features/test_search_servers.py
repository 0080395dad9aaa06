"""Symbol search merged with the language servers' ``workspace/symbol`` (hybridmap/features/search_servers.py,
hybridmap/features/search_merge.py), with real servers on small real repositories: a definition the index
cannot see (its file is beyond ``max_files``) comes from the server alone, one both find is listed
once with both sources; a server that never answers leaves the index's answer intact within
``search_server_timeout``; locations outside the root, through a symlink, in other schemes or in
files the listing leaves out are dropped, and a server's names are made safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.errors import RequestError
from hybridmap.infra.sanitize import json_dumps
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.workspace.walk import is_special_file

from ..conftest import GitRepoFactory, write_files
from ..helpers import FAULT_SERVER, fixture_repo, registry_with_only, require, user_registry
from ..servers.fault_server import HOSTILE_URIS

WAIT = 60.0
"""Seconds a test lets a real server start and get ready (it is usually ready in 1-5)."""
MARGIN = 3.0
"""Seconds a search may take beyond its bounds (thread hops, a loaded CI machine)."""

#: language -> (server, {path: text}, the two unique names, in the order of the two source files)
REPOS: dict[str, tuple[str, dict[str, str], tuple[str, str]]] = {
    "python": (
        "ty",
        {
            "pyproject.toml": '[project]\nname = "far"\nversion = "0"\n',
            "alpha/first_module.py": "def alpha_unique_helper() -> int:\n    return 1\n",
            "beta/second_module.py": "def beta_unique_helper() -> int:\n    return 2\n",
        },
        ("alpha_unique_helper", "beta_unique_helper"),
    ),
    "typescript": (
        "tsgo",
        {
            "tsconfig.json": '{ "compilerOptions": { "target": "es2020", "strict": true }, "include": ["src"] }\n',
            "src/alpha/first.ts": "export function alphaUniqueHelper(): number {\n  return 1;\n}\n",
            "src/beta/second.ts": "export function betaUniqueHelper(): number {\n  return 2;\n}\n",
        },
        ("alphaUniqueHelper", "betaUniqueHelper"),
    ),
    "go": (
        "gopls",
        {
            "go.mod": "module example.com/far\n\ngo 1.21\n",
            "alpha/first.go": "package alpha\n\nfunc AlphaUniqueHelper() int {\n\treturn 1\n}\n",
            "beta/second.go": "package beta\n\nfunc BetaUniqueHelper() int {\n\treturn 2\n}\n",
        },
        ("AlphaUniqueHelper", "BetaUniqueHelper"),
    ),
}
CASES = [("python", "ty"), ("typescript", "tsgo"), ("typescript", "typescript-language-server"), ("go", "gopls")]


def sources(found) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(m.name, m.path, m.sources) for m in found.matches]


@pytest.mark.parametrize(("language", "server"), CASES, ids=[f"{lang}-{srv}" for lang, srv in CASES])
def test_a_server_finds_what_the_index_cannot_and_both_merge_once(
    language: str, server: str, git_repo: GitRepoFactory, tmp_path: Path
) -> None:
    require(server)
    _, files, names = REPOS[language]
    root = git_repo(files)
    specials = sum(1 for path in files if is_special_file(path))
    registry = registry_with_only(tmp_path, language, server)
    # One source file fewer than there are: the listing leaves one of the two out.
    overrides = {"cache_dir": str(tmp_path / "cache"), "max_files": specials + 1}
    with RepoMap(root, registry=registry, overrides=overrides) as repo:
        first = repo.search_symbols(names[0], server_wait=WAIT)
        listed = set(repo.tags())
        assert len([p for p in files if p in listed and not is_special_file(p)]) == 1, listed
        seen_path = next(p for p in files if p in listed and not is_special_file(p))
        unseen_path = next(p for p in files if p not in listed and not is_special_file(p))
        seen, unseen = (names[0], names[1]) if "alpha" in seen_path else (names[1], names[0])
        static = repo.search_symbols(unseen, mode="static")
        hybrid = repo.search_symbols(unseen)
        both = repo.search_symbols(seen)
    assert first.servers and first.servers[0].outcome == "answered", first.servers
    assert static.matches == () and static.servers == ()
    # Only the server knows the file beyond max_files: its hit, its line, the source line shown.
    assert sources(hybrid) == [(unseen, unseen_path, (f"lsp:{server}",))], hybrid
    hit = hybrid.matches[0]
    assert hit.match == "exact" and hit.kind == "function"
    assert hit.line == (1 if language == "python" or language == "typescript" else 3), hit
    assert unseen in hit.signature, hit
    assert hybrid.total == 1
    # A definition both found: one entry, both sources, the index's line and signature.
    assert sources(both) == [(seen, seen_path, ("index", f"lsp:{server}"))], both
    answer = both.servers[0]
    assert (answer.server, answer.outcome, answer.kept) == (f"lsp:{server}", "answered", 1), answer
    assert answer.seconds < 2.0


def test_static_mode_and_wait_zero_ask_no_server(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    require("ty")
    _, files, names = REPOS["python"]
    root = git_repo(files)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        cold = repo.search_symbols(names[0])  # hybrid, but nothing started it and nothing waits
        assert cold.servers == () and sources(cold) == [(names[0], "alpha/first_module.py", ("index",))]
        assert repo.running_servers() == ()
        warm = repo.search_symbols(names[0], server_wait=WAIT)
        static = repo.search_symbols(names[0], mode="static")
        with pytest.raises(RequestError):
            repo.search_symbols(names[0], server_wait=-1)
        with pytest.raises(RequestError):
            repo.search_symbols(names[0], mode="fuzzy")  # type: ignore[arg-type]
    assert sources(warm) == [(names[0], "alpha/first_module.py", ("index", "lsp:ty"))]
    assert static.servers == () and sources(static) == sources(cold)


def fault_repo(tmp_path: Path, mode: str) -> tuple[Path, LanguageRegistry]:
    """The Python fixture with a fault server in ``mode`` as its only server, and the hostile
    places its answers name: a file outside the root, a symlink ``escape`` leading out, a
    virtualenv and an ignored directory inside the root."""
    root = fixture_repo(tmp_path, "python")
    outside = tmp_path / "outside"
    write_files(outside, {"evil.py": "def load():\n    pass\n"})
    write_files(tmp_path, {"outside.py": "def load():\n    pass\n"})
    os.symlink(outside, root / "escape")
    write_files(
        root,
        {
            ".gitignore": "unlisted/\n.venv/\n",
            "unlisted/extra.py": "def far_away():\n    pass\n",
            ".venv/lib/site.py": "def load():\n    pass\n",
        },
    )
    registry = user_registry(tmp_path, sys.executable, [str(FAULT_SERVER), mode])
    return root, registry


def test_a_server_that_never_answers_leaves_the_index_answer_within_the_timeout(tmp_path: Path) -> None:
    root, registry = fault_repo(tmp_path, "hang-lookups")
    timeout = 1.0
    overrides = {"cache_dir": str(tmp_path / "cache"), "search_server_timeout": timeout}
    with RepoMap(root, registry=registry, overrides=overrides) as repo:
        static = repo.search_symbols("load", mode="static")
        started = time.monotonic()
        first = repo.search_symbols("load", server_wait=5.0)
        first_elapsed = time.monotonic() - started
        started = time.monotonic()
        again = repo.search_symbols("lod")
        again_elapsed = time.monotonic() - started
    assert first_elapsed <= 5.0 + timeout + MARGIN, first_elapsed
    assert timeout <= again_elapsed <= timeout + MARGIN, again_elapsed
    for found in (first, again):
        assert [(m.name, m.path, m.sources) for m in found.matches] == [
            (m.name, m.path, ("index",)) for m in static.matches
        ]
        (answer,) = found.servers
        assert (answer.server, answer.outcome, answer.kept) == ("lsp:fault", "timeout", 0), answer
        assert "search_server_timeout = 1s" in answer.detail
    assert {m.path for m in static.matches} == {"store/disk.py", "store/memory.py"}


def test_locations_outside_the_repository_are_dropped_and_names_made_safe(tmp_path: Path) -> None:
    root, registry = fault_repo(tmp_path, "lookups")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        found = repo.search_symbols("load", server_wait=5.0)
    shown = {(m.name, m.path, m.line, m.sources) for m in found.matches}
    assert shown == {
        ("load", "store/disk.py", 4, ("index", "lsp:fault")),  # both: listed once
        ("load", "store/memory.py", 6, ("index",)),
        ("ev\u202eil", "store/disk.py", 1, ("lsp:fault",)),  # only the server: ranked last
    }, shown
    assert found.matches[-1].match == "server"
    (answer,) = found.servers
    # Four hits in repository files; every hostile location and the ignored file dropped; the
    # import binding on app.py's first line kept by location but shown as no definition.
    assert (answer.hits, answer.kept, answer.dropped) == (4 + len(HOSTILE_URIS), 3, 1 + len(HOSTILE_URIS))
    assert found.total == 3  # the index's two, and the one only the server found
    text = json_dumps(found.to_json())
    assert "\u202e" not in text  # the bidi override is shown escaped, never raw
    assert [m["name"] for m in json.loads(text)["matches"]][-1] == "ev\\u202eil"
    for place in ("outside", "escape", "evil", ".venv", "unlisted", "passwd", "untitled", "example.invalid"):
        assert place not in text, place


def test_cli_search_says_each_servers_part(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    require("ty")
    _, files, names = REPOS["python"]
    root = git_repo(files)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    args = [sys.executable, "-m", "hybridmap", "search", str(root), names[1], "--server-wait", str(WAIT)]
    text = subprocess.run(args, capture_output=True, text=True, env=env, timeout=WAIT + 60)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"beta/second_module.py:1: function {names[1]}  [exact] (index, lsp:ty)\n")
    assert "hybridmap: lsp:ty (.): 1 of 1 hits kept in" in text.stderr
    quiet = subprocess.run([*args[:6], "--format", "json"], capture_output=True, text=True, env=env, timeout=120)
    document = json.loads(quiet.stdout)
    assert document["servers"] == [] and document["matches"][0]["sources"] == ["index"]
    assert "index only: no language server was ready" not in quiet.stderr  # JSON: said in the document


def test_mcp_search_symbols_carries_the_sources(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    require("ty")
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    _, files, names = REPOS["python"]
    root = git_repo(files)

    async def ask() -> dict:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "c")]
        )
        with open(tmp_path / "mcp.log", "a") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("search_symbols", {"query": names[0], "server_wait": WAIT})
                assert not result.is_error and result.structured_content is not None
                return result.structured_content

    found = anyio.run(ask)
    assert [(m["name"], m["sources"]) for m in found["matches"]] == [(names[0], ["index", "lsp:ty"])]
    (answer,) = found["servers"]
    assert (answer["server"], answer["outcome"], answer["kept"]) == ("lsp:ty", "answered", 1)
