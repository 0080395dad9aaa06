"""Listing and reading: git-aware, ignore-aware, never outside the root, never crashing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridmap.errors import RootError
from hybridmap.model import FileStatus
from hybridmap.settings import Settings
from hybridmap.workspace.walk import DirectoryResolver, classify, list_files, read_source, resolve_root

from ..conftest import git, write_files


def test_git_listing_has_tracked_and_untracked_but_not_ignored(git_repo) -> None:
    root = git_repo({"a.py": "x = 1\n", ".gitignore": "build/\n*.log\n", "build/gen.py": "y = 2\n"})
    write_files(root, {"new.py": "z = 3\n", "debug.log": "noise\n"})
    listing = list_files(root, Settings())
    assert listing.source == "git"
    assert {"a.py", "new.py", ".gitignore"} <= set(listing.paths)
    assert "build/gen.py" not in listing.paths
    assert "debug.log" not in listing.paths


def test_walk_without_git_honours_nested_ignore_files(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            ".gitignore": "*.tmp\n/out/\n",
            "src/.ignore": "secret.py\n",
            "src/main.py": "",
            "src/secret.py": "",
            "src/keep.tmp": "",
            "out/x.py": "",
            "docs/secret.py": "",  # the nested .ignore applies under src/ only
            "node_modules/dep/index.js": "",
        },
    )
    listing = list_files(tmp_path, Settings())
    assert listing.source == "walk"
    assert set(listing.paths) == {".gitignore", "src/.ignore", "src/main.py", "docs/secret.py"}


#: Each read alone, and reads through one refresh pass's memo of resolved directories.
RESOLVERS = pytest.mark.parametrize("memo", [False, True], ids=["alone", "directory-memo"])


def _read(root: Path, rel: str, memo: bool, resolver: DirectoryResolver | None = None):
    return read_source(root, rel, Settings(), resolver or (DirectoryResolver(root) if memo else None))


@RESOLVERS
def test_symlink_out_of_root_is_never_read(tmp_path: Path, memo: bool) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("PASSWORD = 'hunter2'\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    result = _read(root, "link.py", memo)
    assert result.status is FileStatus.OUTSIDE_ROOT
    assert result.data == b""
    assert _read(root, "linkdir/secret.py", memo).status is FileStatus.OUTSIDE_ROOT
    # The walk does not descend into a symlinked directory at all.
    assert "linkdir/secret.py" not in list_files(root, Settings()).paths


def test_a_directory_swapped_for_a_link_out_after_the_memo_is_not_read(tmp_path: Path) -> None:
    """The memo resolved ``pkg`` to a real directory; then ``pkg`` became a symlink out of the
    root: the next file read through it in the same pass is refused (the kernel's answer for the
    opened file), never its bytes."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.py").write_text("PASSWORD = 'hunter2'\n")
    root = tmp_path / "root"
    write_files(root, {"pkg/a.py": "A = 1\n", "pkg/b.py": "B = 1\n"})
    resolver = DirectoryResolver(root)
    assert _read(root, "pkg/a.py", True, resolver).status is FileStatus.OK
    (root / "pkg").rename(root / "moved")
    (root / "pkg").symlink_to(outside, target_is_directory=True)
    result = _read(root, "pkg/b.py", True, resolver)
    assert result.status is FileStatus.OUTSIDE_ROOT and result.data == b""


@RESOLVERS
def test_symlink_inside_root_is_read(tmp_path: Path, memo: bool) -> None:
    (tmp_path / "real.py").write_text("A = 1\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.py").write_text("X = 1\n")
    (tmp_path / "alias_dir").symlink_to(tmp_path / "lib", target_is_directory=True)
    assert _read(tmp_path, "alias.py", memo).status is FileStatus.OK
    assert _read(tmp_path, "alias_dir/x.py", memo).status is FileStatus.OK


@RESOLVERS
def test_symlink_loop_and_dangling_link_are_unreadable(tmp_path: Path, memo: bool) -> None:
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    assert _read(tmp_path, "loop_a.py", memo).status is FileStatus.UNREADABLE
    assert _read(tmp_path, "dangling.py", memo).status is FileStatus.UNREADABLE


@RESOLVERS
def test_fifo_and_vanished_file(tmp_path: Path, memo: bool) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    assert _read(tmp_path, "pipe.py", memo).status is FileStatus.UNREADABLE
    assert _read(tmp_path, "gone.py", memo).status is FileStatus.VANISHED
    assert _read(tmp_path, "nodir/gone.py", memo).status is FileStatus.VANISHED


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", FileStatus.BINARY),
        (b"var a=1;" * 5000, FileStatus.MINIFIED),
        (b"def f():\n    return 1\n", FileStatus.OK),
    ],
)
def test_classify(data: bytes, status: FileStatus) -> None:
    assert classify(data, Settings()).status is status


def test_too_large(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"x = 1\n" * 1000)
    result = read_source(tmp_path, "big.py", Settings(max_file_bytes=1000))
    assert result.status is FileStatus.TOO_LARGE
    assert "1000" in result.message


def test_encodings_are_transcoded_not_dropped() -> None:
    latin1 = "NAME = 'caf\u00e9'\n".encode("latin-1")
    result = classify(latin1, Settings())
    assert result.status is FileStatus.OK and "Latin-1" in result.message
    assert result.data.decode("utf-8") == "NAME = 'caf\u00e9'\n"
    utf16 = "def f():\n    pass\n".encode("utf-16")
    result = classify(utf16, Settings())
    assert result.status is FileStatus.OK and result.data == b"def f():\n    pass\n"
    bom = b"\xef\xbb\xbfdef g():\n    pass\n"
    assert classify(bom, Settings()).data == b"def g():\n    pass\n"


def test_bad_roots() -> None:
    with pytest.raises(RootError, match="does not exist"):
        resolve_root("/nonexistent/hybridmap-root")
    with pytest.raises(RootError, match="not a directory"):
        resolve_root(__file__)


def test_git_subdirectory_lists_relative_to_root(git_repo) -> None:
    root = git_repo({"pkg/a.py": "", "other/b.py": ""})
    listing = list_files(root / "pkg", Settings())
    assert listing.paths == ("a.py",)
    git(root, "status")  # still a healthy repository


def test_root_ignored_by_an_enclosing_repository_is_walked(git_repo) -> None:
    root = git_repo({".gitignore": "vendored/\n", "a.py": ""})
    write_files(root, {"vendored/lib/x.py": "X = 1\n"})
    listing = list_files(root / "vendored" / "lib", Settings())
    assert listing.paths == ("x.py",) and listing.source == "walk"


def _bulk_before_sources() -> dict[str, str]:
    """A tree whose data sorts before its code: 300 data files in ``aaa_bulk/``, then sources."""
    files = {f"aaa_bulk/{i:04d}.dat": f"{i}\n" for i in range(300)}
    files.update({f"vendor/lib/v{i}.py": "x = 1\n" for i in range(3)})
    files.update({f"src/mod{i}.py": f"def f{i}(): pass\n" for i in range(5)})
    files["README.md"] = "# r\n"
    return files


@pytest.mark.parametrize("with_git", [True, False])
def test_max_files_keeps_sources_not_the_first_paths_in_sort_order(tmp_path: Path, git_repo, with_git) -> None:
    files = _bulk_before_sources()
    if with_git:
        root = git_repo(files)
    else:
        root = tmp_path / "plain"
        write_files(root, files)
    settings = Settings().replace(max_files=10)
    listing = list_files(root, settings, is_source=lambda rel: rel.endswith(".py"))
    assert listing.source == ("git" if with_git else "walk")
    kept = set(listing.paths)
    # Project file, then the own sources, then vendored sources, then two of the data files.
    assert {"README.md", *(f"src/mod{i}.py" for i in range(5))} <= kept
    assert {f"vendor/lib/v{i}.py" for i in range(3)} <= kept
    assert len(kept) == 10 and sum(rel.startswith("aaa_bulk/") for rel in kept) == 1
    (cut,) = [d for d in listing.diagnostics if d.kind == "too_many_files"]
    assert "309 files listed" in cut.message and "299 left out" in cut.message


@pytest.mark.parametrize("with_git", [True, False])
def test_listing_stops_at_max_listed_paths(tmp_path: Path, git_repo, with_git) -> None:
    files = _bulk_before_sources()
    if with_git:
        root = git_repo(files)
    else:
        root = tmp_path / "plain"
        write_files(root, files)
    listing = list_files(root, Settings().replace(max_listed_paths=50))
    assert len(listing.paths) == 50
    assert listing.paths == tuple(sorted(listing.paths))  # the first 50 in listing order, whole
    assert any("max_listed_paths=50" in d.message for d in listing.diagnostics)
    whole = list_files(root, Settings())
    assert len(whole.paths) == len(files)
    assert not any(d.kind == "too_many_files" for d in whole.diagnostics)


def test_max_files_shares_fairly_among_directories_of_the_same_kind(git_repo) -> None:
    """A million generated sources beside a handful of real ones (the 1M-path benchmark): every
    directory keeps an equal share, so the small ones keep everything."""
    files = {f"proj/aaa_gen/g{i:04d}.py": "x = 1\n" for i in range(400)}
    files.update({f"proj/src/mod{i}.py": "def f(): pass\n" for i in range(5)})
    files.update({f"proj/tools/t{i}.py": "def t(): pass\n" for i in range(12)})
    root = git_repo(files)
    listing = list_files(root, Settings().replace(max_files=30), is_source=lambda rel: rel.endswith(".py"))
    kept = set(listing.paths)
    assert {f"proj/src/mod{i}.py" for i in range(5)} <= kept
    assert {f"proj/tools/t{i}.py" for i in range(12)} <= kept
    assert sum(rel.startswith("proj/aaa_gen/") for rel in kept) == 13


def test_untracked_files_under_excluded_directories_are_not_listed(git_repo) -> None:
    # No .gitignore: git's --others lists the virtualenv and the dependencies; the map must not.
    root = git_repo({"app.py": "x = 1\n", "node_modules/kept/index.js": "module.exports = 1\n"})
    write_files(
        root,
        {
            ".venv/lib/python3.11/site-packages/six.py": "def f():\n    pass\n",
            "node_modules/left/index.js": "module.exports = 2\n",
            "web/__pycache__/m.py": "y = 2\n",
            "notes/todo.py": "z = 3\n",
        },
    )
    listed = set(list_files(root, Settings()).paths)
    assert listed == {"app.py", "node_modules/kept/index.js", "notes/todo.py"}  # tracked ones stay
    # The setting decides: without it, git's listing is taken as it is.
    everything = set(list_files(root, Settings().replace(walk_exclude_dirs=())).paths)
    assert ".venv/lib/python3.11/site-packages/six.py" in everything and "node_modules/left/index.js" in everything


def test_a_big_root_that_is_no_project_is_said(tmp_path: Path) -> None:
    """No git, no other version control, no project file at the top, more files than
    ``not_a_project_files``: a ``not_a_project`` diagnostic (on 93cd2d1, an MCP root of 80k
    files of site-packages was mapped for a minute without a word). A project file, another
    VCS, or fewer files: nothing said."""
    root = tmp_path / "home"
    write_files(root, {f"lib/pkg{i}/mod{j}.py": "x = 1\n" for i in range(5) for j in range(6)})
    write_files(root, {"README.md": "notes\n", "AGENTS.md": "notes\n"})  # a home may have these
    settings = Settings(not_a_project_files=20)
    said = [d for d in list_files(root, settings).diagnostics if d.kind == "not_a_project"]
    assert len(said) == 1 and "32 files" in said[0].message and "project's own directory" in said[0].message
    assert not [d for d in list_files(root, Settings(not_a_project_files=0)).diagnostics if d.kind == "not_a_project"]
    assert not [d for d in list_files(root, Settings()).diagnostics if d.kind == "not_a_project"]  # 32 < 20,000
    (root / ".hg").mkdir()
    assert not [d for d in list_files(root, settings).diagnostics if d.kind == "not_a_project"]
    (root / ".hg").rmdir()
    write_files(root, {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert not [d for d in list_files(root, settings).diagnostics if d.kind == "not_a_project"]
