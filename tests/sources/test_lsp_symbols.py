"""What real language servers add to the map's symbols: confirmation, details, missed symbols,
and a view of the disk that follows edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap import Provenance, RepoMap, ServerState

from ..conftest import git, write_files
from ..helpers import edges, fixture_repo, require

# language -> (fixture, server command, (file, symbol) -> the detail its server gives)
DETAILS = {
    "c": ("c", "clangd", {("memory.c", "load"): "int (const char *)", ("disk.c", "disk_count"): "int (const char *)"}),
    "go": (
        "go",
        "gopls",
        {("memory/memory.go", "Load"): "func(key string) []byte", ("memory/memory.go", "Runner"): "struct{}"},
    ),
    # ty and tsserver leave documentSymbol's detail empty: the detail comes from hover.
    "python": ("python", "ty", {("store/memory.py", "load"): "def load(key: str) -> list[str]"}),
    "typescript": (
        "typescript",
        "typescript-language-server",
        {("src/memory.ts", "load"): "function load(key: string): string[]"},
    ),
}


def shown(result: object) -> dict[tuple[str, str], object]:
    return {(f.path, s.name): s for f in result.files for s in f.symbols}  # type: ignore[attr-defined]


@pytest.mark.parametrize("language", sorted(DETAILS))
def test_server_confirms_symbols_and_describes_them(language: str, tmp_path: Path) -> None:
    fixture, command, details = DETAILS[language]
    require(command)
    root = fixture_repo(tmp_path, fixture)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        static = repo.map(mode="static", tokens=2048)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=2048)
    assert hybrid.servers[language].state is ServerState.READY, hybrid.servers
    assert all(s.provenance == Provenance.TREE_SITTER for s in shown(static).values())
    symbols = shown(hybrid)
    for key, detail in details.items():
        assert key in symbols, (key, sorted(symbols))
        assert symbols[key].provenance == Provenance.TREE_SITTER_AND_LSP, symbols[key]
        assert symbols[key].detail == detail, symbols[key]
        assert symbols[key].to_json()["detail"] == detail
        # The rendered skeleton stays the source's own text; details are in the JSON.
        assert symbols[key].signature.splitlines()[0] in hybrid.text
    assert hybrid.stats["lsp_symbol_files"] + hybrid.stats["lsp_symbol_cache_hits"] >= 2


def test_server_adds_symbols_the_query_misses(git_repo, tmp_path: Path) -> None:
    require("ty")
    root = git_repo(
        {
            "config.py": "class Config:\n    limit = 3\n    name: str = 'x'\n\n    def size(self) -> int:\n"
            "        local = 1\n        return local\n",
            "app.py": "from config import Config\n\n\ndef run() -> int:\n    return Config().size() + Config.limit\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        static = repo.map(mode="static", tokens=1024)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=1024)
        graph = repo.graph()
    assert ("config.py", "limit") not in shown(static)
    symbols = shown(hybrid)
    limit = symbols[("config.py", "limit")]
    assert limit.provenance == Provenance.LSP and limit.kind in ("variable", "field", "property")
    assert limit.signature == "limit = 3" and limit.line == 2
    assert ("config.py", "local") not in symbols  # locals of a function are never added
    assert "    limit = 3" in hybrid.text.split("config.py:")[1]
    assert graph is not None and "limit" in graph.symbol_names


def test_servers_follow_files_changed_on_disk(tmp_path: Path) -> None:
    """disk.py is never opened in the server: only didChangeWatchedFiles tells it about the edit."""
    require("ty")
    root = fixture_repo(tmp_path, "python")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="hybrid", server_wait=60, tokens=512)
        assert edges(repo).get(("app.py", "store/disk.py", "load")) == "lsp"
        # disk.py stops defining load and re-exports memory's instead.
        write_files(
            root,
            {
                "store/disk.py": '"""Records kept in files."""\nfrom store.memory import load\n'
                "\n\nclass Runner:\n    def run(self, path: str) -> int:\n"
                "        return len(load(path))\n"
            },
        )
        git(root, "commit", "-qam", "re-export")
        repo.map(mode="hybrid", server_wait=60, tokens=512)
        after = edges(repo)
    assert after.get(("app.py", "store/memory.py", "load")) == "lsp", after
    assert ("app.py", "store/disk.py", "load") not in after


def test_generic_single_definer_names_are_checked(git_repo, tmp_path: Path) -> None:
    """`get` is defined once in the repository; `d.get()` on a dict is not a use of it."""
    require("ty")
    root = git_repo(
        {
            "registry.py": "class Registry:\n    def get(self, key: str) -> str:\n        return key\n",
            "app.py": "def lookup(d: dict[str, str]) -> str | None:\n    return d.get('x')\n",
            "user.py": "from registry import Registry\n\n\ndef fetch() -> str:\n    return Registry().get('x')\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="static", tokens=512)
        static = edges(repo)
        repo.map(mode="hybrid", server_wait=60, tokens=512)
        hybrid = edges(repo)
    assert static.get(("app.py", "registry.py", "get")) == "name-match"
    assert ("app.py", "registry.py", "get") not in hybrid  # the dict's get, resolved outside
    assert hybrid.get(("user.py", "registry.py", "get")) == "lsp"


def test_a_type_named_in_a_prototype_is_not_its_definition(git_repo, tmp_path: Path) -> None:
    """clangd lists ``struct ctx`` of ``struct ctx *ctx_get(void);`` as a struct symbol of that
    header; added to the map, every user of ``ctx`` would point at the header (seen on jq,
    where ``jv_dtoa_tsd.h`` then outranked the code)."""
    require("clangd")
    root = git_repo(
        {
            "ctx.h": "#ifndef CTX_H\n#define CTX_H\nstruct ctx {\n    int depth;\n};\n#endif\n",
            "getter.h": "#ifndef GETTER_H\n#define GETTER_H\nstruct ctx *ctx_get(void);\n#endif\n",
            "getter.c": '#include "ctx.h"\n#include "getter.h"\nstatic struct ctx one;\n'
            "struct ctx *ctx_get(void) {\n    return &one;\n}\n",
            "user.c": '#include "ctx.h"\n#include "getter.h"\nint depth(void) {\n'
            "    struct ctx *c = ctx_get();\n    return c->depth;\n}\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="hybrid", server_wait=60, tokens=1024)
        # A waiting map waits for the focus files' symbols and the definitions; the other files'
        # symbols are background work, which the second waiting map follows up on.
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=1024)
        found = edges(repo)
        symbols = shown(repo.map(mode="hybrid", tokens=1024, chat_files=["user.c"]))
    assert hybrid.servers["c"].state is ServerState.READY, hybrid.servers
    assert hybrid.stats["lsp_symbol_files"] + hybrid.stats["lsp_symbol_cache_hits"] >= 4
    assert ("user.c", "ctx.h", "ctx") in found, found
    assert not [edge for edge in found if edge[1] == "getter.h" and edge[2] == "ctx"], found
    assert ("getter.h", "ctx_get") in symbols and ("getter.h", "ctx") not in symbols


def test_a_module_declared_in_a_crate_root_is_not_its_definition(git_repo, tmp_path: Path) -> None:
    """rust-analyzer lists each ``mod config;`` of a crate root as a module ``config`` of that
    file; added to the map, every variable named ``config`` would point at ``lib.rs`` (seen on
    casey/just, whose ``lib.rs`` declares 140 modules and became the first file of hybrid maps).
    A module with its body here (``mod inline { ... }``) is defined here and stays."""
    require("rust-analyzer")
    cargo = '[package]\nname = "modx"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    lock = 'version = 4\n\n[[package]]\nname = "modx"\nversion = "0.1.0"\n'
    root = git_repo(
        {
            "Cargo.toml": cargo,
            "Cargo.lock": lock,
            "src/lib.rs": "mod config;\n#[allow(dead_code)]\npub(crate) mod runner;\n\n"
            "pub mod inline {\n    pub fn helper() -> u32 {\n        1\n    }\n}\n\n"
            "pub fn entry() -> u32 {\n    inline::helper()\n}\n",
            "src/config.rs": "pub struct Settings {\n    pub depth: u32,\n}\n",
            "src/runner.rs": "use crate::config::Settings;\n\n"
            "pub fn run(config: &Settings) -> u32 {\n    config.depth\n}\n",
        }
    )
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="hybrid", server_wait=60, tokens=1024)
        hybrid = repo.map(mode="hybrid", server_wait=60, tokens=1024)
        graph = repo.graph()
    assert hybrid.servers["rust"].state is ServerState.READY, hybrid.servers
    assert graph is not None
    lib = graph.index["src/lib.rs"]
    defined_in_lib = {name for name, files in graph.definers.items() if lib in files}
    assert {"entry", "inline", "helper"} <= defined_in_lib, defined_in_lib
    assert not defined_in_lib & {"config", "runner"}, defined_in_lib
    assert hybrid.stats["lsp_symbol_files"] + hybrid.stats["lsp_symbol_cache_hits"] >= 3, hybrid.stats
