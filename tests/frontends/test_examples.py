"""Every recipe of docs/agents.md runs: the examples/ scripts against a real fixture repository
(each in its own process, as a user would run it), and the MCP host config starts the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from ..helpers import PROJECT, fixture_repo

EXAMPLES = PROJECT / "examples"


def run_example(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env={**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_sync_script(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    proc = run_example("sync_script.py", str(root), "--chat", "app.py", "--tokens", "512", cwd=tmp_path)
    assert proc.stdout.startswith("Project files: README.md\nstore/disk.py:\n")
    assert "def load(path: str) -> list[str]:" in proc.stdout
    assert "/512 tokens" in proc.stderr and "python: disabled" in proc.stderr  # no wait: no server


def test_agent_loop(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    proc = run_example("agent_loop.py", str(root), "--tokens", "512", cwd=tmp_path)
    turns = [line for line in proc.stdout.splitlines() if line.startswith("turn ")]
    assert len(turns) == 3 and all("/512 tokens" in t and "model saw" in t for t in turns)
    assert "store/disk.py" in proc.stdout


def test_mcp_client(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    root = fixture_repo(tmp_path, "python")
    proc = run_example("mcp_client.py", str(root), "--wait", "30", cwd=tmp_path)
    out = proc.stdout
    assert "tools: repo_map, compare_maps, server_status, search_symbols, symbol_info, file_outline" in out
    assert "store/disk.py:" in out and "symbol: load function store/disk.py:4" in out
    assert "used by: app.py" in out
    if shutil.which("ty", path=str(Path(sys.executable).parent)):  # the server resolved it
        assert "used by: app.py lines [1, 6] (language server)" in out


def test_mcp_config_starts_the_server(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    config = json.loads((EXAMPLES / "mcp_config.json").read_text())
    assert set(config) == {"mcpServers"}
    entry = config["mcpServers"]["hybridmap"]
    assert set(entry) <= {"command", "args", "env"} and isinstance(entry["args"], list)
    assert entry["command"] == "hybridmap" and entry["args"][0] == "mcp"
    # The host runs the command from its PATH in the project directory: so do we.
    command = shutil.which(entry["command"], path=str(Path(sys.executable).parent))
    if command is None:
        pytest.skip("the hybridmap entry point is not installed next to this interpreter")
    root = fixture_repo(tmp_path, "python")

    async def main() -> set[str]:
        params = StdioServerParameters(command=command, args=entry["args"], env=entry.get("env") or None, cwd=root)
        with open(tmp_path / "server.log", "w") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                listed = {tool.name for tool in (await session.list_tools()).tools}
                result = await session.call_tool("file_outline", {"path": "app.py"})
                assert not result.is_error and result.structured_content is not None
                assert [s["name"] for s in result.structured_content["symbols"]] == ["main"]
                return listed

    assert anyio.run(main) == {
        "repo_map",
        "record_activity",
        "search_symbols",
        "find_files",
        "agent_notes",
        "dead_code",
        "find_clones",
        "symbol_info",
        "file_outline",
        "server_status",
        "compare_maps",
    }
