"""The map of a change through the CLI (``map --diff``) and a real MCP client (``repo_map diff``)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ..conftest import GitRepoFactory, git, write_files
from ..helpers import connect, error, ok, run_cli

SHAPES = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
REPORT = "from shapes import area\n\n\ndef summary(w, h):\n    return area(w, h)\n"


def _branch_with_a_change(git_repo: GitRepoFactory) -> Path:
    root = git_repo({"shapes.py": SHAPES, "report.py": REPORT, "gone.py": "def old():\n    pass\n"})
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"shapes.py": SHAPES.replace("w * h", "abs(w * h)")})
    git(root, "rm", "-q", "gone.py")
    git(root, "commit", "-qam", "area: absolute")
    return root


def test_cli_prints_the_map_of_the_branch(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _branch_with_a_change(git_repo)
    cache = str(tmp_path / "cache")
    proc = run_cli("map", str(root), "--diff", "--mode", "static", "--cache-dir", cache)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("Changes since ") and "(merge-base with main)" in lines[0]
    assert lines[1] == "Deleted: gone.py"
    assert lines[2] == "shapes.py: [changed]" and lines[3] == "~def area(w, h):"
    assert "report.py:" in proc.stdout and "def summary(w, h):" in proc.stdout

    as_json = run_cli("map", str(root), "--diff=main", "--mode", "static", "--format", "json", "--cache-dir", cache)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    schema = json.loads((resources.files("hybridmap.schema") / "map.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert data["diff"]["base_name"] == "main"
    assert data["diff"]["base"] == git(root, "rev-parse", "main").strip()
    assert {f["path"]: f["status"] for f in data["diff"]["files"]} == {"gone.py": "deleted", "shapes.py": "modified"}
    assert data["files"][0]["change"] == "modified"


def test_cli_refuses_a_revision_that_is_no_commit_in_one_line(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _branch_with_a_change(git_repo)
    proc = run_cli("map", str(root), "--diff=no-such-branch", "--mode", "static", "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "'no-such-branch' names no commit" in proc.stderr
    swapped = run_cli("map", "--diff", str(root), "--mode", "static", "--cache-dir", str(tmp_path / "c"), cwd=root)
    assert swapped.returncode == 2 and "give ROOT before --diff" in swapped.stderr


def test_mcp_repo_map_of_a_change(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio

    root = _branch_with_a_change(git_repo)

    async def body() -> tuple[str, dict[str, Any], str]:
        async with connect(root, tmp_path) as session:
            text, structured = await ok(session, "repo_map", diff="", mode="static")
            refused = await error(session, "repo_map", diff="no-such-branch", mode="static")
            return text, structured, refused

    text, structured, refused = anyio.run(body)
    assert text.startswith("Changes since ") and "~def area(w, h):" in text
    assert structured["diff"]["base_name"] == "merge-base with main"
    by_path = {f["path"]: f for f in structured["files"]}
    assert by_path["shapes.py"]["change"] == "modified" and by_path["shapes.py"]["dependents"] == 1
    assert "change" not in by_path["report.py"] and by_path["report.py"]["dependents"] == 0
    assert "names no commit" in refused
