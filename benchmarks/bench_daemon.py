"""One-shot calls answered by the warm daemon, against the same calls in-process and Aider's.

    nice -n 10 python benchmarks/bench_daemon.py [--corpus DIR]... [--repeats N] [--tokens N]

What an agent or script pays per turn when it shells out for a map with a new chat file each
time (the file it is now editing). Three systems, alternating call by call, each with its
caches warm (filled by an earlier call):

* ``in-process``: ``hybridmap map ROOT --chat F --mode static`` with ``HYBRIDMAP_DAEMON=off``;
* ``daemon``: the same command with ``HYBRIDMAP_DAEMON=on`` and the repository's daemon running
  (started and warmed before the runs). Its CPU is the client process's **plus the daemon's**
  for that call (``/proc/PID/stat`` utime + stime before and after): the whole cost, not the
  client's share;
* ``aider``: Aider 0.86.2's ``RepoMap`` (its venv from ``setup_aider_env.sh``), the script of
  ``bench_cli.py`` given the same chat file, its tags cache warm.

Static maps (Aider has no servers), ``--tokens`` 1,024. Medians over ``--repeats`` calls, each
with another chat file (the corpus's Python files in a fixed shuffled order). The daemon's
output is checked equal to the in-process output of the same call. Default corpus: click from
this venv (as ``bench_cli.py``); the figures in ``docs/benchmarks.md`` add sqlalchemy 2.0.54's
package from its wheel, made a git repository.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import AIDER_PYTHON, AIDER_SCRIPT, WORK, click_corpus  # noqa: E402


def cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, proc.stdout


def daemon_pid(root: Path, env: dict[str, str]) -> int:
    hybridmap = str(Path(sys.executable).parent / "hybridmap")
    for _ in range(600):
        proc = subprocess.run(
            [hybridmap, "daemon", "status", str(root), "--format", "json"], capture_output=True, env=env
        )
        if proc.returncode == 0:
            return int(json.loads(proc.stdout)["pid"])
        time.sleep(0.1)
    raise SystemExit("the daemon did not start")


def measure(root: Path, repeats: int, tokens: int) -> dict[str, object]:
    hybridmap = str(Path(sys.executable).parent / "hybridmap")
    runtime = WORK / "daemon-run"
    runtime.mkdir(parents=True, exist_ok=True)
    base = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    off, on = {**base, "HYBRIDMAP_DAEMON": "off"}, {**base, "HYBRIDMAP_DAEMON": "on"}
    cache = WORK / f"cache-daemon-{root.name}"
    chats = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if ".git" not in p.parts)
    random.Random(0).shuffle(chats)

    def ours(chat: str) -> list[str]:
        return [
            hybridmap,
            "map",
            str(root),
            "--mode",
            "static",
            "--tokens",
            str(tokens),
            "--cache-dir",
            str(cache),
            "--chat",
            chat,
        ]

    aider_cache = WORK / f"cache-aider-{root.name}"

    def aider(chat: str) -> list[str]:
        return [str(AIDER_PYTHON), "-c", AIDER_SCRIPT, str(root), str(aider_cache), str(tokens), chat]

    run(ours(chats[-1]), off)  # fill the cache
    run(ours(chats[-1]), on)  # start the daemon (this call runs in-process)
    pid = daemon_pid(root, on)
    run(ours(chats[-2]), on)  # its first map
    has_aider = AIDER_PYTHON.exists()
    if has_aider:
        run(aider(chats[-1]), base, WORK)
    samples: dict[str, list[tuple[float, float]]] = {"in-process": [], "daemon": [], "aider": []}
    client_only: list[float] = []
    for chat in chats[:repeats]:
        cpu, wall, here = run(ours(chat), off)
        samples["in-process"].append((cpu, wall))
        before = cpu_of(pid)
        cpu, wall, answered = run(ours(chat), on)
        client_only.append(cpu)
        samples["daemon"].append((cpu + cpu_of(pid) - before, wall))
        if answered != here:
            raise SystemExit(f"the daemon's map of {chat} differs from the in-process one")
        if has_aider:
            cpu, wall, _ = run(aider(chat), base, WORK)
            samples["aider"].append((cpu, wall))
    subprocess.run([hybridmap, "daemon", "stop", str(root)], env=on, capture_output=True)
    report: dict[str, object] = {"corpus": str(root), "python_files": len(chats), "calls": min(repeats, len(chats))}
    medians = {}
    for name, rows in samples.items():
        if rows:
            medians[name] = statistics.median(r[0] for r in rows)
            report[name] = {
                "cpu_median": round(medians[name], 3),
                "wall_median": round(statistics.median(r[1] for r in rows), 3),
            }
    report["daemon client process only, cpu_median"] = round(statistics.median(client_only), 3)
    for name in ("in-process", "daemon"):
        if "aider" in medians:
            report[f"cpu_ratio {name} / aider"] = round(medians[name] / medians["aider"], 3)
    report["cpu_ratio daemon / in-process"] = round(medians["daemon"] / medians["in-process"], 3)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, action="append", default=None)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()
    os.nice(max(0, 10 - os.nice(0)))
    corpora = [c.resolve() for c in args.corpus] if args.corpus else [click_corpus()]
    print(json.dumps([measure(root, args.repeats, args.tokens) for root in corpora], indent=2))


if __name__ == "__main__":
    main()
