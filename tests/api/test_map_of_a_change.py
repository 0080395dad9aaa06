"""The map of a change (``RepoMap.map(diff=...)``): real repositories, real git, a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap import MapResult, RepoMap, ServerState
from hybridmap.errors import RequestError

from ..conftest import GitRepoFactory, git, write_files
from ..helpers import fixture_repo, require

SHAPES = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
REPORT = (
    "from shapes import area\n\n\n"
    "def header():\n    return 'report'\n\n\n"
    "def summary(w, h):\n    return area(w, h)\n\n\n"
    "def footer():\n    return 'end'\n"
)
NOISE = "".join(f"def helper_{i}(x):\n    return perimeter(x, {i})\n\n\n" for i in range(30))


def _repo(git_repo: GitRepoFactory) -> Path:
    return git_repo(
        {
            "shapes.py": SHAPES,
            "report.py": REPORT,
            "noise.py": "from shapes import perimeter\n\n\n" + NOISE,
            "old_module.py": "def legacy():\n    pass\n",
        }
    )


def test_the_change_comes_first_then_the_callers_of_what_changed(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    write_files(root, {"shapes.py": SHAPES.replace("return w * h", "return abs(w * h)")})
    git(root, "rm", "-q", "old_module.py")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="static", diff="", tokens=400)
    lines = result.text.splitlines()
    assert lines[0].startswith("Changes since ") and "~ marks a changed definition" in lines[0]
    assert lines[1] == "Deleted: old_module.py"
    files = [f.path for f in result.files]
    assert files[:2] == ["shapes.py", "report.py"], result.text
    shapes, report = result.files[0], result.files[1]
    assert shapes.change == "modified"
    assert [(s.name, s.changed) for s in shapes.symbols if s.changed] == [("area", True)]
    assert "~def area(w, h):" in result.text and "~def perimeter" not in result.text
    assert report.why[0] == "uses changed 'area' (name-match)"
    assert result.text.index("def summary") < result.text.index("noise.py")
    assert report.dependents == 0 and shapes.dependents == 2  # [R:N]: noise.py and report.py
    assert result.change is not None and result.change.base_name == "merge-base with main"
    data = result.to_json()
    assert data["diff"]["files"][0]["path"] in ("old_module.py", "shapes.py")
    assert {f["path"]: f["status"] for f in data["diff"]["files"]} == {
        "old_module.py": "deleted",
        "shapes.py": "modified",
    }
    assert data["files"][0]["change"] == "modified" and "change" not in data["files"][1]
    assert [s["name"] for s in data["files"][0]["symbols"] if s.get("changed")] == ["area"]


def test_with_the_caller_boost_the_callers_follow_the_change(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    write_files(root, {"shapes.py": SHAPES.replace("return w * h", "return abs(w * h)")})
    overrides = {"cache_dir": str(tmp_path / "cache")}
    with RepoMap(root, overrides={**overrides, "diff_caller_boost": 1.0}) as repo:
        boosted = repo.map(mode="static", diff="", tokens=400)
    with RepoMap(root, overrides={**overrides, "diff_caller_boost": 0.0}) as repo:
        usual = repo.map(mode="static", diff="", tokens=400)

    def ranks(result: MapResult) -> dict[str, float]:
        return {s.name: s.rank for f in result.files if f.path == "report.py" for s in f.symbols}

    assert max(ranks(boosted), key=ranks(boosted).__getitem__) == "summary"  # the caller, first
    assert max(ranks(usual), key=ranks(usual).__getitem__) != "summary"  # off: as ranked


def test_a_map_without_a_change_asked_is_as_before(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    write_files(root, {"shapes.py": SHAPES.replace("return w * h", "return abs(w * h)")})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        plain = repo.map(mode="static", tokens=400)
    assert plain.change is None and "diff" not in plain.to_json()
    assert not plain.text.startswith("Changes since") and "~" not in plain.text
    assert all(not f.change for f in plain.files)


def test_a_commit_moves_the_change_without_any_file_event(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    write_files(root, {"shapes.py": SHAPES.replace("return w * h", "return abs(w * h)")})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        before = repo.map(mode="static", diff="", tokens=400)
        git(root, "commit", "-qam", "area: absolute")  # on main: nothing uncommitted is left
        after = repo.map(mode="static", diff="", tokens=400)
    assert before.files[0].change == "modified"
    assert after.change is not None and after.change.files == ()
    assert all(not f.change for f in after.files) and "~def" not in after.text
    assert after.text.startswith("No changes since ")
    assert after.stats.get("map_reused", 0.0) == 0.0


def test_a_bad_revision_is_a_request_error(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = _repo(git_repo)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        with pytest.raises(RequestError, match="names no commit"):
            repo.map(mode="static", diff="no-such-branch")
        assert repo.map(mode="static", diff="HEAD").change is not None  # the map still works


def test_a_server_decides_who_uses_a_changed_definition(tmp_path: Path) -> None:
    """Both stores define ``load``; app.py calls disk's. Name matching blames app.py for a change
    to memory's ``load`` too; with the server, app.py uses the changed ``load`` of disk only."""
    require("ty")
    root = fixture_repo(tmp_path, "python")
    for module in ("store/disk.py", "store/memory.py"):
        path = root / module
        path.write_text(path.read_text().replace("def load(", "def load(  # changed\n    "), encoding="utf-8")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        static = repo.map(mode="static", diff="HEAD", tokens=1024)
        hybrid = repo.map(mode="hybrid", diff="HEAD", server_wait=60, tokens=1024)
    assert hybrid.servers["python"].state is ServerState.READY
    app_static = next(f for f in static.files if f.path == "app.py")
    app_hybrid = next(f for f in hybrid.files if f.path == "app.py")
    assert "uses changed 'load' (name-match)" in app_static.why
    assert "uses changed 'load' (lsp)" in app_hybrid.why
    assert not any("name-match" in why for why in app_hybrid.why if why.startswith("uses changed"))
    changed = {f.path: [s.name for s in f.symbols if s.changed] for f in hybrid.files if f.change}
    assert changed == {"store/disk.py": ["load"], "store/memory.py": ["load"]}
