"""Hostile ignore files in a directory that is not a git work tree (issue 23, finding 4.1).

Such a directory is listed by hybridmap's own walk, which honours every ``.gitignore`` and
``.ignore`` it finds: the repository writes them. Each case is a real directory mapped through
the real CLI in a subprocess with a deadline (a hang fails the test instead of hanging it):

* a pattern whose regular expression backtracks exponentially, against a 40-character name;
* lines pathspec raised on (a bare ``!``, a trailing ``\\``, a reversed range), which ended the
  map with "no map could be made";
* a FIFO named ``.gitignore`` (the walk blocked opening it), and an ``.ignore`` that is a
  symbolic link out of the root (its patterns steered the listing).

Each asserts the map came back in time and listed exactly the files the patterns select.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

DEADLINE = 60.0
SOURCE = "def helper_{i}(value):\n    return value\n"

#: Issue 23's pattern, and one like it that also selects a Python file.
EXPONENTIAL = "*a*a*a*a*a*a*a*a*a*a*a*ab"
EXPONENTIAL_PY = "*a*a*a*a*a*a*a*a*a*a*a*ab.py"
#: 40 characters, almost matching both: each takes the old regex hours to refuse.
LONG_NAME = "a" * 37 + ".py"
#: Matches EXPONENTIAL_PY (twelve a's, then b.py): must be left out.
IGNORED_NAME = "a" * 20 + "b.py"


def hybridmap(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The real CLI; (the process, seconds). A hang past DEADLINE fails the test."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "XDG_CONFIG_HOME": str(home)}
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "hybridmap", *args],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hybridmap {args[0]} did not return within {DEADLINE:.0f} s")
    return proc, time.monotonic() - started


def map_json(tmp_path: Path, root: Path) -> tuple[dict[str, Any], float]:
    proc, seconds = hybridmap(
        tmp_path, "map", str(root), "--mode", "static", "--format", "json", "--cache-dir", str(tmp_path / "cache")
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), seconds


def listed(tmp_path: Path, root: Path) -> set[str]:
    """Every file the file search's walk lists (``hybridmap files``: the other walk of the code)."""
    proc, _ = hybridmap(tmp_path, "files", str(root), "", "--limit", "10000", "--format", "json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {match["path"] for match in json.loads(proc.stdout)["matches"]}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_an_exponential_gitignore_pattern_does_not_hang_the_walk(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            ".gitignore": f"{EXPONENTIAL}\n{EXPONENTIAL_PY}\n",
            LONG_NAME: SOURCE.format(i=1),
            IGNORED_NAME: SOURCE.format(i=2),
            "aaaaaaaaaaaaab": "ignored by the first pattern\n",
            f"sub/{LONG_NAME}": SOURCE.format(i=3),
        },
    )
    data, seconds = map_json(tmp_path, root)
    # Before: killed at the deadline (pathspec: 17 s for 10 stars, x4 per star; this has 12).
    assert seconds < 30, seconds
    paths = {f["path"] for f in data["files"]}
    assert paths == {LONG_NAME, f"sub/{LONG_NAME}"}, paths
    assert "helper_1" in data["text"] and "helper_2" not in data["text"]
    assert listed(tmp_path, root) == {".gitignore", LONG_NAME, f"sub/{LONG_NAME}"}


def test_gitignore_lines_pathspec_raised_on_do_not_stop_the_map(tmp_path: Path) -> None:
    root = write(
        tmp_path / "repo",
        {
            # A bare '!', a trailing backslash, a reversed range: git skips or never matches them.
            ".gitignore": "!\nbuild\\\n[z-a].py\nignored.py\n",
            "main.py": SOURCE.format(i=1),
            "ignored.py": SOURCE.format(i=2),
            "z.py": SOURCE.format(i=3),  # [z-a] holds its 'z' (git's wildmatch)
        },
    )
    data, _ = map_json(tmp_path, root)  # before: exit 1, "no map could be made"
    assert {f["path"] for f in data["files"]} == {"main.py"}
    assert listed(tmp_path, root) == {".gitignore", "main.py"}


def test_a_fifo_or_a_link_as_ignore_file_neither_hangs_nor_steers_the_walk(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", {"patterns": "*.py\n"})
    root = write(tmp_path / "repo", {"main.py": SOURCE.format(i=1), "lib/util.py": SOURCE.format(i=2)})
    os.mkfifo(root / ".gitignore")  # before: the walk blocked opening it, for good
    (root / "lib" / ".ignore").symlink_to(outside / "patterns")  # before: its '*.py' hid lib/
    data, seconds = map_json(tmp_path, root)
    assert seconds < 30, seconds
    assert {f["path"] for f in data["files"]} == {"main.py", "lib/util.py"}
    unread = {d["path"]: d["message"] for d in data["diagnostics"] if d["kind"] == "unreadable"}
    assert "not a regular file" in unread[".gitignore"], unread
    assert "symbolic link" in unread["lib/.ignore"], unread
    assert listed(tmp_path, root) == {"main.py", "lib/util.py", ".gitignore", "lib/.ignore"}
