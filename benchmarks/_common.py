"""Shared by the benchmark scripts and probes (the probes import it from their own directory,
including probe_aider.py, which runs in Aider's venv: keep this module stdlib-only)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

#: What "warm after editing one file" appends, per extension: a new definition.
EDIT_SNIPPETS = {
    ".py": b"\n\ndef benchmark_added_function(value):\n    return value\n",
    ".go": b"\n\nfunc BenchmarkAddedFunction(value int) int { return value }\n",
}


@contextlib.contextmanager
def edited(path: str) -> Iterator[None]:
    """Append a definition to ``path`` for the duration of the block, then restore it."""
    with open(path, "rb") as fh:
        original = fh.read()
    try:
        with open(path, "ab") as fh:
            fh.write(EDIT_SNIPPETS.get(os.path.splitext(path)[1], b"\n"))
        yield
    finally:
        with open(path, "wb") as fh:
            fh.write(original)


def extract_mirror(mirror: Path, dest: Path) -> None:
    """Check out the HEAD of a bare mirror (from the search tool's fetch) into ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(mirror), "archive", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def baseline_tree(commit: str, work: Path) -> Path:
    """hybridmap's source at ``commit`` (``git archive`` of this checkout), extracted once under
    ``work``: run with ``PYTHONPATH`` set to it, against this tree in the same alternation. The
    tree is named by the commit's hash: a name that moves (``HEAD``, a branch) is resolved first,
    or a later run would reuse the tree of what it named before."""
    checkout = Path(__file__).resolve().parent.parent
    resolved = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tree = work / f"hybridmap-{resolved[:12]}"
    if not (tree / "hybridmap").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(checkout), "archive", resolved], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def run_hybridmap(args: list[str], env: Mapping[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of one ``hybridmap`` command,
    its standard output thrown away. CPU is user + system from ``wait4``'s rusage, so parse
    workers (children) are counted."""
    wall, cpu, _ = run_hybridmap_measured(args, env)
    return wall, cpu


def run_hybridmap_measured(args: list[str], env: Mapping[str, str]) -> tuple[float, float, float]:
    """:func:`run_hybridmap`'s figures and the peak resident memory in MB (thousands of KiB, as
    ``/usr/bin/time``'s ``%M`` counts them) of the largest of the process and its children."""
    started = time.perf_counter()
    quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]  # the map's text: not ours to show
    # -P: the working directory is not put first on the path, where it would shadow a baseline's
    # PYTHONPATH (a run from the checkout ran the checkout's code for both sides).
    argv = [sys.executable, "-P", "-m", "hybridmap", *args]
    pid = os.posix_spawn(sys.executable, argv, dict(env), file_actions=quiet)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"hybridmap {' '.join(args)} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1000
