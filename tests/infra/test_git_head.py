"""The stamp of the files HEAD is read from: odd files refuse it, quickly, and are never followed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hybridmap.infra.git_head import head_stamp

from ..conftest import git


@pytest.fixture
def git_dir(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a")
    os.utime(root / ".git" / "HEAD", (time.time() - 10, time.time() - 10))
    return root / ".git"


def _old(path: Path) -> None:
    """Older than the racy window (and a change time we cannot set: the window is 0 below)."""
    os.utime(path, (time.time() - 10, time.time() - 10), follow_symlinks=False)


def test_a_settled_head_has_a_stamp_that_a_commit_changes(git_dir: Path) -> None:
    first = head_stamp(git_dir, 0.0)
    assert first is not None and first == head_stamp(git_dir, 0.0)
    assert head_stamp(git_dir, 3600.0) is None  # changed within the window: refused
    root = git_dir.parent
    (root / "a.py").write_text("x = 2\n")
    git(root, "commit", "-q", "-am", "b")
    assert head_stamp(git_dir, 0.0) not in (None, first)


ODD = ["fifo", "link to /dev/zero", "link outside", "directory", "ref to a ref", "dotdot ref"]


@pytest.mark.parametrize("odd", ODD)
def test_odd_files_refuse_the_stamp_without_blocking_or_following(git_dir: Path, tmp_path: Path, odd: str) -> None:
    head = git_dir / "HEAD"
    branch = head.read_text().split("ref: ", 1)[1].strip()
    loose = git_dir / branch
    if odd == "fifo":
        loose.unlink()
        os.mkfifo(loose)  # a FIFO never written to: opening it for reading would block
    elif odd == "link to /dev/zero":
        head.unlink()
        head.symlink_to("/dev/zero")
    elif odd == "link outside":
        outside = tmp_path / "elsewhere"
        outside.write_text(loose.read_text())
        _old(outside)
        loose.unlink()
        loose.symlink_to(outside)
    elif odd == "directory":
        packed = git_dir / "packed-refs"
        packed.unlink(missing_ok=True)
        packed.mkdir()
    elif odd == "ref to a ref":
        loose.write_text("ref: refs/heads/other\n")
        _old(loose)
    else:
        head.write_text("ref: refs/heads/../../../../etc/passwd\n")
        _old(head)
    started = time.monotonic()
    assert head_stamp(git_dir, 0.0) is None
    assert time.monotonic() - started < 1.0
