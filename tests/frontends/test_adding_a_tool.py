"""``docs/design.md`` "Adding a tool", done as it says on a copy of the package: a feature
module, one API method, the generated facade, one registration per front end, and nothing else.
The new tool then answers through the CLI, the sync facade and a real MCP client with its
feature's document, and git shows exactly the files the guide lists.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio

from ..helpers import PROJECT, connect, git, ok, repository

FEATURE = '''\
"""The longest files, by lines: a tool added by the test that follows the guide."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from typing_extensions import TypedDict

from ..infra.sanitize import escape_path
from ..model import FileTags


class LongFileJson(TypedDict):
    path: str
    lines: int


class LongestFilesJson(TypedDict):
    files: list[LongFileJson]
    total: int


@dataclass(frozen=True, slots=True)
class LongestFiles:
    files: tuple[tuple[str, int], ...]
    total: int

    def to_json(self) -> LongestFilesJson:
        return {"files": [{"path": escape_path(p), "lines": n} for p, n in self.files], "total": self.total}


def longest_files(tags: Mapping[str, FileTags], limit: int) -> LongestFiles:
    ranked = sorted(tags.items(), key=lambda item: (-item[1].line_count, item[0]))
    return LongestFiles(tuple((path, t.line_count) for path, t in ranked[:limit]), len(tags))
'''

API_METHOD = '''\
    async def longest_files(self, *, limit: int = 10) -> LongestFiles:
        """The files with the most lines, longest first."""
        snapshot = await self._looked_up()
        return longest_files(self._engine.view(snapshot).tags, limit)

'''

CLI_COMMAND = '''

@click.command("longest")
@ROOT
@click.option("--limit", default=10, show_default=True)
@FORMAT
@_cache_options
def longest_command(root: str, limit: int, fmt: str, cache_dir: str | None, no_cache: bool) -> None:
    """The files with the most lines."""
    found = _ask(root, cache_dir, no_cache, lambda repo: repo.longest_files(limit=limit))
    if fmt == "json":
        click.echo(json_dumps(found.to_json()))
        return
    for path, lines in found.files:
        click.echo(f"{escape_path(path)}: {lines}")


TOOL_COMMANDS.append(longest_command)
'''

MCP_TOOLS_FUNCTION = '''

async def longest_files(state: State, limit: int = 10) -> LongestFilesJson:
    """The longest files (:mod:`hybridmap.features.longest_files`)."""
    return (await state.repo.longest_files(limit=limit)).to_json()
'''

MCP_REGISTRATION = '''

def _register_longest_files_tool(server: MCPServer[Any], state: State) -> None:
    @server.tool(title="Longest files", annotations=_annotations("Longest files"))
    async def longest_files(
        limit: Annotated[int, Field(ge=1, le=100, description="Most files returned.")] = 10,
    ) -> Annotated[CallToolResult, LongestFilesJson]:
        """The files with the most lines, longest first."""
        found = await _call("longest_files", tools.longest_files(state, limit))
        return _result(json_dumps(found, indent=1), found)
'''


def insert(path: Path, before: str, text: str) -> None:
    source = path.read_text()
    assert source.count(before) == 1, f"{path.name}: the guide's anchor {before!r} moved"
    path.write_text(source.replace(before, text + before))


def add_the_tool(project: Path) -> None:
    package = project / "hybridmap"
    # 1. The feature: the work and its result, with to_json() and its TypedDict.
    (package / "features" / "longest_files.py").write_text(FEATURE)
    # 2. One method on AsyncRepoMap; the generator gives RepoMap the same.
    repo = package / "api" / "repo.py"
    insert(
        repo, "from ..languages.registry import", "from ..features.longest_files import LongestFiles, longest_files\n"
    )
    insert(repo, "    def file_edited(self, path: str) -> None:", API_METHOD)
    facade = subprocess.run(
        [sys.executable, str(project / "scripts" / "gen_sync_facade.py")], capture_output=True, text=True, timeout=60
    )
    assert facade.returncode == 0, facade.stderr
    # 3. One registration per front end.
    cli = package / "frontends" / "cli" / "tools.py"
    cli.write_text(cli.read_text() + CLI_COMMAND)
    mcp_tools = package / "frontends" / "mcp" / "tools.py"
    insert(mcp_tools, "from ...infra.sanitize import", "from ...features.longest_files import LongestFilesJson\n")
    mcp_tools.write_text(mcp_tools.read_text() + MCP_TOOLS_FUNCTION)
    server = package / "frontends" / "mcp" / "server.py"
    insert(server, "from ...infra.sanitize import", "from ...features.longest_files import LongestFilesJson\n")
    insert(server, "    _register_session_tools(server, state)\n", "    _register_longest_files_tool(server, state)\n")
    server.write_text(server.read_text() + MCP_REGISTRATION)


def test_a_tool_is_one_feature_module_one_method_and_one_registration_per_front_end(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT / "hybridmap", project / "hybridmap", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "scripts").mkdir()
    shutil.copy(PROJECT / "scripts" / "gen_sync_facade.py", project / "scripts")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "before")

    add_the_tool(project)

    touched = git(project, "status", "--porcelain", "--untracked-files=all").split("\n")
    assert sorted(line[3:] for line in touched if line) == [
        "hybridmap/api/repo.py",
        "hybridmap/api/sync.py",
        "hybridmap/features/longest_files.py",
        "hybridmap/frontends/cli/tools.py",
        "hybridmap/frontends/mcp/server.py",
        "hybridmap/frontends/mcp/tools.py",
    ]
    check = subprocess.run(
        [sys.executable, str(project / "scripts" / "gen_sync_facade.py"), "--check"], capture_output=True, timeout=60
    )
    assert check.returncode == 0

    files = {"short.py": "x = 1\n", "long.py": "".join(f"def f{i}():\n    return {i}\n" for i in range(30))}
    root = repository(tmp_path, files=files)
    # `python -m hybridmap` from the copy's directory runs the copy.
    cli = subprocess.run(
        [sys.executable, "-m", "hybridmap", "longest", str(root), "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    want = json.loads(cli.stdout)
    assert [f["path"] for f in want["files"]] == ["long.py", "short.py"] and want["total"] == 2
    assert want["files"][0]["lines"] > 30 * 2 > want["files"][1]["lines"]

    sync = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from hybridmap import RepoMap\nwith RepoMap({str(root)!r}) as r: print(r.longest_files())",
        ],
        capture_output=True,
        text=True,
        cwd=project,
        timeout=120,
    )
    assert sync.returncode == 0 and f"('long.py', {want['files'][0]['lines']})" in sync.stdout, sync.stderr

    async def over_mcp() -> tuple[list[str], dict]:
        async with connect(root, tmp_path, output_schemas=True, cwd=project) as session:
            listed = await session.list_tools()
            longest = next(t for t in listed.tools if t.name == "longest_files")
            assert longest.output_schema is not None and set(longest.output_schema["properties"]) == {"files", "total"}
            _, found = await ok(session, "longest_files", limit=5)
            return [t.name for t in listed.tools], found

    names, found = anyio.run(over_mcp)
    assert "longest_files" in names and "search_symbols" in names
    assert found == want
