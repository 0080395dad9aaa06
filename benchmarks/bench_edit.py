"""Edit to map, in-process: what a long-lived map pays after an edit, against a new chat file.

    nice -n 10 python benchmarks/bench_edit.py [--rounds 15] [--blocks 3] [--tokens 1024] [--corpus DIR]
        [--baseline COMMIT] [--aider-repeats 1] [--no-aider]

One ``hybridmap.RepoMap`` kept open in a child process (what an agent embedding the library, or
``hybridmap mcp``, holds), on a copy of the standard library made a git repository
(``benchmarks/.work/edit/stdlib``; ``--corpus`` for another). After a cold map and two settling
maps, each round measures, in this order (static mode, ``--tokens``):

* **same**: the previous request again (nothing changed);
* **new chat**: a chat file that was not in the previous request (alternating between two);
* **edit**: a function with a new name appended to one file (``EDIT_FILE``), same chat as the
  previous request; the file is restored and mapped again (not timed) after the round;
* **edit use**: a function appended that calls a name the file did not use before (``new_use``:
  a function or class of exactly one other file, the most used such name), so the file gains an
  edge row, which an edit that uses no new name does not;
* **edit common**: a definition of a widely used name appended instead (``common_name``: of the
  names defined by 2 to ``max_definers_per_ident - 1`` files, the one with the most referring
  files), so every edge of that name, from every file using it, moves (targets and weight).

Each edit appends a name unique to the round, so the parse is not a cache hit. Medians over the
rounds; the ratio *edit / new chat* is the issue's target (<= 1.2). ``--baseline COMMIT`` runs the
same child on hybridmap as it was at COMMIT (``git archive`` into ``.work/edit``), for the before;
each system's rounds are split over ``--blocks`` children (default 3) run in alternation (A B, B
A, A B), so the machine's drift meets both alike; the medians are over all rounds of a system,
and each child's ratios are printed beside them.
Aider 0.86.2 (``setup_aider_env.sh``'s venv) runs ``probe_aider.py`` on the same files, chat
files and edited file (one cold map, then warm same / new chat / after edit, once per repeat).

``--dependents-from-pairs`` adds the current code with the map's ``[R:N]`` marks counted from the
graph's file pairs (see :func:`dependents_from_pairs`). Load average before and after is
recorded. Results: ``benchmarks/.work/edit/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import baseline_tree  # noqa: E402

WORK = HERE / ".work" / "edit"
#: (chat A, chat B, edited file): real files with real neighbours (bench_static's stdlib scenario).
CHAT_A, CHAT_B, EDIT_FILE = "json/decoder.py", "asyncio/tasks.py", "email/message.py"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid", "GIT_COMMITTER_NAME": "b"}


def stdlib_corpus() -> Path:
    """The standard library's ``.py`` files (no site-packages), copied once and committed."""
    dest = WORK / "stdlib"
    if (dest / ".git").is_dir():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for dirpath, dirnames, filenames in os.walk(stdlib):
        if "site-packages" in dirpath or "__pycache__" in dirpath:
            dirnames[:] = []
            continue
        for name in filenames:
            if name.endswith(".py"):
                src = Path(dirpath) / name
                target = dest / src.relative_to(stdlib)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "stdlib"]):
        subprocess.run(["git", "-C", str(dest), *args], check=True, env=env, capture_output=True)
    return dest


# --- the child: one long-lived RepoMap ----------------------------------------------------------


def name_counts(tags: Any, kinds: tuple[str, ...] = ()) -> tuple[Counter[str], Counter[str]]:
    """(name -> files defining it, name -> files using it); only definitions of ``kinds`` when given."""
    defined: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for file_tags in tags.values():
        defined.update({s.name for s in file_tags.symbols if not kinds or s.kind in kinds})
        used.update(set(file_tags.ref_names))
    return defined, used


def common_name(repo: Any) -> tuple[str, int, int]:
    """(name, files defining it, files using it): the widely used name an edit can redefine."""
    defined, used = name_counts(repo.tags())
    limit = repo.settings.max_definers_per_ident
    name = max((n for n, d in defined.items() if 2 <= d < limit and n.isidentifier()), key=lambda n: (used[n], n))
    return name, defined[name], used[name]


def new_use(repo: Any) -> str:
    """A function or class ``EDIT_FILE`` neither defines nor uses, defined by exactly one other
    file (a helper, not a name of many definers, which ``edit common`` is about): a call to it
    gives the edited file a new edge row (the most used such name)."""
    tags = repo.tags()
    own = tags[EDIT_FILE]
    taken = set(own.ref_names) | {s.name for s in own.symbols}
    defined, used = name_counts(tags, ("function", "class"))
    fits = (n for n, d in defined.items() if d == 1 and n not in taken and n.isidentifier() and n[0] != "_")
    return max(fits, key=lambda n: (used[n], n))


def dependents_from_pairs() -> None:
    """Make the map's ``[R:N]`` marks count dependents from the graph's file pairs
    (``RepoGraph.dependent_counts``, patched by an edit) instead of ``marks.dependents``' sort of
    every edge per new graph: what the edit path costs once ``marks.py`` does so (same counts,
    tests/pipeline/test_graph_incremental.py)."""
    import numpy as np

    from hybridmap.pipeline import build as pipeline
    from hybridmap.pipeline.render import marks

    def counted(graph: Any) -> dict[str, Any]:
        total, resolved = graph.dependent_counts()
        return {graph.files[i]: marks.Dependents(int(total[i]), int(resolved[i])) for i in np.flatnonzero(total)}

    pipeline.dependents = counted  # type: ignore[attr-defined]


def child(spec: dict[str, Any]) -> dict[str, Any]:
    from hybridmap import RepoMap

    if spec.get("dependents_from_pairs"):
        dependents_from_pairs()

    root, tokens, rounds = Path(spec["root"]), spec["tokens"], spec["rounds"]
    edit = root / EDIT_FILE
    original = edit.read_bytes()
    shutil.rmtree(spec["cache"], ignore_errors=True)
    repo = RepoMap(root, overrides={"cache_dir": spec["cache"]}, start_servers=False)
    samples: dict[str, list[float]] = {k: [] for k in ("same", "new_chat", "edit", "edit_use", "edit_common")}
    timings: dict[str, list[dict[str, float]]] = {k: [] for k in samples}

    def timed(label: str | None, chat: str) -> None:
        start = time.perf_counter()
        result = repo.map(chat_files=[chat], tokens=tokens, mode="static")
        if label is not None:
            samples[label].append(time.perf_counter() - start)
            timings[label].append(dict(result.timings))

    start = time.perf_counter()
    timed(None, CHAT_A)
    cold = time.perf_counter() - start
    name, definers, users = common_name(repo)
    use = new_use(repo)
    timed(None, CHAT_B)
    timed(None, CHAT_A)
    tag = f"{os.getpid()}_{int(time.time())}"
    try:
        for k in range(rounds):
            chat = CHAT_B if k % 2 == 0 else CHAT_A
            other = CHAT_A if chat == CHAT_B else CHAT_B
            # The previous map's request again: the settling maps and the previous round end on
            # this round's `other`. (Until 2026-11-30 a round ended with a map of its own
            # `other`, so "same" asked for a new chat file in every round but the first: the
            # "same" medians before then are of new-chat maps.)
            timed("same", other)
            timed("new_chat", chat)
            for label, text in (
                ("edit", f"\n\ndef bench_edit_{tag}_{k}(value):\n    return value\n"),
                ("edit_use", f"\n\ndef bench_use_{tag}_{k}(value):\n    return {use}(value)\n"),
                ("edit_common", f"\n\ndef {name}(self, *args):  # bench_edit {tag} {k}\n    return args\n"),
            ):
                edit.write_bytes(original + text.encode())
                timed(label, chat)
                edit.write_bytes(original)
                timed(None, chat)  # settle on the restored file
    finally:
        edit.write_bytes(original)
        repo.close()
    out = {"cold": [cold], "common_name": [name, definers, users], "new_use": use}
    return summary({**out, "samples": samples, "timings": timings})


def summary(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with the medians of its samples and of each stage's timings."""
    samples, timings = out["samples"], out["timings"]
    out["median"] = {k: statistics.median(v) for k, v in samples.items()}
    out["timings_median"] = {
        label: {key: statistics.median(t[key] for t in rows) for key in rows[0]} for label, rows in timings.items()
    }
    return out


def merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The children of one system as one: their samples and timings together, medians again."""
    first = parts[0]
    out: dict[str, Any] = {
        "cold": [c for part in parts for c in part["cold"]],
        "common_name": first["common_name"],
        "new_use": first["new_use"],
        "samples": {k: [x for part in parts for x in part["samples"][k]] for k in first["samples"]},
        "timings": {k: [x for part in parts for x in part["timings"][k]] for k in first["timings"]},
        "children": [{k: part["median"][k] for k in ("new_chat", "edit", "edit_use", "edit_common")} for part in parts],
    }
    return summary(out)


# --- the parent -----------------------------------------------------------------------------------


def run_child(spec: dict[str, Any], pythonpath: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        capture_output=True,
        text=True,
        env=env,
        cwd=WORK if pythonpath is not None else None,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run_aider(root: Path, tokens: int, repeats: int) -> list[dict[str, float]]:
    setup = subprocess.run(["bash", str(HERE / "setup_aider_env.sh")], capture_output=True, text=True, check=False)
    if setup.returncode != 0:
        print(f"Aider skipped: its venv could not be set up\n{setup.stderr[-500:]}")
        return []
    python = setup.stdout.strip().splitlines()[-1]
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "*.py"], capture_output=True, text=True, check=True)
    files = WORK / "aider-files.txt"
    files.write_text(listed.stdout)
    out = []
    for _ in range(repeats):
        argv = [python, str(HERE / "probe_aider.py"), str(root), str(files), CHAT_A, CHAT_B, EDIT_FILE, str(tokens)]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"Aider run failed:\n{proc.stderr[-1500:]}")
            continue
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def table(results: dict[str, Any], aider: list[dict[str, float]]) -> str:
    edits = ("edit", "edit_use", "edit_common")
    lines = [
        "| system | same | new chat | edit | edit use | edit common | edit / new chat | edit use / new chat"
        " | edit common / new chat |"
    ]
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for system, res in results.items():
        m = res["median"]
        times = " | ".join(f"{m[k] * 1e3:.0f} ms" for k in ("same", "new_chat", *edits))
        ratios = " | ".join(f"{m[k] / m['new_chat']:.2f}" for k in edits)
        lines.append(f"| {system} | {times} | {ratios} |")
    if aider:
        same = statistics.median(a["warm_same"] for a in aider)
        new = statistics.median(a["warm_new_chat_2"] for a in aider)
        after = statistics.median(a["warm_after_edit"] for a in aider)
        lines.append(
            f"| Aider 0.86.2 ({len(aider)} run) | {same * 1e3:.0f} ms | {new * 1e3:.0f} ms | {after * 1e3:.0f} ms"
            f" | | | {after / new:.2f} | | |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--baseline", default=None, help="also measure hybridmap at this commit")
    parser.add_argument(
        "--blocks",
        type=int,
        default=3,
        help="each system runs this many children of rounds/blocks rounds, alternating with the others'",
    )
    parser.add_argument("--aider-repeats", type=int, default=1)
    parser.add_argument("--no-aider", action="store_true")
    parser.add_argument(
        "--dependents-from-pairs",
        action="store_true",
        help="also measure with the [R:N] marks counted from the graph's pairs (see dependents_from_pairs)",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    os.nice(max(0, 10 - os.nice(0)))
    WORK.mkdir(parents=True, exist_ok=True)
    root = (args.corpus or stdlib_corpus()).resolve()
    load_before = os.getloadavg()
    systems: dict[str, tuple[Path | None, bool]] = {"hybridmap": (None, False)}
    if args.dependents_from_pairs:
        systems["hybridmap, marks from pairs"] = (None, True)
    if args.baseline:
        systems[f"hybridmap@{args.baseline}"] = (baseline_tree(args.baseline, WORK), False)
    # Children alternate (A B, then B A, ...) so that the machine's drift meets every system alike.
    parts: dict[str, list[dict[str, Any]]] = {system: [] for system in systems}
    blocks = max(1, min(args.blocks, args.rounds))
    for block in range(blocks):
        order = list(systems) if block % 2 == 0 else list(reversed(systems))
        rounds = args.rounds // blocks + (block < args.rounds % blocks)
        for system in order:
            tree, from_pairs = systems[system]
            cache = str(WORK / f"cache-{list(systems).index(system)}")
            spec = {"root": str(root), "tokens": args.tokens, "rounds": rounds, "cache": cache}
            parts[system].append(run_child({**spec, "dependents_from_pairs": from_pairs}, tree))
    results = {system: merged(runs) for system, runs in parts.items()}
    aider = [] if args.no_aider else run_aider(root, args.tokens, args.aider_repeats)
    report = {
        "corpus": str(root),
        "tokens": args.tokens,
        "rounds": args.rounds,
        "edit_file": EDIT_FILE,
        "chat_files": [CHAT_A, CHAT_B],
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "cpus": os.cpu_count(),
        "results": results,
        "aider": aider,
    }
    (WORK / "results.json").write_text(json.dumps(report, indent=2))
    name, definers, users = next(iter(results.values()))["common_name"]
    print(f"corpus {root}, budget {args.tokens}, medians of {args.rounds} rounds")
    print(f"edit common: '{name}' (defined in {definers} files, used in {users})")
    print(f"edit use: a call to '{next(iter(results.values()))['new_use']}' appended")
    print(f"load average before {load_before[0]:.2f}, after {report['load_after'][0]:.2f} ({os.cpu_count()} cpus)\n")
    print(table(results, aider))
    for system, res in results.items():
        per_child = ", ".join(
            " / ".join(f"{c[k] / c['new_chat']:.2f}" for k in ("edit", "edit_use", "edit_common"))
            for c in res["children"]
        )
        print(f"{system}, per child (edit, edit use, edit common / new chat): {per_child}")
    print(f"\nraw results: {WORK / 'results.json'}")


if __name__ == "__main__":
    main()
