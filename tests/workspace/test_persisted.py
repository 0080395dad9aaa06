"""The files' states kept between processes (workspace/persisted.py): a later process reads only
what moved, and a kept file it cannot trust is read as if there were none."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.workspace.persisted import states_path

FILES = {f"pkg/mod{i}.py": f"def func_{i}(x):\n    return x + {i}\n" for i in range(6)}


def _settled(root: Path) -> Path:
    """``root`` once its files are older than ``stat_racy_seconds``: a file written just before a
    map looks is not trusted by its signature (nor kept), and a quick machine maps a fresh
    repository within that window."""
    time.sleep(0.1)
    return root


def _map(root: Path, cache: Path, **overrides: object) -> tuple[dict[str, float], str]:
    with RepoMap(root, overrides={"cache_dir": str(cache), **overrides}, start_servers=False) as repo:
        result = repo.map(mode="static", tokens=2000)
    return dict(result.stats), result.text


def test_a_later_process_reads_only_what_moved(git_repo, tmp_path: Path) -> None:
    root = _settled(git_repo(FILES))
    cache = tmp_path / "cache"
    first, text = _map(root, cache)
    assert first["files_read"] == 6
    again, same = _map(root, cache)
    assert (again["files_read"], again["files_reused"], again["files_parsed"]) == (0, 6, 0)
    assert same == text
    (root / "pkg/mod1.py").write_text("def renamed_1(x):\n    return x + 1\n")
    edited, text = _map(root, cache)
    assert edited["files_read"] == 1 and "renamed_1" in text and "func_1" not in text


def test_an_edit_that_keeps_size_and_mtime_is_read(git_repo, tmp_path: Path) -> None:
    """ctime moves with any write and cannot be set back: the kept signature no longer matches."""
    root = _settled(git_repo(FILES))
    cache = tmp_path / "cache"
    _map(root, cache)
    target = root / "pkg/mod2.py"
    before = target.stat()
    target.write_text(target.read_text().replace("func_2", "func_X"))  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns
    stats, text = _map(root, cache)
    assert stats["files_read"] == 1 and "func_X" in text


@pytest.mark.parametrize(
    "damage",
    ["garbage", "other root", "a language out of range", "cut short", "too many"],
)
def test_kept_states_that_are_not_ours_are_ignored_whole(git_repo, tmp_path: Path, damage: str) -> None:
    root = _settled(git_repo(FILES))
    cache = tmp_path / "cache"
    _, text = _map(root, cache)
    kept = states_path(cache, root.resolve())
    data = kept.read_bytes()
    n = len(FILES)
    if damage == "garbage":
        kept.write_bytes(b"HMST\x02" + b"\xff" * 64)
    elif damage == "other root":
        kept.write_bytes(data.replace(str(root.resolve()).encode(), b"/" * len(str(root.resolve()))))
    elif damage == "a language out of range":
        at = len(data) - 8 * 4 * n - 2 * n  # the language numbers, before the signatures
        kept.write_bytes(data[:at] + b"\xff\x00" + data[at + 2 :])
    elif damage == "cut short":
        kept.write_bytes(data[:-1])
    overrides = {"max_files": 5} if damage == "too many" else {}
    stats, again = _map(root, cache, **overrides)
    assert stats["files_read"] == (5 if damage == "too many" else 6)
    if not overrides:
        assert again == text


def test_off_keeps_nothing(git_repo, tmp_path: Path) -> None:
    root = _settled(git_repo(FILES))
    cache = tmp_path / "cache"
    _map(root, cache, persist_snapshot=False)
    assert not states_path(cache, root.resolve()).exists()
    stats, _ = _map(root, cache, persist_snapshot=False)
    assert stats["files_read"] == 6
