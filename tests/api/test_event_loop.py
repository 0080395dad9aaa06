"""The caller's event loop keeps running while a map starts language servers.

An agent's loop runs its own work (streaming a reply, other tools) beside ``await repo.map``;
everything heavy we do must run off that loop. ``benchmarks/probe_loop_lag.py``, in a fresh
process as an agent is, runs a 10 ms ticker through the first hybrid map of a repository with
four languages, each with a real server starting, and the three seconds after it. The figure to
read is in ``docs/benchmarks.md`` (``benchmarks/bench_session.py``); this test fails only on a
stall far above it: on 93cd2d1 the loop stood still 0.6-0.9 s here (the LSP client imported on
the loop, and each session generating its own message converters there). A failure shows every
thread's stack at the stall (the probe's ``--stacks-after``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ..helpers import LSP_FIXTURES as FIXTURES
from ..helpers import PROJECT, require

PROBE = PROJECT / "benchmarks" / "probe_loop_lag.py"

#: A stall this long fails the test (see the module docstring for what is measured).
GROSS_STALL_MS = 400


def test_the_first_hybrid_map_never_stalls_the_callers_loop(tmp_path: Path) -> None:
    for command in ("ty", "gopls", "tsgo", "rust-analyzer"):
        require(command)
    root = tmp_path / "repo"
    for language in ("python", "go", "typescript", "rust"):
        shutil.copytree(FIXTURES / language, root / language)
    proc = subprocess.run(
        [sys.executable, str(PROBE), str(root), str(tmp_path / "cache"), "--stacks-after", str(GROSS_STALL_MS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    measured = json.loads(proc.stdout)
    assert set(measured["servers"]) == {"python", "go", "typescript", "rust"}, measured
    assert measured["ticks"] > 100, measured
    stacks = measured.pop("stall_stacks", "")
    assert measured["max_ms"] < GROSS_STALL_MS, f"the loop stood still: {measured}\nstacks at the stall:\n{stacks}"
