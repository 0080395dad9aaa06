"""What the OS sandbox costs: the same work with it on and off, alternating, medians.

    .venv/bin/python benchmarks/bench_sandbox.py [--rounds N] [--root DIR]

* **server start + first hybrid map**: a new ``RepoMap`` on ROOT (default: the Python
  fixture with ty, a copy in a temporary directory), one hybrid map waiting for the server;
* **one git call**: ``git ls-files`` through the hardened runner (``hybridmap/infra/git.py``), whose
  sandboxed spawn forks instead of using vfork;
* **a parse worker's spawn**: the sandbox's ruleset build alone (the policy and its rules).

"Off" is ``sandbox = false`` with ``allow_unsandboxed_servers``, the same code path otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hybridmap import RepoMap
from hybridmap.infra import git
from hybridmap.infra.sandbox import base_policy, confined

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "lsp" / "python"


def first_map(root: Path, cache: Path, sandbox: bool) -> float:
    overrides = {"cache_dir": str(cache), "sandbox": sandbox, "allow_unsandboxed_servers": not sandbox}
    began = time.perf_counter()
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="hybrid", server_wait=30, tokens=512)
    seconds = time.perf_counter() - began
    if result.servers["python"].state.value != "ready":
        raise SystemExit(f"the server is not ready: {result.servers['python']}")
    return seconds


def git_call(root: Path, sandbox: bool) -> float:
    """The runner's own spawn of ``git ls-files``: with its sandbox, or the same call without."""
    executable = git.git_executable()
    assert executable is not None
    argv = [executable, *git.hardened_args(), "ls-files", "-z"]
    began = time.perf_counter()
    if sandbox:
        with confined(git.git_sandbox(executable, root)) as start:
            subprocess.run(
                argv, cwd=root, capture_output=True, check=True, env=git.git_environment(), preexec_fn=start.preexec
            )
    else:
        subprocess.run(argv, cwd=root, capture_output=True, check=True, env=git.git_environment())
    return time.perf_counter() - began


def ruleset_build() -> float:
    policy = base_policy({})
    began = time.perf_counter()
    with confined(policy):
        pass
    return time.perf_counter() - began


def alternate(rounds: int, on: Callable[[], float], off: Callable[[], float]) -> tuple[float, float]:
    ons: list[float] = []
    offs: list[float] = []
    for i in range(rounds):
        first, second = (on, off) if i % 2 == 0 else (off, on)
        a, b = first(), second()
        (ons, offs)[0 if first is on else 1].append(a)
        (ons, offs)[0 if second is on else 1].append(b)
    return statistics.median(ons), statistics.median(offs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--root", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.root or Path(scratch) / "repo"
        if args.root is None:
            shutil.copytree(FIXTURE, root)
        counter = iter(range(10**6))

        def fresh_cache() -> Path:
            return Path(scratch) / f"cache-{next(counter)}"

        on, off = alternate(
            args.rounds, lambda: first_map(root, fresh_cache(), True), lambda: first_map(root, fresh_cache(), False)
        )
        print(f"server start + first hybrid map: on {on * 1000:.0f} ms, off {off * 1000:.0f} ms, ratio {on / off:.2f}")
        git_root = Path(__file__).resolve().parents[1]
        on, off = alternate(args.rounds * 5, lambda: git_call(git_root, True), lambda: git_call(git_root, False))
        print(f"git ls-files: on {on * 1000:.1f} ms, off {off * 1000:.1f} ms, ratio {on / off:.2f}")
        builds = sorted(ruleset_build() for _ in range(args.rounds * 5))
        print(f"ruleset build (base policy): median {statistics.median(builds) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
