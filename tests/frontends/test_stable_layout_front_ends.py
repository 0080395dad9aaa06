"""A stable layout through a real MCP client (``repo_map stable``) and the CLI's ``--stable``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..conftest import GitRepoFactory
from ..helpers import connect, ok, run_cli

MODULES = 16


def _module(i: int) -> str:
    return (
        f"from pkg.m{(i + 1) % MODULES} import work_{(i + 1) % MODULES}\n\n\n"
        f"def work_{i}(value):\n    return work_{(i + 1) % MODULES}(value)\n"
    )


def test_mcp_repo_map_keeps_the_layout_when_asked(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio

    root = git_repo({f"pkg/m{i}.py": _module(i) for i in range(MODULES)} | {"pkg/__init__.py": ""})

    async def body() -> list[str]:
        texts = []
        async with connect(root, tmp_path) as session:
            for chat in ("pkg/m0.py", "pkg/m6.py"):
                args: dict[str, Any] = {"chat_files": [chat], "mode": "static", "tokens": 200, "stable": True}
                text, _ = await ok(session, "repo_map", **args)
                texts.append(text)
        return texts

    first, second = anyio.run(body)
    kept_lines = 0
    for a, b in zip(first.splitlines(), second.splitlines(), strict=False):
        if a != b:
            break
        kept_lines += 1
    assert kept_lines >= len(second.splitlines()) // 2, (first, second)


def test_cli_takes_stable(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo({f"pkg/m{i}.py": _module(i) for i in range(4)} | {"pkg/__init__.py": ""})
    cache = str(tmp_path / "cache")
    stable = run_cli("map", str(root), "--stable", "--mode", "static", "--cache-dir", cache)
    plain = run_cli("map", str(root), "--mode", "static", "--cache-dir", cache)
    assert stable.returncode == 0 and plain.returncode == 0, stable.stderr
    assert stable.stdout == plain.stdout  # a one-shot call has no previous map: the rank order
