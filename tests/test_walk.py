"""Listing and reading: git-aware, ignore-aware, never outside the root, never crashing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hybridmap.errors import RootError
from hybridmap.model import FileStatus
from hybridmap.settings import Settings
from hybridmap.walk import classify, list_files, read_source, resolve_root

from .conftest import git, write_files


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


def test_symlink_out_of_root_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("PASSWORD = 'hunter2'\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    result = read_source(root, "link.py", Settings())
    assert result.status is FileStatus.OUTSIDE_ROOT
    assert result.data == b""
    # The walk does not descend into a symlinked directory at all.
    assert "linkdir/secret.py" not in list_files(root, Settings()).paths


def test_symlink_inside_root_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("A = 1\n")
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    assert read_source(tmp_path, "alias.py", Settings()).status is FileStatus.OK


def test_symlink_loop_and_dangling_link_are_unreadable(tmp_path: Path) -> None:
    os.symlink("loop_b.py", tmp_path / "loop_a.py")
    os.symlink("loop_a.py", tmp_path / "loop_b.py")
    os.symlink("missing.py", tmp_path / "dangling.py")
    assert read_source(tmp_path, "loop_a.py", Settings()).status is FileStatus.UNREADABLE
    assert read_source(tmp_path, "dangling.py", Settings()).status is FileStatus.UNREADABLE


def test_fifo_and_vanished_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    assert read_source(tmp_path, "pipe.py", Settings()).status is FileStatus.UNREADABLE
    assert read_source(tmp_path, "gone.py", Settings()).status is FileStatus.VANISHED


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
