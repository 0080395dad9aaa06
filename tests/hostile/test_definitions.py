"""Generated files with a definition per line: each file is under ``max_file_bytes``, but every
definition costs its signature, the cache, the graph and the ranking (ten files of 90,000 took
75 s and 1 GB cold). ``max_definitions_per_file`` keeps the first ones of a file, says so per
file, and the cache, keyed by the setting, never serves a map the tags of another value. Real
files in a real git repository, the API in-process and with parse workers, and the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hybridmap import RepoMap
from hybridmap.model import MapResult

from ..conftest import git, write_files

GENERATED = ("gen_a.py", "gen_b.py", "gen_c.py")


def generated(prefix: str, count: int) -> str:
    """``count`` one-line module-level definitions, ``<prefix>00000 = 0`` and on."""
    return "".join(f"{prefix}{i:05d} = {i}\n" for i in range(count))


def repository(root: Path, per_file: int) -> Path:
    files = {name: generated(name[4], per_file) for name in GENERATED}
    files["app.py"] = "def main():\n    return a00007 + c00999\n"
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "generated")
    return root


def map_with(root: Path, cache: Path, cap: int | None, workers: int = 1) -> tuple[MapResult, dict[str, int]]:
    """One map in a fresh RepoMap (as a new process would), and the symbols kept per file."""
    overrides: dict[str, object] = {"cache_dir": str(cache), "parse_workers": workers}
    if workers > 1:
        overrides["parallel_parse_min_files"] = 2
    if cap is not None:
        overrides["max_definitions_per_file"] = cap
    with RepoMap(root, overrides=overrides, start_servers=False) as repo:
        result = repo.map(mode="static", tokens=2048)
        counts = {path: len(tags.symbols) for path, tags in repo.tags().items()}
    return result, counts


def capped(result: MapResult) -> dict[str, str]:
    found = [d for d in result.diagnostics if d.kind == "too_many_definitions"]
    assert len(found) == len({d.path for d in found}), "one diagnostic per capped file"
    return {d.path: d.message for d in found}


def test_definitions_per_file_are_capped_and_said_and_the_cache_follows_the_setting(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", 1_200)
    cache = tmp_path / "cache"

    first, counts = map_with(root, cache, 1_000, workers=2)  # parsed in worker processes
    assert all(counts[name] == 1_000 for name in GENERATED), counts
    assert counts["app.py"] == 1
    messages = capped(first)
    assert set(messages) == set(GENERATED)
    assert messages["gen_a.py"] == (
        "1200 definitions > max_definitions_per_file=1000: the first 1000 are mapped, "
        "those starting from line 1001 on are not"
    )
    assert "main" in first.text

    # Another value: not the cached tags of the first. The cache is keyed by the setting, so
    # every file is parsed again.
    wider, counts = map_with(root, cache, 1_100)
    assert all(counts[name] == 1_100 for name in GENERATED) and wider.stats["files_parsed"] == 4
    assert "max_definitions_per_file=1100" in capped(wider)["gen_b.py"]
    unbounded, counts = map_with(root, cache, None)  # the default, 20,000: nothing cut
    assert all(counts[name] == 1_200 for name in GENERATED) and not capped(unbounded)

    # Back to the first value: from the cache, with its diagnostics.
    again, counts = map_with(root, cache, 1_000)
    assert again.stats["files_parsed"] == 0 and again.stats["cache_hits"] >= 3
    assert all(counts[name] == 1_000 for name in GENERATED) and capped(again) == messages


def test_the_default_cap_holds_and_a_repository_cannot_lift_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_files(
        root,
        {
            "huge_table.py": generated("t", 20_500),
            "app.py": "def main():\n    return t00001\n",
            "hybridmap.toml": "max_definitions_per_file = 10000000\n",
        },
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a table")
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", str(root), "--mode", "static", "--format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    found = [d for d in data["diagnostics"] if d["kind"] == "too_many_definitions"]
    assert [d["path"] for d in found] == ["huge_table.py"]
    assert found[0]["message"].startswith("20500 definitions > max_definitions_per_file=20000: the first 20000")
    refused = [d["message"] for d in data["diagnostics"] if d["kind"] == "repository_config"]
    assert len(refused) == 1 and "max_definitions_per_file" in refused[0]
