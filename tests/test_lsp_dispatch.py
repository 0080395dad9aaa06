"""Calls through an interface reach its implementations (textDocument/implementation), and only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState

from .test_lsp import edges, fixture_repo, registry_with_only, require

# language -> (fixture, server, command, caller, the implementing files, the same-named non-implementation)
CASES = {
    "go": ("go_dispatch", "gopls", "gopls", "shape.go", ["square.go", "circle.go"], "land.go", "Area"),
    "typescript": ("typescript_dispatch", "typescript-language-server", "typescript-language-server",
                   "src/shape.ts", ["src/square.ts", "src/circle.ts"], "src/land.ts", "area"),
    "typescript-tsgo": ("typescript_dispatch", "tsgo", "tsgo",
                        "src/shape.ts", ["src/square.ts", "src/circle.ts"], "src/land.ts", "area"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_interface_calls_resolve_to_implementations(case: str, tmp_path: Path) -> None:
    fixture, server, command, caller, implementations, impostor, name = CASES[case]
    require(command)
    language = case.split("-")[0]
    registry = registry_with_only(tmp_path, language, server)
    root = fixture_repo(tmp_path, fixture)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="static", tokens=512)
        static = edges(repo)
        hybrid_map = repo.map(mode="hybrid", server_wait=60, tokens=512)
        hybrid = edges(repo)
    assert hybrid_map.servers[language].state is ServerState.READY, hybrid_map.servers
    for target in [*implementations, impostor]:
        assert static.get((caller, target, name)) == "name-match"  # name matching links all three
    for target in implementations:
        assert hybrid.get((caller, target, name)) == "lsp", (target, hybrid)
    assert (caller, impostor, name) not in hybrid  # same name, not an implementation
    assert hybrid_map.stats["lsp_implementations"] >= len(implementations)
