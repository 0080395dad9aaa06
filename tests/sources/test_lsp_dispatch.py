"""Calls through an interface reach its implementations (textDocument/implementation), and only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState

from ..helpers import edges, fixture_repo, registry_with_only, require

# language -> (fixture, server, command, caller, the implementing files, the same-named non-implementation)
CASES = {
    "go": ("go_dispatch", "gopls", "gopls", "shape.go", ["square.go", "circle.go"], "land.go", "Area"),
    "typescript": (
        "typescript_dispatch",
        "typescript-language-server",
        "typescript-language-server",
        "src/shape.ts",
        ["src/square.ts", "src/circle.ts"],
        "src/land.ts",
        "area",
    ),
    "typescript-tsgo": (
        "typescript_dispatch",
        "tsgo",
        "tsgo",
        "src/shape.ts",
        ["src/square.ts", "src/circle.ts"],
        "src/land.ts",
        "area",
    ),
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


@pytest.mark.parametrize("server", ["tsgo", "typescript-language-server"])
def test_typescript_servers_never_download_types(server: str, git_repo, tmp_path: Path) -> None:
    """tsserver and tsgo install @types packages from npm on their own (automatic type acquisition)
    unless told not to: offline, and not ours to install. Seen here: tsgo filled
    ~/.cache/typescript/7.0 with @types/lodash within seconds when its setting was not answered."""
    import os
    import time

    require(server)
    root = git_repo(
        {
            "package.json": '{"name": "x", "dependencies": {"lodash": "^4.17.21"}}\n',
            "src/a.ts": 'import _ from "lodash";\nexport function f(): number { return _.sum([1]); }\n',
            "src/b.ts": 'import { f } from "./a";\nexport const g = f();\n',
        }
    )
    home = tmp_path / "home"
    home.mkdir()
    environ = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    registry = registry_with_only(tmp_path, "typescript", server)
    with RepoMap(root, registry=registry, environ=environ, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        assert result.servers["typescript"].state is ServerState.READY
        time.sleep(6)  # type acquisition runs in the background after the project loads
    assert not (home / ".cache" / "typescript").exists(), sorted(p.name for p in home.rglob("*"))[:10]
