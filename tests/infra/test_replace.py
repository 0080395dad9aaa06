"""A kept file replaced whole and read back within its bound."""

from __future__ import annotations

import os
import stat
import tracemalloc
from pathlib import Path

from hybridmap.infra.replace import read_bounded, replace_file


def test_a_replaced_file_is_private_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "kept" / "states.json"
    replace_file(path, [b"one ", b"two"])
    replace_file(path, [b"three"])
    assert path.read_bytes() == b"three"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert sorted(os.listdir(path.parent)) == ["states.json"]  # no temporary file left


def test_a_file_over_its_bound_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "kept.bin"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    assert read_bounded(path, 99) is None
    assert read_bounded(tmp_path / "absent.bin", 100) is None


def test_the_buffer_is_the_files_size_not_the_bound(tmp_path: Path) -> None:
    # A lexicon's bound is max_files x 32 KiB (6 GB at 200,000 files): reading up to the bound
    # asked the allocator for all of it, a MemoryError where memory is not overcommitted.
    path = tmp_path / "kept.bin"
    path.write_bytes(b"y" * 1000)
    tracemalloc.start()
    try:
        assert read_bounded(path, 2**30) == b"y" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
