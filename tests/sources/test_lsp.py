"""Real language servers resolve what name matching gets wrong (fixtures with name collisions)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry

from ..helpers import CASES, edges, fixture_repo, registry_with_only, require, run_cli

#: Provenances a right edge may carry per language (default: the server's own, ``lsp``).
RIGHT_PROVENANCES = {"c": {"lsp", "header-definition"}}


@pytest.mark.parametrize("language", sorted(CASES))
def test_hybrid_resolves_name_collisions(language: str, tmp_path: Path) -> None:
    fixture, command, right, wrong = CASES[language]
    require(command)
    root = fixture_repo(tmp_path, fixture)
    overrides: dict[str, object] = {"cache_dir": str(tmp_path / "cache")}
    if language in ("solidity", "svelte"):  # our own fixture (no config to run): the server may run in it
        overrides["allow_servers_running_repository_code"] = True
    with RepoMap(root, overrides=overrides) as repo:
        static = repo.map(mode="static", tokens=512)
        static_edges = edges(repo)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=512)
        hybrid_edges = edges(repo)
    report = hybrid.servers[language if language != "c" else "c"]
    assert report.state is ServerState.READY, report
    assert static.servers == {}
    for edge in wrong:
        assert static_edges.get(edge) == "name-match", f"fixture no longer collides on {edge}"
        assert edge not in hybrid_edges, f"{edge} survived: {hybrid_edges}"
    for edge in right:
        assert hybrid_edges.get(edge) in RIGHT_PROVENANCES.get(language, {"lsp"}), (
            f"{edge} not resolved: {hybrid_edges}"
        )
    if right:
        assert hybrid.edges["lsp"] >= 1 if language in RIGHT_PROVENANCES else hybrid.edges["lsp"] >= len(right)


def test_header_prototypes_point_at_the_defining_file(git_repo, tmp_path: Path) -> None:
    """clangd answers definition with the header's prototype when it has not opened the file
    with the body (it knows bodies only in open files). The edge to the header is then the
    server's (``lsp``); the policy adds the file defining the function (``header-definition``,
    hybridmap/pipeline/policies.py). The defining file's own call, answered with
    the body in the same file, reaches the header it includes (``own-header``)."""
    require("clangd")
    root = git_repo(
        {
            "lexer.h": "#ifndef LEXER_H\n#define LEXER_H\nint lex_next(int state);\n#endif\n",
            "lexer.c": '#include "lexer.h"\nint lex_next(int state) {\n    return state + 1;\n}\n'
            "int lex_all(void) {\n    return lex_next(0) + lex_next(1);\n}\n",
            "parser.c": '#include "lexer.h"\nint parse(void) {\n    return lex_next(2);\n}\n',
        }
    )
    quiet = {"lsp_symbol_files": 0, "lsp_hover_per_map": 0}
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache"), **quiet}) as repo:
        static = repo.map(mode="static", tokens=512)
        static_edges = edges(repo)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=512, chat_files=["parser.c"])
        found = edges(repo)
    assert not static.servers and hybrid.servers["c"].state is ServerState.READY, hybrid.servers
    assert static_edges.get(("parser.c", "lexer.h", "lex_next")) == "name-match"  # the prototype
    # lexer.c is opened to resolve its own calls, maybe before parser.c's call is asked: clangd
    # then answers with the body. Either way lexer.c is reached, and only what clangd answered
    # is ``lsp`` (tests/pipeline/test_policies.py has the case where it never opens the definer).
    if ("parser.c", "lexer.h", "lex_next") in found:
        assert found[("parser.c", "lexer.h", "lex_next")] == "lsp", found  # the prototype
        assert found.get(("parser.c", "lexer.c", "lex_next")) == "header-definition", found
    else:
        assert found.get(("parser.c", "lexer.c", "lex_next")) == "lsp", found  # the body
    assert found.get(("lexer.c", "lexer.h", "lex_next")) == "own-header", found


def test_own_function_rule_stays_in_c(git_repo, tmp_path: Path) -> None:
    """A Python file's call to its own ``load`` resolves to itself; a C header that happens to
    declare a ``load`` is not its interface (mixed repositories: Python with C extensions)."""
    require("ty")
    root = git_repo(
        {
            "store.py": "def load(key: str) -> str:\n    return key\n\n\ndef load_all() -> list[str]:\n"
            "    return [load('a'), load('b')]\n",
            "native/load.h": "#ifndef LOAD_H\n#define LOAD_H\nint load(void);\n#endif\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="static", tokens=512)
        static_edges = edges(repo)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=512)
        found = edges(repo)
    assert hybrid.servers["python"].state is ServerState.READY, hybrid.servers
    assert static_edges.get(("store.py", "native/load.h", "load")) == "name-match"  # the guess
    assert ("store.py", "native/load.h", "load") not in found, found


#: Every candidate server of a language, with the command that must be installed.
EACH_SERVER = [
    ("python", "ty", "ty"),
    ("python", "basedpyright", "basedpyright-langserver"),
    ("python", "pylsp", "pylsp"),
    ("python", "pyrefly", "pyrefly"),
    ("python", "jedi-language-server", "jedi-language-server"),
    ("typescript", "typescript-language-server", "typescript-language-server"),
    ("typescript", "tsgo", "tsgo"),
]


@pytest.mark.parametrize(
    ("language", "server", "command"), EACH_SERVER, ids=[f"{lang}-{server}" for lang, server, _ in EACH_SERVER]
)
def test_each_server_resolves_the_collisions(language: str, server: str, command: str, tmp_path: Path) -> None:
    require(command)
    registry = registry_with_only(tmp_path, language, server)
    fixture, _, right, wrong = CASES[language]
    root = fixture_repo(tmp_path, fixture)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        found = edges(repo)
    assert result.servers[language].server == server
    assert result.servers[language].state is ServerState.READY
    for edge in right:
        assert found.get(edge) == "lsp", (server, edge, found)
    for edge in wrong:
        assert edge not in found, (server, edge)


def test_first_map_never_waits_and_later_maps_use_the_server(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        first = repo.map(mode="hybrid", tokens=512)  # server_wait = 0
        assert first.edges.get("lsp", 0) == 0
        assert first.servers["python"].state in (ServerState.STARTING, ServerState.READY, ServerState.INDEXING)
        later = None
        for _ in range(100):
            later = repo.map(mode="hybrid", tokens=512)
            if later.edges.get("lsp", 0) >= 3:
                break
            import time

            time.sleep(0.1)
        assert later is not None and later.edges["lsp"] >= 3, later.edges


#: The CLI path is the same for every language: checked on the first four (the new servers' own
#: collision tests above take 6-45 s each; jdtls alone ~45 s).
CLI_CASES = ["c", "go", "python", "typescript"]


def _hybrid_json(root: Path, tmp_path: Path) -> dict[str, Any]:
    """The CLI's hybrid map of ``root`` as JSON, waiting up to 60 s for its servers."""
    args = ("--mode", "hybrid", "--server-wait", "60", "--format", "json", "--cache-dir", str(tmp_path / "c"))
    proc = run_cli("map", str(root), *args)
    assert proc.returncode == 0, proc.stderr
    return cast(dict[str, Any], json.loads(proc.stdout))


@pytest.mark.parametrize("language", CLI_CASES)
def test_cli_hybrid_json_reports_ready_server_and_lsp_edges(language: str, tmp_path: Path) -> None:
    fixture, command, right, wrong = CASES[language]
    require(command)
    root = fixture_repo(tmp_path, fixture)
    data = _hybrid_json(root, tmp_path)
    assert data["servers"][language]["state"] == "ready", data["servers"]
    static = run_cli("map", str(root), "--mode", "static", "--format", "json", "--cache-dir", str(tmp_path / "c"))
    static_edges = json.loads(static.stdout)["edges"]
    # Fewer name-matched edges: the wrong ones are gone; resolved ones are counted as lsp.
    assert data["edges"]["name-match"] <= static_edges["name-match"] - len(wrong)
    assert data["edges"]["lsp"] >= len(right)


def test_cli_hybrid_contract(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    data = _hybrid_json(root, tmp_path)
    assert data["mode"] == "hybrid"
    assert data["servers"]["python"]["state"] == "ready"
    assert data["servers"]["python"]["server"] == "ty"
    assert data["servers"]["python"]["seconds_to_ready"] >= 0
    assert data["edges"]["lsp"] >= 3 and data["edges"]["name-match"] == 0
    # --server-wait 0 in a one-shot call: servers are reported, not started.
    proc = run_cli("map", str(root), "--mode", "hybrid", "--format", "json", "--cache-dir", str(tmp_path / "c"))
    data = json.loads(proc.stdout)
    assert data["servers"]["python"]["state"] == "disabled"
    assert data["edges"]["name-match"] > 0


def test_missing_server_degrades_cleanly(tmp_path: Path) -> None:
    user = tmp_path / "user_configs"
    user.mkdir()
    text = (BUILTIN_CONFIG_DIR / "python.toml").read_text()
    text = text.replace('command = "ty"', 'command = "ty-does-not-exist"')
    text = re.sub(r"language-servers = \[[^\]]*\]", 'language-servers = ["ty"]', text)
    (user / "python.toml").write_text(text)
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    root = fixture_repo(tmp_path, "python")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=5, tokens=512)
    assert result.servers["python"].state is ServerState.MISSING
    assert "pip install ty" in result.servers["python"].detail
    assert any(d.kind == "server_missing" for d in result.diagnostics)
    assert result.edges["name-match"] > 0 and "def load" in result.text


def test_edit_invalidates_server_answers_and_edges_follow(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    cache = str(tmp_path / "cache")
    with RepoMap(root, overrides={"cache_dir": cache}) as repo:
        repo.map(mode="hybrid", server_wait=60, tokens=512)
        before = edges(repo)
        assert before.get(("app.py", "store/disk.py", "load")) == "lsp"
        # The agent switches app.py to the in-memory store.
        app = root / "app.py"
        app.write_text(app.read_text().replace("from store.disk import load", "from store.memory import load"))
        repo.map(mode="hybrid", server_wait=60, tokens=512)
        after = edges(repo)
    assert after.get(("app.py", "store/memory.py", "load")) == "lsp"
    assert ("app.py", "store/disk.py", "load") not in after
    # A new process with the same cache reuses the answers for unchanged content.
    with RepoMap(root, overrides={"cache_dir": cache}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        assert edges(repo).get(("app.py", "store/memory.py", "load")) == "lsp"
    assert result.stats["lsp_cache_hits"] >= 3


def test_a_map_after_an_edit_shows_no_server_answer_about_the_old_text(git_repo, tmp_path: Path) -> None:
    """A map that does not wait (the servers hear of the edit only after it) still shows only
    what describes the files as they are now: no symbol, detail or edge from the old text."""
    require("ty")
    files = {
        f"pkg/mod{i}.py": f"def func_{i}(x):\n    return helper_{(i + 1) % 3}(x)\n\ndef helper_{i}(y):\n    return y\n"
        for i in range(3)
    }
    root = git_repo(files)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        warm = repo.map(mode="hybrid", server_wait=60, tokens=512)
        assert warm.stats["lsp_symbol_files_known"] == 3, warm.stats
        assert edges(repo).get(("pkg/mod1.py", "pkg/mod2.py", "helper_2")) is not None
        (root / "pkg/mod2.py").write_text("def renamed_function(z):\n    return z\n")
        edited = repo.map(mode="hybrid", tokens=512)  # server_wait 0: nothing asked before it
        assert edited.changes.changed == ("pkg/mod2.py",)
        assert "renamed_function" in edited.text
        assert "func_2" not in edited.text and "helper_2(y)" not in edited.text, edited.text
        mod2 = next(f for f in edited.files if f.path == "pkg/mod2.py")
        assert [s.name for s in mod2.symbols] == ["renamed_function"], mod2
        # mod1's use of helper_2 pointed into the old mod2: no edge of the old text remains.
        assert edges(repo).get(("pkg/mod1.py", "pkg/mod2.py", "helper_2")) is None


def test_repository_server_config_needs_opt_in(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    (root / ".hybridmap" / "lsp_configs").mkdir(parents=True)
    # It says it ran on stderr (the sandbox would refuse it a marker file outside its scratch).
    (root / ".hybridmap" / "lsp_configs" / "python.toml").write_text(
        '[language]\nname = "python"\nlanguage-servers = ["evil"]\n\n'
        '[language-server.evil]\ncommand = "sh"\nargs = ["-c", "echo evil-ran >&2; sleep 0.2; exit 1"]\n'
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    # The untrusted candidate is skipped; the built-in ones still serve the map.
    assert result.servers["python"].server != "evil"
    assert "evil-ran" not in str(result.servers["python"])
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c"), "trust_repository_servers": True}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert result.servers["python"].state is ServerState.FAILED
    assert "evil-ran" in result.servers["python"].detail
    assert "def load" in result.text  # the map still comes back


# --- honest states: up, but cannot load the project ------------------------------------------

_GO_MISSING_MODULE = {
    "go.mod": "module example.com/app\n\ngo 1.16\n\nrequire example.com/notdownloaded v1.2.3\n",
    "main.go": 'package main\n\nimport (\n\t"example.com/app/disk"\n\t"example.com/app/memory"\n'
    '\t"example.com/notdownloaded/lib"\n)\n\nfunc main() {\n\tdisk.Load("x")\n\tmemory.Save("y")\n'
    "\tdisk.Close()\n\tlib.Use()\n}\n",
    "disk/disk.go": "package disk\n\nfunc Load(p string) {}\nfunc Save(p string) {}\nfunc Close() {}\n",
    "memory/memory.go": "package memory\n\nfunc Load(k string) {}\nfunc Save(k string) {}\nfunc Close() {}\n",
}


def test_gopls_with_a_missing_module_is_degraded_and_says_why(git_repo, tmp_path: Path) -> None:
    """gopls is up, but go list fails on a dependency that is not in the module cache (GOPROXY
    is off at map time): degraded with gopls' own reason, and the map says it resolved nothing."""
    require("gopls")
    root = git_repo(_GO_MISSING_MODULE)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
    report = result.servers["go"]
    assert report.state is ServerState.DEGRADED, report
    assert "example.com/notdownloaded" in report.detail and "go mod download" in report.detail, report
    kinds = {d.kind: d.message for d in result.diagnostics if d.path == "go"}
    assert "example.com/notdownloaded" in kinds.get("server_degraded", ""), result.diagnostics
    assert "hybrid_resolved_nothing" in kinds, result.diagnostics
    assert result.edges.get("lsp", 0) == 0
    # A pruned module graph (go >= 1.17): the other packages load, the import that cannot is said.
    files = {**_GO_MISSING_MODULE, "go.mod": _GO_MISSING_MODULE["go.mod"].replace("go 1.16", "go 1.21")}
    root = git_repo(files)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache2")}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
    report = result.servers["go"]
    assert report.state is ServerState.DEGRADED, report
    assert "could not import example.com/notdownloaded/lib" in report.detail, report
    assert result.edges.get("lsp", 0) >= 3  # disk.Load, memory.Save, disk.Close
    assert not any(d.kind == "hybrid_resolved_nothing" for d in result.diagnostics)


def test_clangd_without_include_paths_is_degraded(git_repo, tmp_path: Path) -> None:
    """A C++ file whose header is found only through the build's include path (-Iinclude): with
    no compile_commands.json, clangd is up but says the header is not found: degraded. With
    compile_flags.txt giving the path, it is ready."""
    require("clangd")
    files = {
        "include/shapes/area.hpp": "#pragma once\nnamespace shapes { int area(int w, int h); }\n",
        "src/area.cpp": '#include "shapes/area.hpp"\nnamespace shapes { int area(int w, int h) { return w * h; } }\n',
        "src/main.cpp": '#include "shapes/area.hpp"\nint main() { return shapes::area(2, 3); }\n',
        "CMakeLists.txt": "project(shapes CXX)\nadd_executable(main src/main.cpp src/area.cpp)\n"
        "target_include_directories(main PRIVATE include)\n",
    }
    quiet = {"lsp_hover_per_map": 0}
    root = git_repo(files)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c1"), **quiet}) as repo:
        result = repo.map(mode="hybrid", server_wait=30, tokens=512)
    report = result.servers["cpp"]
    assert report.state is ServerState.DEGRADED, report
    assert "'shapes/area.hpp' file not found" in report.detail and "compile_commands.json" in report.detail, report
    assert any(d.kind == "server_degraded" and "file not found" in d.message for d in result.diagnostics)
    root = git_repo({**files, "compile_flags.txt": "-Iinclude\n-std=c++17\n"})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c2"), **quiet}) as repo:
        result = repo.map(mode="hybrid", server_wait=30, tokens=512)
    assert result.servers["cpp"].state is ServerState.READY, result.servers


def test_degraded_and_settle_settings_are_checked(tmp_path: Path) -> None:
    """The new server fields are validated like the others: a bad regex or an out-of-range
    settle time is a ConfigError naming the field; good ones are compiled and kept."""
    from hybridmap.errors import ConfigError
    from hybridmap.sources.lsp.config import parse_server

    where = tmp_path / "x.toml"
    good = parse_server(
        "s",
        {"command": "s", "degraded": ["(cannot load .*)"], "degraded-hint": "fix it", "open-settle": 1.5},
        where,
        True,
    )
    assert good.degraded[0].search("x cannot load y") and good.degraded_hint == "fix it" and good.open_settle == 1.5
    assert parse_server("s", {"command": "s", "ready": "server-status"}, where, True).ready == "server-status"
    with pytest.raises(ConfigError, match="degraded"):
        parse_server("s", {"command": "s", "degraded": ["(unclosed"]}, where, True)
    with pytest.raises(ConfigError, match="open-settle"):
        parse_server("s", {"command": "s", "open-settle": -1}, where, True)
