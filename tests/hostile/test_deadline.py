"""Hostile repositories against the total parse deadline: many pathological files must not add
up their per-file limits.

Each file below makes the Python tag query run until the per-file limit stops it (400 KB of
nested parentheses: 187 s unbounded, measured). With ``parse_timeout_seconds = 1``, four of them
cost 4 s; ``parse_deadline_seconds`` bounds the whole parse, names what did not fit, and the next
maps go on from the cache until every file is settled. In-process and with worker processes, on a
real git repository, through the API and the real CLI.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.model import MapResult

from ..conftest import git

PATHOLOGICAL = "x = " + "(\n" * 200_000
FILE_LIMIT = 1.0
DEADLINE = 1.5
SLACK = 2.0
"""Seconds allowed over the deadline: listing, reading, ranking and (for workers) start-up."""
BAD_FILES = {1: 4, 2: 8}
"""Pathological files per case, by worker count: more than fit in the deadline (two workers settle
about two files each before it)."""


def hostile_repo(root: Path, bad_files: int = BAD_FILES[1]) -> Path:
    root.mkdir()
    for i in range(bad_files):
        (root / f"nested_{i}.py").write_text(f"# {i}\n" + PATHOLOGICAL)  # distinct: parsed one by one
    for i in range(6):
        (root / f"fine_{i}.py").write_text(f"def fine_function_{i}():\n    pass\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "pathological")
    return root


def map_once(root: Path, cache: Path, workers: int) -> tuple[MapResult, float]:
    overrides = {
        "cache_dir": str(cache),
        "parse_timeout_seconds": FILE_LIMIT,
        "parse_deadline_seconds": DEADLINE,
        "parse_workers": workers,
        "parallel_parse_min_files": 2 if workers > 1 else 10_000,
    }
    started = time.monotonic()
    with RepoMap(root, overrides=overrides, start_servers=False) as repo:
        result = repo.map(mode="static", tokens=4096)
    return result, time.monotonic() - started


def deadline_message(result: MapResult) -> str:
    found = [d.message for d in result.diagnostics if d.kind == "parse_deadline"]
    assert len(found) <= 1
    return found[0] if found else ""


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "workers"])
def test_the_parse_deadline_bounds_a_map_and_the_next_maps_go_on(tmp_path: Path, workers: int) -> None:
    bad_files = BAD_FILES[workers]
    root = hostile_repo(tmp_path / "repo", bad_files)
    cache = tmp_path / "cache"
    first, seconds = map_once(root, cache, workers)
    assert seconds < DEADLINE + FILE_LIMIT + SLACK, f"{seconds:.1f} s"  # not bad_files x FILE_LIMIT
    message = deadline_message(first)
    deferred = int(first.stats["files_deferred"])
    assert deferred >= 1 and message.startswith(f"{deferred} of ")
    assert "parse_deadline_seconds=1.5" in message and "in the background" in message and "next map" in message
    settled_now = {d.path for d in first.diagnostics if d.kind in ("partial_parse", "parse_timeout")}
    named = {f"nested_{i}.py" for i in range(bad_files) if f"nested_{i}.py" in message}
    assert named == {f"nested_{i}.py" for i in range(bad_files)} - settled_now and len(named) == deferred
    shown = {f.path for f in first.files}
    assert {f"fine_{i}.py" for i in range(6)} <= shown  # smallest first: every ordinary file made it
    # The next maps parse only what is left (the rest is cached) until nothing is.
    left = deferred
    for _ in range(bad_files):
        if not left:
            break
        again, seconds = map_once(root, cache, workers)
        assert seconds < DEADLINE + FILE_LIMIT + SLACK
        assert again.stats["files_parsed"] == left  # only what the last map could not parse
        assert again.stats["files_deferred"] < left  # and every map settles at least one
        left = int(again.stats["files_deferred"])
    assert left == 0
    settled, _ = map_once(root, cache, workers)
    assert settled.stats["files_parsed"] == 0 and not deadline_message(settled)
    assert {d.path for d in settled.diagnostics if d.kind == "partial_parse"} == {
        f"nested_{i}.py" for i in range(bad_files)
    }  # each cut by its own limit, once, and cached


def _overrides(cache: Path) -> dict[str, object]:
    return {
        "cache_dir": str(cache),
        "parse_timeout_seconds": FILE_LIMIT,
        "parse_deadline_seconds": DEADLINE,
        "parse_workers": 1,
        "parallel_parse_min_files": 10_000,
    }


@pytest.mark.asyncio
async def test_a_long_lived_map_parses_what_the_deadline_left_in_the_background(tmp_path: Path) -> None:
    """What the deadline left out is parsed after the map, in the background: listeners hear
    ``answers_improved`` from tree-sitter, and the next map has every file from the cache."""
    root = hostile_repo(tmp_path / "repo")
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path / "cache")) as repo:
        events = repo.events()
        first = await repo.map(mode="static", tokens=4096)
        assert first.stats["files_deferred"] >= 1
        event = await asyncio.wait_for(anext(events), BAD_FILES[1] * FILE_LIMIT + 10)
        assert (event.kind, event.sources) == ("answers_improved", ("tree-sitter",))
        second = await repo.map(mode="static", tokens=4096)
    assert second.stats["files_deferred"] == 0 and second.stats["files_parsed"] == 0, second.stats
    assert not deadline_message(second)
    assert {d.path for d in second.diagnostics if d.kind == "partial_parse"} == {
        f"nested_{i}.py" for i in range(BAD_FILES[1])
    }


@pytest.mark.asyncio
async def test_a_watched_map_goes_on_parsing_what_the_deadline_left(tmp_path: Path) -> None:
    """Under a watch nothing is re-read when nothing moved; the files the deadline left out are
    parsed all the same: the next map (asked before any background parse starts) settles more,
    and is not the last map handed back again."""
    root = hostile_repo(tmp_path / "repo")
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path / "cache")) as repo:
        first = await repo.map(mode="static", tokens=4096)
        left = first.stats["files_deferred"]
        assert left >= 1
        await asyncio.wait_for(repo.watch(), 20)
        second = await repo.map(mode="static", tokens=4096)
    assert second.stats["map_refreshed"] == 0  # the watch: nothing listed
    assert second.stats["files_deferred"] < left, second.stats  # a reused result would say `left`


def test_the_cli_reports_the_deadline_and_exits_0(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path / "repo")
    config = tmp_path / "config" / "hybridmap"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(f"parse_timeout_seconds = {FILE_LIMIT}\nparse_deadline_seconds = {DEADLINE}\n")
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "hybridmap",
            "map",
            str(root),
            "--mode",
            "static",
            "--format",
            "json",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    seconds = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    kinds = {d["kind"] for d in data["diagnostics"]}
    assert "parse_deadline" in kinds and "fine_function_0" in data["text"]
    assert seconds < DEADLINE + FILE_LIMIT + SLACK + 1.0, f"{seconds:.1f} s"
