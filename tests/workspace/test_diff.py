"""Reading a change from git (``map --diff``): real repositories, real git, hostile revisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridmap.errors import RequestError
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.inputs.change import change_focus, changed_symbols
from hybridmap.settings import Settings
from hybridmap.workspace.diff import read_change

from ..conftest import GitRepoFactory, git, write_files
from ..helpers import tags_of

LIB = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


def test_a_branch_change_against_the_merge_base(git_repo: GitRepoFactory) -> None:
    root = git_repo({"lib.py": LIB, "gone.py": "x = 1\n", "old.py": "def c():\n    pass\n", "keep.py": "k = 1\n"})
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"lib.py": LIB.replace("return 1", "return 10")})
    git(root, "rm", "-q", "gone.py")
    git(root, "mv", "old.py", "new.py")
    write_files(root, {"image.bin": b"\x00\x01\x02"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "feature work")
    git(root, "checkout", "-q", "main")
    write_files(root, {"keep.py": "k = 2\n"})  # main moves on: not part of the branch's change
    git(root, "commit", "-qam", "main work")
    git(root, "checkout", "-q", "feature")
    write_files(root, {"lib.py": LIB.replace("return 1", "return 10").replace("return 2", "return 3")})
    write_files(root, {"fresh.py": "def z():\n    pass\n"})  # untracked: added

    change = read_change(root, "", Settings())

    assert change.base_name == "merge-base with main"
    assert change.base == git(root, "merge-base", "main", "HEAD").strip()
    by_path = {f.path: f for f in change.files}
    assert set(by_path) == {"lib.py", "gone.py", "new.py", "image.bin", "fresh.py"}  # not keep.py
    assert by_path["lib.py"].status == "modified"
    assert by_path["lib.py"].lines == ((2, 2), (6, 6))  # the committed edit and the uncommitted one
    assert (by_path["lib.py"].added, by_path["lib.py"].deleted) == (2, 2)
    assert (by_path["gone.py"].status, by_path["gone.py"].deleted) == ("deleted", 1)
    assert (by_path["new.py"].status, by_path["new.py"].old_path) == ("renamed", "old.py")
    assert not by_path["new.py"].whole and by_path["new.py"].lines == ()  # a pure rename changed no line
    assert by_path["image.bin"].status == "added" and by_path["image.bin"].whole
    assert by_path["fresh.py"].status == "added" and by_path["fresh.py"].whole
    assert change.complete


def test_on_the_default_branch_the_change_is_what_is_not_committed(git_repo: GitRepoFactory) -> None:
    root = git_repo({"lib.py": LIB})
    assert read_change(root, "", Settings()).files == ()
    write_files(root, {"lib.py": LIB + "\n\ndef c():\n    return 3\n"})
    change = read_change(root, "", Settings())
    assert change.base == git(root, "rev-parse", "HEAD").strip()
    assert [(f.path, f.lines) for f in change.files] == [("lib.py", ((7, 10),))]


def test_a_root_below_the_top_sees_only_its_own_files(git_repo: GitRepoFactory) -> None:
    root = git_repo({"pkg/lib.py": LIB, "other/x.py": "x = 1\n"})
    write_files(root, {"pkg/lib.py": LIB.replace("return 2", "return 5"), "other/x.py": "x = 2\n"})
    change = read_change(root / "pkg", "HEAD", Settings())
    assert [(f.path, f.lines) for f in change.files] == [("lib.py", ((6, 6),))]


def test_a_repository_without_a_commit_compares_with_the_empty_tree(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(root, {"a.py": "def a():\n    pass\n"})
    git(root, "init", "-q", "-b", "main")
    change = read_change(root, "", Settings())
    assert "empty tree" in change.base_name
    assert [(f.path, f.status) for f in change.files] == [("a.py", "added")]


@pytest.mark.parametrize(
    "revision",
    ["--output=/tmp/hybridmap-diff-owned", "-p", "HEAD\x1b[31m", "no-such-branch", "x" * 300, "HEAD:lib.py"],
)
def test_a_revision_that_is_not_a_commit_is_refused_and_never_an_option(
    git_repo: GitRepoFactory, revision: str
) -> None:
    root = git_repo({"lib.py": LIB})
    with pytest.raises(RequestError) as caught:
        read_change(root, revision, Settings())
    assert "\x1b" not in str(caught.value)
    assert not Path("/tmp/hybridmap-diff-owned").exists()


def test_no_repository_is_a_request_error(tmp_path: Path) -> None:
    write_files(tmp_path / "plain", {"a.py": "x = 1\n"})
    with pytest.raises(RequestError, match="git repository"):
        read_change(tmp_path / "plain", "", Settings())


def test_the_file_limit_cuts_the_change_and_says_so(git_repo: GitRepoFactory) -> None:
    root = git_repo({f"m{i}.py": f"x = {i}\n" for i in range(6)})
    write_files(root, {f"m{i}.py": f"x = {i + 1}\n" for i in range(6)})
    change = read_change(root, "HEAD", Settings(diff_max_files=3))
    assert len(change.files) == 3 and not change.complete


def test_hostile_paths_come_back_as_git_spells_them(git_repo: GitRepoFactory) -> None:
    weird = "we\x1bird\nname.py"
    root = git_repo({weird: "x = 1\n", "plain.py": "y = 1\n"})
    write_files(root, {weird: "x = 2\n"})
    change = read_change(root, "HEAD", Settings())
    assert [(f.path, f.lines) for f in change.files] == [(weird, ((1, 1),))]


CLASS = (
    "class Shape:\n"  # 0
    "    sides = 0\n"  # 1
    "\n"
    "    def area(self):\n"  # 3
    "        return 0\n"  # 4
    "\n"
    "    def name(self):\n"  # 6
    "        return 'shape'\n"  # 7
)


def test_a_changed_definition_is_the_innermost_one_a_changed_line_is_in() -> None:
    tags = tags_of(LanguageRegistry.load(), {"shape.py": CLASS})["shape.py"]
    names = [s.name for s in tags.symbols]

    def changed(*ranges: tuple[int, int]) -> list[str]:
        return [names[i] for i in changed_symbols(tags, list(ranges))]

    assert changed((4, 4)) == ["area"]  # inside a method: the method, not its class
    assert changed((1, 1)) == ["Shape"]  # a class attribute: the class
    assert changed((1, 1), (7, 7)) == ["Shape", "name"]
    assert changed((0, 1 << 62)) == ["Shape", "area", "name"]  # everywhere (an added file)
    assert changed((2, 2)) == ["Shape"]  # a blank line inside the class, outside its methods


def test_the_focus_leaves_out_what_the_map_cannot_show(git_repo: GitRepoFactory) -> None:
    root = git_repo({"shape.py": CLASS, "gone.py": "x = 1\n"})
    write_files(root, {"shape.py": CLASS.replace("return 0", "return 1"), "notes.txt": "hello\n"})
    git(root, "rm", "-q", "gone.py")
    change = read_change(root, "HEAD", Settings())
    tags = tags_of(LanguageRegistry.load(), {"shape.py": CLASS.replace("return 0", "return 1")})
    focus = change_focus(change, tags)
    assert dict(focus.status) == {"shape.py": "modified"}  # notes.txt: no tags
    assert focus.deleted == ("gone.py",)
    assert [tags["shape.py"].symbols[i].name for i in focus.symbols["shape.py"]] == ["area"]
