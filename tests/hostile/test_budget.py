"""A repository that asks for a huge map (issue 23, finding 4.2).

``map_tokens`` and the other budgets are repository-tunable (a project may want a larger map),
but a ``hybridmap.toml`` setting them to 1,000,000 made a default MCP ``repo_map`` answer with
465k tokens: the whole context window of the model asking. ``max_tokens_ceiling`` is the user's
(their config, ``--max-tokens-ceiling``, the API's overrides), never a repository's: budgets
above it are lowered to it, a repository's with a ``repository_config`` diagnostic, a request's
(the CLI's ``--tokens``, the API's, the MCP tools' ``tokens``, which the model chooses) with
``budget_capped``.

A real git repository large enough that a map of 1,000,000 tokens would be about 90k, mapped
through the real CLI, the API, and a real ``hybridmap mcp`` process spoken to by the SDK's client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hybridmap import RepoMap

from ..conftest import git

CEILING = 32_768  # max_tokens_ceiling's default (test_settings checks every default is documented)
HUGE = 1_000_000
FILES = 250
DEFINITION = (
    "def compute_{name}_with_a_rather_long_descriptive_name(alpha: int, beta: str, gamma: float) -> dict[str, int]:\n"
    "    return {{beta: alpha + int(gamma)}}\n\n\n"
)
GREEDY = f"""map_tokens = {HUGE}
no_chat_budget_max = {HUGE}
conversation_budget_start = {HUGE}
conversation_budget_mid = {HUGE}
conversation_budget_long = {HUGE}
max_tokens_ceiling = {HUGE}
"""


@pytest.fixture(scope="module")
def greedy_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("greedy") / "repo"
    for i in range(FILES):
        path = root / "pkg" / f"module_{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(DEFINITION.format(name=f"{i:03d}_{j:02d}") for j in range(12)))
    (root / "hybridmap.toml").write_text(GREEDY)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a repository asking for a million tokens")
    return root


def cli_map(root: Path, tmp_path: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-P", "-m", "hybridmap", "map", str(root), "--mode", "static", "--format", "json"]
    proc = subprocess.run(
        [*command, "--cache-dir", str(tmp_path / "cache"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def notes(data: dict[str, Any], kind: str) -> list[str]:
    return [d["message"] for d in data["diagnostics"] if d["kind"] == kind]


def test_a_repository_budget_of_a_million_tokens_is_lowered_to_the_ceiling(greedy_repo: Path, tmp_path: Path) -> None:
    for args in ((), ("--conversation-tokens", "10"), ("--chat", "pkg/module_000.py")):
        data = cli_map(greedy_repo, tmp_path, *args)
        assert data["budget"] == CEILING, (args, data["budget"])  # before: 1,000,000
        assert 0.9 * CEILING < data["tokens"] <= CEILING, (args, data["tokens"])  # before: ~90k
        said = notes(data, "repository_config")
        for key in ("map_tokens", "no_chat_budget_max", "conversation_budget_start"):
            assert any(f"'{key}' = 1_000_000 is above max_tokens_ceiling=32_768" in n for n in said), said
        assert any("'max_tokens_ceiling' cannot be set by a repository" in n for n in said), said


def test_only_the_user_raises_the_ceiling(greedy_repo: Path, tmp_path: Path) -> None:
    data = cli_map(greedy_repo, tmp_path, "--max-tokens-ceiling", "40000")
    assert data["budget"] == 40_000 and data["tokens"] <= 40_000
    (tmp_path / "home" / "hybridmap").mkdir(parents=True)
    (tmp_path / "home" / "hybridmap" / "config.toml").write_text("max_tokens_ceiling = 20000\n")
    data = cli_map(greedy_repo, tmp_path)
    assert data["budget"] == 20_000 and data["tokens"] <= 20_000


def test_a_request_above_the_ceiling_gets_the_ceiling(greedy_repo: Path, tmp_path: Path) -> None:
    data = cli_map(greedy_repo, tmp_path, "--tokens", "500000")
    assert data["budget"] == CEILING and data["tokens"] <= CEILING
    assert any("500_000 tokens was asked for" in n for n in notes(data, "budget_capped"))
    with RepoMap(greedy_repo, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="static", tokens=HUGE)
        assert result.budget == CEILING and result.tokens <= CEILING
        assert [d.kind for d in result.diagnostics].count("budget_capped") == 1
        small = repo.map(mode="static", tokens=2_000)
        assert small.budget == 2_000 and "budget_capped" not in [d.kind for d in small.diagnostics]


def test_the_mcp_tools_tokens_and_default_budget_stay_under_the_ceiling(greedy_repo: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "hybridmap", "mcp", str(greedy_repo), "--cache-dir", str(tmp_path / "cache")],
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "home")},
    )

    async def main() -> list[dict[str, Any]]:
        with open(tmp_path / "server.log", "a") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                out = []
                for arguments in ({"mode": "static"}, {"mode": "static", "tokens": 100_000}):
                    result = await session.call_tool("repo_map", arguments)
                    assert not result.is_error and result.structured_content is not None
                    out.append(result.structured_content)
                return out

    default, asked = anyio.run(main)
    assert default["budget"] == CEILING and default["tokens"] <= CEILING  # before: 1,000,000 and ~90k
    assert asked["budget"] == CEILING and asked["tokens"] <= CEILING  # before: 100,000
    assert any("budget_capped" in line for line in asked["diagnostic_lines"]), asked["diagnostic_lines"]
