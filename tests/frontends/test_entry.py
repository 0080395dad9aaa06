"""The process's end (``frontends/cli/entry.py``): what Python's exit does first still happens,
only the heap's teardown is skipped. Each case is a real process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers import sample_repo


def _ended(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import atexit, threading, time
        from pathlib import Path
        from hybridmap.frontends.cli.entry import leave
        out = Path({str(tmp_path)!r})
        atexit.register(lambda: (out / "hook").write_text("ran"))
        def late():
            time.sleep(0.3)
            (out / "thread").write_text("done")
        threading.Thread(target=late).start()
        print("buffered", end="")
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script + textwrap.dedent(body)], capture_output=True, text=True, timeout=60
    )


def test_threads_hooks_and_output_finish_before_the_process_ends(tmp_path: Path) -> None:
    done = _ended("leave(3)", tmp_path)
    assert done.returncode == 3
    assert done.stdout == "buffered"
    assert (tmp_path / "thread").read_text() == "done"
    assert (tmp_path / "hook").read_text() == "ran"


def test_statuses_mean_what_sys_exit_makes_them_mean(tmp_path: Path) -> None:
    assert _ended("leave(None)", tmp_path).returncode == 0
    said = _ended("leave('hybridmap: no such thing')", tmp_path)
    assert said.returncode == 1 and said.stderr.strip() == "hybridmap: no such thing"


def test_a_map_through_the_entry_point_is_whole_and_keeps_its_states(tmp_path: Path) -> None:
    root = sample_repo(tmp_path / "repo", files=8, defs=3)
    env_cache = tmp_path / "cache"
    command = [sys.executable, "-m", "hybridmap", "map", str(root), "--mode", "static", "--tokens", "4096"]
    env = {"XDG_CACHE_HOME": str(env_cache), "HYBRIDMAP_DAEMON": "off", "PATH": "/usr/bin:/bin"}
    first = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert first.returncode == 0, first.stderr
    assert "pkg/mod0.py" in first.stdout and first.stdout.endswith("\n")
    # Written at close, before the exit: the files' states and the static graph for the next process.
    assert list((env_cache / "hybridmap" / "snapshots").glob("*.bin"))
    assert list((env_cache / "hybridmap" / "graphs").glob("*.bin"))
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert again.stdout == first.stdout
