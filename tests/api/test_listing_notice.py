"""A listing's diagnostics reach ``notice`` as soon as the listing ends, before a file is read
(issue 25: an MCP root that is not a project mapped site-packages for a minute, and the warning
came only when that map ended)."""

from __future__ import annotations

import threading
from pathlib import Path

from hybridmap import RepoMap
from hybridmap.model import Diagnostic

from ..helpers import write_files


def test_not_a_project_is_noticed_before_any_file_is_read(tmp_path: Path) -> None:
    root = tmp_path / "home"
    write_files(root, {f"lib/pkg{i}/mod{j}.py": f"def f{j}():\n    return {j}\n" for i in range(5) for j in range(6)})
    events: list[str] = []
    noticed: list[Diagnostic] = []
    lock = threading.Lock()

    def notice(note: Diagnostic) -> None:
        with lock:
            noticed.append(note)
            events.append(f"notice {note.kind}")

    def progress(phase: str, done: int, total: int) -> None:
        with lock:
            events.append(phase)

    overrides = {"not_a_project_files": 20, "cache_dir": str(tmp_path / "cache")}
    with RepoMap(root, overrides=overrides, progress=progress, notice=notice, start_servers=False) as repo:
        result = repo.map(tokens=512, mode="static")
    assert [n.kind for n in noticed] == ["not_a_project"], noticed
    assert "30 files" in noticed[0].message
    said = events.index("notice not_a_project")
    assert "parsing" in events and said < events.index("parsing"), events  # before any file is parsed
    assert said < events.index("listing"), events  # and before the listing's own progress
    assert noticed[0] in result.diagnostics  # the map says it too


def test_a_project_is_not_noticed(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_files(root, {"pyproject.toml": "[project]\nname = 'x'\n"})
    write_files(root, {f"pkg/mod{j}.py": "x = 1\n" for j in range(30)})
    noticed: list[Diagnostic] = []
    overrides = {"not_a_project_files": 20, "cache_dir": str(tmp_path / "cache")}
    with RepoMap(root, overrides=overrides, notice=noticed.append, start_servers=False) as repo:
        repo.map(tokens=512, mode="static")
    assert not [n for n in noticed if n.kind == "not_a_project"], noticed
