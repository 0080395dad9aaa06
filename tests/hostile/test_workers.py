"""Hostile repositories against the parse workers: mapping a repository from inside it must not
import its code.

A cold parse of enough files (``parallel_parse_min_files``) starts worker processes. Each test
builds a real git repository whose top level shadows our package (``hybridmap/__init__.py``) or
the standard library modules a worker imports (``pickle.py``, ``struct.py``, ``typing.py``...),
each writing a marker when imported, and runs the real CLI from inside it. The eval's Aider
runner, the other Python process we start with a repository as its cwd, is checked the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hybridmap.settings import Settings

from ..conftest import git

#: Modules a parse worker imports (directly or through tree-sitter and our package).
SHADOWED = (
    "hybridmap/__init__.py",
    "hybridmap/sources/__init__.py",
    "pickle.py",
    "struct.py",
    "typing.py",
    "json.py",
    "dataclasses.py",
    "enum.py",
    "tree_sitter.py",
    "numpy.py",
)
DEADLINE = 120.0


def hostile_repo(root: Path, marker: Path, files: int) -> Path:
    """A repository of ``files`` ordinary Python files plus modules that shadow what workers import."""
    root.mkdir()
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    for rel in SHADOWED:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(payload + "def shadowed_module():\n    pass\n")
    for i in range(files):
        (root / f"module_{i:04d}.py").write_text(f"def function_{i:04d}(value):\n    return value + {i}\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    return root


def map_from_inside(root: Path, cache: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    # -P: the interpreter itself must not put the cwd first for `-m` (what the `hybridmap` console
    # script does anyway); what we test is the processes *hybridmap* starts.
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "hybridmap",
            "map",
            ".",
            "--mode",
            "static",
            "--format",
            "json",
            "--tokens",
            "4096",
            "--cache-dir",
            str(cache),
            *args,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    return proc, time.monotonic() - started


def test_workers_started_inside_a_repository_do_not_import_its_modules(tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    files = Settings().parallel_parse_min_files + 20  # enough for worker processes
    root = hostile_repo(tmp_path / "repo", marker, files)
    proc, seconds = map_from_inside(root, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"repository code ran: {marker.read_text()!r}"
    data = json.loads(proc.stdout)
    assert data["stats"]["parse_workers"] >= 2  # the workers did the parse...
    assert data["stats"]["files_parsed"] >= files
    assert data["stats"]["parse_fallback_files"] == 0  # ...all of it: nothing was re-parsed in-process
    assert not [d for d in data["diagnostics"] if d["kind"] == "parse_error"]
    assert "function_" in data["text"]
    assert seconds < DEADLINE


def test_workers_find_hybridmap_when_it_is_only_on_pythonpath(tmp_path: Path) -> None:
    """A checkout run through PYTHONPATH (no install): isolated workers must still import us, from
    our own directory, not from the cwd."""
    marker = tmp_path / "imported.txt"
    root = hostile_repo(tmp_path / "repo", marker, Settings().parallel_parse_min_files + 20)
    import hybridmap

    ours = Path(hybridmap.__file__).resolve().parent.parent
    # A python with no hybridmap installed: the base interpreter, with our venv's site-packages
    # (dependencies) and our checkout on PYTHONPATH, as an uninstalled checkout would run.
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = {"PYTHONPATH": f"{ours}:{site}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    probe = subprocess.run(
        [str(base), "-P", "-S", "-c", "import hybridmap, sys; print(hybridmap.__file__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0 and probe.stdout.startswith(str(ours)), probe.stderr
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(base),
            "-P",
            "-S",
            "-m",
            "hybridmap",
            "map",
            ".",
            "--mode",
            "static",
            "--format",
            "json",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"repository code ran: {marker.read_text()!r}"
    data = json.loads(proc.stdout)
    assert data["stats"]["parse_workers"] >= 2
    assert data["stats"]["parse_fallback_files"] == 0
    assert not [d for d in data["diagnostics"] if d["kind"] == "parse_error"]
    assert time.monotonic() - started < DEADLINE


def test_the_aider_runner_started_inside_a_repository_does_not_import_its_modules(tmp_path: Path) -> None:
    """The eval's other Python child: Aider's runner is started with the checkout as its cwd. It runs
    as a script (``sys.path[0]`` is its own directory, never the cwd) with ``-s`` and no ``PYTHON*``
    variables (``-I`` would drop the ``PYTHONHASHSEED`` its reproducibility needs)."""
    import asyncio

    from hybridmap.frontends.evaluate.peer import DEFAULT_PYTHON, _communicate

    if not DEFAULT_PYTHON.exists():
        pytest.skip("no Aider environment (benchmarks/setup_aider_env.sh)")
    marker = tmp_path / "imported.txt"
    root = hostile_repo(tmp_path / "repo", marker, 3)
    for name in ("aider", "tiktoken", "os", "time"):
        target = root / name / "__init__.py" if name in ("aider", "tiktoken") else root / f"{name}.py"
        target.parent.mkdir(exist_ok=True)
        target.write_text(f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n")
    code, out, err = asyncio.run(_communicate(DEFAULT_PYTHON, ["--version"], b"", 120, cwd=root))
    assert code == 0, err.decode()
    assert not marker.exists(), f"repository code ran: {marker.read_text()!r}"
    assert json.loads(out)["aider_version"]
