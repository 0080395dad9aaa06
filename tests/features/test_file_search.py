"""Fuzzy file search (hybridmap/features/file_search.py): fzf-style scores, smart case, streaming while a
tree is listed, on real directories and git repositories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hybridmap import RepoMap
from hybridmap.features.file_search import CHUNK, listing_chunks, match_path, stream_matches
from hybridmap.settings import Settings

from ..conftest import GitRepoFactory, write_files

FILES = {
    "json/decoder.py": "",
    "json/encoder.py": "",
    "tests/test_json_decode.py": "",
    "src/jsonDecoderFactory.ts": "",
    "docs/adjustments.md": "",
    "src/FooBar.go": "",
    "src/fab.go": "",
    "README.md": "",
}


def paths(query: str, candidates: list[str]) -> list[str]:
    return [m.path for s in stream_matches(query, [candidates], limit=10) if s.done for m in s.matches]


def test_scores_prefer_segment_starts_runs_and_file_names() -> None:
    every = list(FILES)
    assert paths("jsdec", every)[0] == "json/decoder.py"  # j, s at a segment start, dec after '/'
    assert paths("decoder", every)[:2] == ["json/decoder.py", "src/jsonDecoderFactory.ts"]
    assert paths("fb", every)[0] == "src/FooBar.go"  # F and B are humps; fab.go has no boundary at b
    assert paths("xyz", every) == []
    # Every term must match, anywhere: "json" in a directory, "enc" in the file name.
    assert paths("json enc", every) == ["json/encoder.py", "tests/test_json_decode.py"]
    found = match_path("jsdec", "json/decoder.py")
    assert found is not None and found.positions == (0, 1, 5, 6, 7)


def test_smart_case() -> None:
    every = list(FILES)
    assert "src/jsonDecoderFactory.ts" in paths("decoder", every)  # lowercase: case-insensitive
    assert paths("Decoder", every) == ["src/jsonDecoderFactory.ts"]  # an uppercase letter: sensitive
    assert paths("readme", every) == ["README.md"]
    assert paths("Readme", every) == []


def test_results_stream_while_the_tree_is_listed(tmp_path: Path) -> None:
    """A directory that is not a git work tree is walked: results come chunk by chunk, the
    best match first seen before the listing ends; ignored files are never listed."""
    root = tmp_path / "tree"
    many = {f"pkg{i // 100}/module_{i}.py": "" for i in range(3 * CHUNK)}
    write_files(root, {**many, "pkg0/target_handler.py": "", ".gitignore": "ignored/\n", "ignored/target_x.py": ""})
    results = list(stream_matches("trghandler", listing_chunks(root, Settings()), limit=3))
    assert len(results) >= 4 and [r.done for r in results].count(True) == 1 and results[-1].done
    assert results[0].listed < results[-1].listed == 3 * CHUNK + 2  # + target_handler.py, .gitignore
    assert results[0].matches[0].path == "pkg0/target_handler.py"  # found in the first chunk
    assert all("ignored/" not in m.path for r in results for m in r.matches)


def test_api_and_cli(git_repo: GitRepoFactory, tmp_path: Path) -> None:
    root = git_repo(FILES)
    write_files(root, {"json/untracked_decoder.py": ""})  # untracked, not ignored: listed
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}, start_servers=False) as repo:
        found = repo.find_files("decoder", limit=2)
    assert [m.path for m in found.matches] == ["json/decoder.py", "json/untracked_decoder.py"]
    assert found.total == 3 and found.listed == len(FILES) + 1 and found.done
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "files", str(root), "jsdec", "--format", "json", "--limit", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["matches"] == [
        {"path": "json/decoder.py", "score": data["matches"][0]["score"], "positions": [0, 1, 5, 6, 7]}
    ]
    assert data["done"] is True and data["listed"] == len(FILES) + 1


def test_hostile_names_are_escaped(git_repo: GitRepoFactory) -> None:
    root = git_repo({"evil\x1b[2Jname.py": "", "fine.py": ""})
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "files", str(root), "evil"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout == "evil\\x1b[2Jname.py\n"
