"""Scale: hybridmap and Aider on synthetic monorepos of 1k, 10k and 100k files (``gen_monorepo.py``).

    nice -n 10 python benchmarks/bench_scale.py [--sizes 1000,10000,100000] [--repeats 3]
        [--tokens 2048] [--peer-timeout 1800] [--peer-repeats N] [--server-wait-sizes 1000,10000]
        [--systems static,hybrid-wait0,hybrid-wait60,aider,inprocess] [--memory-limit-mb 6144]
        [--scip-index PATH] [--profile] [--listed 1000000] [--at COMMIT]

What is measured, per size, every figure in a fresh process started for that measurement alone
(a small launcher runs it, so ``RUSAGE_CHILDREN`` of the launcher is that one run's CPU time and
largest single-process peak RSS; a sampler also sums the RSS of the whole process tree every
0.1 s, which counts parse workers and language servers that run at the same time):

* **static**: ``hybridmap map ROOT --mode static --tokens 2048 --format json --cache-dir C``;
* **hybrid**: the same with ``--mode hybrid --server-wait 0`` (a one-shot CLI starts no server
  then) and, for ``--server-wait-sizes``, ``--server-wait 60`` (servers start and are waited for);
* **aider**: Aider 0.86.2's ``RepoMap`` in its own venv with its tags cache in a directory of its
  own (the script of ``bench_cli.py``), killed after ``--peer-timeout`` seconds (reported as a
  timeout);
* **in-process**: ``hybridmap.RepoMap`` kept open in one process (what an agent embedding the
  library gets): first map on an empty cache, then second maps and maps after one edit.

Scenarios: *cold* (empty cache; once per size above 10,000 files, else ``--repeats`` times),
*warm* (cache filled by an earlier run, new process; median of ``--repeats``), *edit* (a function
with a new name appended to one mid-popularity Python file, then a new process; the file is
restored after each run; median of ``--repeats``). hybridmap reads ``max_files`` from a scratch
user config (``XDG_CONFIG_HOME``) set to ``--max-files`` so the whole 100k repository is mapped.

``--listed N`` also maps a repository of N listed paths (1,000 realistic files plus N - 1,000
one-line files) with the *default* settings, to see what ``max_files`` does there. ``--profile``
runs cProfile (``profile_stages``) around a first map from the filled disk cache, a second map and a
map after one edit, at the largest size. ``--scip-index
PATH`` is a hook for the SCIP source being built elsewhere: it adds a hybrid run with ``--index
PATH`` if ``hybridmap map --help`` has that option, and records it as skipped otherwise.

Every run is killed after ``--peer-timeout`` seconds or once its process tree passes
``--memory-limit-mb`` (this machine's memory is shared), and reported as such.
Everything runs under ``nice -n 10`` (the script raises its own niceness to 10 at least).
Results: ``benchmarks/.work/scale/results.json`` (merged by size across runs) and a table.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_cli import AIDER_PYTHON, AIDER_SCRIPT  # noqa: E402 - a sibling script, not a package
from gen_monorepo import SCALE, generate  # noqa: E402

RESULTS = SCALE / "results.json"
#: hybridmap as committed at ``--at`` (``git archive`` into .work/scale, first on ``PYTHONPATH``): other
#: sessions edit the working tree of ``hybridmap/`` while this runs.
CODE: dict[str, str] = {}
EDIT_TEMPLATE = "\n\ndef scale_bench_added_{tag}(value):\n    return value\n"
SAMPLE_SECONDS = 0.1
SYSTEMS = ("static", "hybrid-wait0", "hybrid-wait60", "aider", "inprocess")


# --- the launcher: one measured run in a fresh process -------------------------------------------


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (0 once it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            continue
    return total


def launch(spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``spec["argv"]`` (this is the launcher's process): wall, CPU, peaks, exit status.

    The process group is killed after ``timeout`` seconds, or as soon as the tree's RSS passes
    ``memory_limit_mb`` (other sessions share this machine's memory)."""
    argv, timeout, stdout_path, env = spec["argv"], spec["timeout"], spec["stdout"], spec["env"]
    limit = spec["memory_limit_mb"] * 2**20
    peak, over = [0], threading.Event()
    start = time.perf_counter()
    with open(stdout_path, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env, cwd=SCALE, start_new_session=True)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(SAMPLE_SECONDS):
                peak[0] = max(peak[0], tree_rss(proc.pid))
                if peak[0] > limit and not over.is_set():
                    over.set()
                    os.killpg(proc.pid, 9)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timed_out = False
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, 9)
            _, err = proc.communicate()
        done.set()
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall": round(wall, 3),
        "cpu": round(usage.ru_utime + usage.ru_stime, 3),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "peak_tree_rss_mb": round(peak[0] / 2**20, 1),
        "returncode": proc.returncode,
        "timeout": timed_out,
        "memory_exceeded": over.is_set(),
        "stderr_tail": err.decode(errors="replace")[-800:] if proc.returncode else "",
    }


def measured(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    """One run of ``argv`` in a fresh launcher process: its figures and its stdout."""
    out_path = SCALE / f".stdout-{os.getpid()}"
    limit = float(CODE.get("memory_limit_mb", 6144))
    spec = json.dumps({"argv": argv, "timeout": timeout, "stdout": str(out_path), "env": env, "memory_limit_mb": limit})
    proc = subprocess.run([sys.executable, __file__, "--launcher", spec], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"launcher failed: {proc.stderr[-800:]}")
    figures = json.loads(proc.stdout)
    text = out_path.read_text(errors="replace")
    out_path.unlink(missing_ok=True)
    return figures, text


# --- edits --------------------------------------------------------------------------------------


class Appended:
    """Append a uniquely named function to ``path`` inside the block, then put the bytes back."""

    def __init__(self, path: Path, tag: str) -> None:
        self.path, self.tag = path, tag
        self.original = b""

    def __enter__(self) -> None:
        self.original = self.path.read_bytes()
        with self.path.open("ab") as fh:
            fh.write(EDIT_TEMPLATE.format(tag=self.tag).encode())

    def __exit__(self, *exc: object) -> None:
        self.path.write_bytes(self.original)


# --- the in-process probe (a child mode of this script) -----------------------------------------


def timed_map(repo: Any, tokens: int) -> tuple[float, Any]:
    start = time.perf_counter()
    result = repo.map(tokens=tokens, mode="static")
    return time.perf_counter() - start, result


def profile_stages(spec: dict[str, Any]) -> dict[str, Any]:
    """cProfile of a first map from a filled disk cache (a CLI's warm map, without start-up), a second
    map, and a map after one edit, on ``AsyncRepoMap`` in this thread: ``asyncio.to_thread`` is
    replaced by a direct call, so the profiler sees the work (static maps overlap nothing else)."""
    import asyncio
    import cProfile
    import io
    import pstats

    from hybridmap import AsyncRepoMap

    async def direct(func: Any, /, *args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    asyncio.to_thread = direct  # type: ignore[assignment]
    out: dict[str, Any] = {}

    async def run() -> None:
        repo = AsyncRepoMap(spec["root"], overrides={"cache_dir": spec["cache"], "max_files": spec["max_files"]})
        for label in ("first_from_disk", "second", "after_edit"):
            profile = cProfile.Profile()
            with Appended(Path(spec["edit"]), f"profile_{os.getpid()}") if label == "after_edit" else nullcontext():
                start = time.perf_counter()
                profile.enable()
                result = await repo.map(tokens=spec["tokens"], mode="static")
                profile.disable()
            text = io.StringIO()
            stats = pstats.Stats(profile, stream=text)
            stats.sort_stats("cumulative").print_stats(30)
            stats.sort_stats("tottime").print_stats(20)
            out[label] = {
                "seconds": time.perf_counter() - start,
                "timings": dict(result.timings),
                "profile": text.getvalue(),
            }
        await repo.aclose()

    asyncio.run(run())
    return out


def inprocess(spec: dict[str, Any]) -> dict[str, Any]:
    """Cold map, then warm second maps and maps after one edit, in one long-lived ``RepoMap``."""
    import psutil

    from hybridmap import RepoMap

    shutil.rmtree(spec["cache"], ignore_errors=True)
    me, tokens, edit = psutil.Process(), spec["tokens"], Path(spec["edit"])
    start = time.perf_counter()
    repo = RepoMap(spec["root"], overrides={"cache_dir": spec["cache"], "max_files": spec["max_files"]})
    cold, result = timed_map(repo, tokens)
    out: dict[str, Any] = {"cold": cold, "cold_with_init": time.perf_counter() - start, "tokens": result.tokens}
    out.update(
        cold_timings=dict(result.timings), stats=dict(result.stats), rss_after_cold_mb=me.memory_info().rss / 2**20
    )
    out["warm"] = [timed_map(repo, tokens)[0] for _ in range(spec["repeats"])]
    out["warm_timings"] = dict(timed_map(repo, tokens)[1].timings)
    out["edit"] = []
    for k in range(spec["repeats"]):
        with Appended(edit, f"inprocess{k}_{os.getpid()}"):
            seconds, result = timed_map(repo, tokens)
        out["edit"].append(seconds)
        out["edit_timings"] = dict(result.timings)
        timed_map(repo, tokens)  # settle on the restored file
    out["rss_end_mb"] = me.memory_info().rss / 2**20
    repo.close()
    out["peak_rss_self_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Not the parse workers alone: a git child forked from this process counts its RSS until exec.
    out["peak_rss_children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


# --- scenarios ------------------------------------------------------------------------------------


def parse_json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    kinds: dict[str, int] = {}
    for diagnostic in data.get("diagnostics", []):
        kinds[diagnostic["kind"]] = kinds.get(diagnostic["kind"], 0) + 1
    too_many = [d["message"] for d in data.get("diagnostics", []) if d["kind"] == "too_many_files"]
    servers = {
        lang: (s.get("server"), s.get("state"), s.get("seconds_to_ready"))
        for lang, s in data.get("servers", {}).items()
    }
    return {
        "timings": data.get("timings"),
        "stats": data.get("stats"),
        "tokens": data.get("tokens"),
        "edges": data.get("edges"),
        "diagnostic_kinds": kinds,
        "too_many_files": too_many,
        "servers": servers,
    }


def run_once(argv: list[str], timeout: float, env: dict[str, str] | None, json_out: bool) -> dict[str, Any]:
    figures, text = measured(argv, timeout, env)
    if json_out:
        figures.update(parse_json(text))
    else:
        figures["output_chars"] = len(text)
    return figures


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of wall and CPU, the largest peaks; a timeout or failure is said, never averaged."""
    ok = [r for r in runs if not r["timeout"] and r["returncode"] == 0]
    if not ok:
        return {
            "runs": len(runs),
            "failed": True,
            "timeout": any(r["timeout"] for r in runs),
            "memory_exceeded": any(r.get("memory_exceeded") for r in runs),
            "walls": [r["wall"] for r in runs],
            "peak_tree_rss_mb": max(r["peak_tree_rss_mb"] for r in runs),
            "last": runs[-1],
        }
    middle = sorted(ok, key=lambda r: r["wall"])[len(ok) // 2]
    return {
        "runs": len(runs),
        "ok": len(ok),
        "wall": statistics.median(r["wall"] for r in ok),
        "cpu": statistics.median(r["cpu"] for r in ok),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in ok),
        "peak_tree_rss_mb": max(r["peak_tree_rss_mb"] for r in ok),
        "walls": [r["wall"] for r in runs],
        "median_run": {k: v for k, v in middle.items() if k not in ("wall", "cpu")},
    }


def scenarios(
    argv: list[str], cache: Path, edit: Path, runs: tuple[int, int], timeout: float, env: dict[str, str] | None
) -> dict[str, Any]:
    """cold (empty ``cache``), warm (new process) and after one edit, for one system's command."""
    cold_runs, repeats = runs
    json_out = "--format" in argv
    cold = []
    for _ in range(cold_runs):
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(run_once(argv, timeout, env, json_out))
    out: dict[str, Any] = {"cold": summary(cold)}
    if out["cold"].get("failed"):
        out["warm"] = out["edit"] = {"skipped": "cold run failed or timed out"}
        return out
    out["warm"] = summary([run_once(argv, timeout, env, json_out) for _ in range(repeats)])
    edits = []
    for k in range(repeats):
        with Appended(edit, f"{cache.name.replace('-', '_')}_{k}_{os.getpid()}"):
            edits.append(run_once(argv, timeout, env, json_out))
    out["edit"] = summary(edits)
    return out


def use_code(commit: str) -> str:
    """Extract hybridmap at ``commit`` once; later commands and probes import it from there."""
    sha = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", commit], capture_output=True, text=True)
    sha_text = sha.stdout.strip()
    if sha.returncode != 0 or not sha_text:
        raise SystemExit(f"--at {commit}: not a commit")
    tree = SCALE / f"hybridmap-{sha_text[:10]}"
    if not (tree / "hybridmap").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", sha_text], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    CODE.update(commit=sha_text, pythonpath=str(tree))
    return sha_text


def code_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": CODE["pythonpath"], **(extra or {})}


def hybridmap_argv(root: Path, cache: Path, tokens: int, mode: str, wait: float | None = None) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "hybridmap",
        "map",
        str(root),
        "--mode",
        mode,
        "--tokens",
        str(tokens),
        "--format",
        "json",
    ]
    argv += ["--cache-dir", str(cache)]
    return argv if wait is None else [*argv, "--server-wait", str(wait)]


def has_index_option() -> bool:
    help_text = subprocess.run(
        [sys.executable, "-m", "hybridmap", "map", "--help"], capture_output=True, text=True, env=code_env(), cwd=SCALE
    ).stdout
    return "--index" in help_text


def config_env(max_files: int | None) -> dict[str, str]:
    """An environment whose user config sets ``max_files`` (None: an empty config, the defaults)."""
    home = SCALE / ("config-default" if max_files is None else f"config-max{max_files}")
    (home / "hybridmap").mkdir(parents=True, exist_ok=True)
    text = "" if max_files is None else f"max_files = {max_files}\n"
    (home / "hybridmap" / "config.toml").write_text(text)
    return code_env({"XDG_CONFIG_HOME": str(home)})


def run_inprocess(root: Path, edit: Path, args: argparse.Namespace, size: int, profile: bool) -> dict[str, Any]:
    spec = {
        "root": str(root),
        "cache": str(SCALE / f"cache-{size}-inprocess"),
        "edit": str(edit),
        "tokens": args.tokens,
        "repeats": args.repeats,
        "max_files": args.max_files,
        "profile": profile,
    }
    argv = [sys.executable, __file__, "--inprocess", json.dumps(spec)]
    figures, text = measured(argv, args.peer_timeout, code_env())
    try:
        figures.update(json.loads(text))
    except ValueError:
        figures["stdout_tail"] = text[-800:]
    if profile:  # after the measured runs, in a process of its own (the disk cache is filled)
        argv = [sys.executable, __file__, "--profile-stages", json.dumps(spec)]
        _, text = measured(argv, args.peer_timeout, code_env())
        figures["profile"] = json.loads(text) if text.startswith("{") else text[-800:]
    for key in ("warm", "edit"):
        if isinstance(figures.get(key), list):
            figures[f"{key}_median"] = statistics.median(figures[key])
    return figures


def bench_size(size: int, args: argparse.Namespace, largest: bool, save: Any) -> dict[str, Any]:
    """Every system on the repository of ``size`` files; ``save(out)`` after each system."""
    manifest = generate(size, args.seed)
    root = Path(str(manifest["root"]))
    edit = root / str(manifest["edit_file"])
    env = config_env(args.max_files)
    runs = (1 if size > 10_000 else args.repeats, args.repeats)
    out: dict[str, Any] = {"manifest": manifest, "runs": {"cold": runs[0], "warm_and_edit": runs[1]}}
    systems: dict[str, list[str]] = {
        "static": hybridmap_argv(root, SCALE / f"cache-{size}-static", args.tokens, "static"),
        "hybrid-wait0": hybridmap_argv(root, SCALE / f"cache-{size}-hybrid0", args.tokens, "hybrid", 0),
    }
    if size in args.server_wait_sizes:
        systems["hybrid-wait60"] = hybridmap_argv(root, SCALE / f"cache-{size}-hybrid60", args.tokens, "hybrid", 60)
    if args.scip_index:
        if has_index_option():  # hook for the SCIP source: not implemented here
            argv = hybridmap_argv(root, SCALE / f"cache-{size}-scip", args.tokens, "hybrid", 0)
            systems["hybrid-scip"] = [*argv, "--index", str(args.scip_index)]
        else:
            out["hybrid-scip"] = {"skipped": "hybridmap map has no --index option yet"}
    systems = {k: v for k, v in systems.items() if k in args.systems or k == "hybrid-scip"}
    for name, argv in systems.items():
        print(f"[{size}] {name}", file=sys.stderr, flush=True)
        system_runs = (1, 1) if name == "hybrid-wait60" else runs
        out[name] = scenarios(
            argv, Path(argv[argv.index("--cache-dir") + 1]), edit, system_runs, args.peer_timeout, env
        )
        save(out)
    if "aider" in args.systems and AIDER_PYTHON.exists():
        print(f"[{size}] aider", file=sys.stderr, flush=True)
        cache = SCALE / f"cache-{size}-aider"
        argv = [str(AIDER_PYTHON), "-c", AIDER_SCRIPT, str(root), str(cache), str(args.tokens)]
        peer_runs = (min(runs[0], args.peer_repeats), args.peer_repeats) if args.peer_repeats else runs
        out["runs"]["aider"] = peer_runs
        out["aider"] = scenarios(argv, cache, edit, peer_runs, args.peer_timeout, None)
        save(out)
    if "inprocess" in args.systems:
        print(f"[{size}] in-process", file=sys.stderr, flush=True)
        out["inprocess"] = run_inprocess(root, edit, args, size, args.profile and largest)
    return out


def bench_listed(listed: int, args: argparse.Namespace) -> dict[str, Any]:
    """N listed paths with the default settings (max_files = 100,000): cold and warm static maps."""
    manifest = generate(1000, args.seed, tiny=max(0, listed - 1005))
    root = Path(str(manifest["root"]))
    out: dict[str, Any] = {"manifest": manifest}
    for label, env in (("default", config_env(None)), (f"max_files={args.max_files}", config_env(args.max_files))):
        cache = SCALE / f"cache-listed{listed}-{label.split('=')[0]}"
        argv = hybridmap_argv(root, cache, args.tokens, "static")
        shutil.rmtree(cache, ignore_errors=True)
        out[label] = {
            "cold": run_once(argv, args.peer_timeout, env, True),
            "warm": run_once(argv, args.peer_timeout, env, True),
        }
        if not args.listed_raised:
            break
    return out


# --- report ---------------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "—"


def table(results: dict[str, Any]) -> str:
    rows = ["| files | system | scenario | wall s | CPU s | peak RSS MB (largest process) | peak RSS MB (tree) |"]
    rows.append("|---:|---|---|---:|---:|---:|---:|")
    for _size, data in sorted(((int(k), v) for k, v in results.get("sizes", {}).items())):
        files = data["manifest"]["files"]
        for system in ("static", "hybrid-wait0", "hybrid-wait60", "hybrid-scip", "aider"):
            for scenario in ("cold", "warm", "edit"):
                cell = data.get(system, {}).get(scenario)
                if cell is None:
                    continue
                if cell.get("failed") or "skipped" in cell:
                    note = cell.get("skipped", "failed")
                    if cell.get("timeout") or cell.get("memory_exceeded"):
                        what = "timeout" if cell.get("timeout") else "killed over memory limit"
                        note = f"{what} at {fmt(max(cell['walls']), 0)} s, {fmt(cell['peak_tree_rss_mb'], 0)} MB"
                    rows.append(f"| {files} | {system} | {scenario} | {note} | | | |")
                    continue
                rows.append(
                    f"| {files} | {system} | {scenario} | {fmt(cell['wall'])} | {fmt(cell['cpu'])} "
                    f"| {fmt(cell['peak_rss_mb'], 0)} | {fmt(cell['peak_tree_rss_mb'], 0)} |"
                )
        inproc = data.get("inprocess", {})
        for scenario, key in (("cold", "cold"), ("warm", "warm_median"), ("edit", "edit_median")):
            rows.append(
                f"| {files} | in-process | {scenario} | {fmt(inproc.get(key))} | | "
                f"{fmt(inproc.get('peak_rss_self_mb'), 0)} "
                f"| {fmt(inproc.get('peak_tree_rss_mb'), 0)} |"
            )
    return "\n".join(rows)


def load_results() -> dict[str, Any]:
    if RESULTS.exists():
        try:
            data: dict[str, Any] = json.loads(RESULTS.read_text())
            return data
        except ValueError:
            pass
    return {"sizes": {}}


def machine() -> dict[str, Any]:
    import platform

    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
        "nice": os.nice(0),
        "hybridmap_commit": CODE.get("commit"),
    }


def save_size(
    results: dict[str, Any],
    size: int,
    previous: dict[str, Any],
    started: dict[str, Any],
    args: argparse.Namespace,
    data: dict[str, Any],
) -> None:
    """Write what one size has so far (merged into an earlier run on the same repository)."""
    data["machine"] = {",".join(args.systems): {"before": started, "after": machine()}}
    if previous.get("manifest", {}).get("head") == data["manifest"]["head"]:
        data = {**previous, **data, "machine": {**previous.get("machine", {}), **data["machine"]}}
    results["sizes"][str(size)] = data
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peer-timeout", type=float, default=1800.0, help="seconds before a run is killed")
    parser.add_argument("--server-wait-sizes", default="1000,10000", help="sizes also run with --server-wait 60")
    parser.add_argument("--max-files", type=int, default=10_000_000, help="max_files in the scratch user config")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="which of them to run (merged into results)")
    parser.add_argument("--memory-limit-mb", type=float, default=6144, help="kill a run whose process tree passes this")
    parser.add_argument("--peer-repeats", type=int, default=0, help="Aider's runs per scenario (0: as hybridmap)")
    parser.add_argument("--scip-index", type=Path, default=None, help="hook: pass --index PATH if the CLI has it")
    parser.add_argument("--profile", action="store_true", help="cProfile the in-process maps of the largest size")
    parser.add_argument("--listed", type=int, default=0, help="also map a repository of this many listed paths")
    parser.add_argument("--listed-raised", action="store_true", help="--listed also with max_files raised")
    parser.add_argument("--at", default="HEAD", help="measure hybridmap as committed at this commit")
    parser.add_argument("--launcher", help=argparse.SUPPRESS)
    parser.add_argument("--inprocess", help=argparse.SUPPRESS)
    parser.add_argument("--profile-stages", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.systems = [s for s in args.systems.split(",") if s]
    args.server_wait_sizes = {int(s) for s in args.server_wait_sizes.split(",") if s}
    return args


def main() -> None:
    args = parse_args()
    if args.launcher:
        spec = json.loads(args.launcher)
        print(json.dumps(launch(spec)))
        return
    if args.inprocess:
        print(json.dumps(inprocess(json.loads(args.inprocess))))
        return
    if args.profile_stages:
        print(json.dumps(profile_stages(json.loads(args.profile_stages))))
        return
    if os.nice(0) < 10:
        os.nice(10 - os.nice(0))
    SCALE.mkdir(parents=True, exist_ok=True)
    results = load_results()
    results["code"] = use_code(args.at)
    CODE["memory_limit_mb"] = str(args.memory_limit_mb)
    for size in args.sizes:
        save = functools.partial(save_size, results, size, results["sizes"].get(str(size), {}), machine(), args)
        save(bench_size(size, args, size == max(args.sizes), save))
    if args.listed:
        results.setdefault("listed", {})[str(args.listed)] = bench_listed(args.listed, args)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
