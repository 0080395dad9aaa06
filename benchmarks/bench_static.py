"""Static map benchmark: hybridmap vs the tree-sitter floor vs Aider's RepoMap, same files, same run.

    python benchmarks/bench_static.py [--repeats 3] [--tokens 1024] [--corpus stdlib|gin|PATH ...]

Every measurement runs in a fresh process; the table reports medians over the
repeats and ratios against the floor and against Aider measured in the same run.
Corpora are scratch copies under benchmarks/.work/ (never committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _common import extract_mirror  # noqa: E402

from hybridmap.languages.registry import LanguageRegistry  # noqa: E402
from hybridmap.settings import Settings  # noqa: E402
from hybridmap.workspace.walk import list_files  # noqa: E402

# (chat A, chat B, edited file) per corpus: real files with real neighbours.
SCENARIOS = {
    "stdlib": ("json/decoder.py", "asyncio/tasks.py", "email/message.py"),
    "gin": ("context.go", "routergroup.go", "tree.go"),
}


def prepare_stdlib() -> Path:
    dest = WORK / "corpora" / "stdlib"
    if dest.exists():
        return dest
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
    return dest


def prepare_gin() -> Path | None:
    dest = WORK / "corpora" / "gin"
    if dest.exists():
        return dest
    mirror = Path("/work/.mirror/gin-gonic+gin/repo")
    if not mirror.exists():
        return None
    extract_mirror(mirror, dest)
    return dest


def file_list(root: Path) -> Path:
    registry = LanguageRegistry.load()
    paths = [p for p in list_files(root, Settings()).paths if registry.language_for(p)]
    target = WORK / f"{root.name}.files"
    target.write_text("\n".join(paths) + "\n")
    return target


def run_json(cmd: list[str]) -> dict[str, float]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[1]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--corpus", action="append", default=None)
    ap.add_argument("--no-aider", action="store_true")
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    aider_python = None
    if not args.no_aider:
        aider_python = (
            subprocess.run(["bash", str(HERE / "setup_aider_env.sh")], check=True, capture_output=True, text=True)
            .stdout.strip()
            .splitlines()[-1]
        )
    report: dict[str, object] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "tokens": args.tokens,
        "repeats": args.repeats,
        "corpora": {},
    }
    for name in args.corpus or ["stdlib", "gin"]:
        root = prepare_stdlib() if name == "stdlib" else prepare_gin() if name == "gin" else Path(name)
        if root is None:
            print(f"skipping {name}: corpus not available")
            continue
        chat_a, chat_b, edit = SCENARIOS[name]
        files = file_list(root)
        floors, ours, aiders = [], [], []
        for _ in range(args.repeats):
            floors.append(run_json([sys.executable, str(HERE / "probe_floor.py"), str(root), str(files)]))
            ours.append(
                run_json(
                    [
                        sys.executable,
                        str(HERE / "probe_hybridmap.py"),
                        str(root),
                        chat_a,
                        chat_b,
                        edit,
                        str(args.tokens),
                        str(WORK / "cache"),
                    ]
                )
            )
            if aider_python:
                aiders.append(
                    run_json(
                        [
                            aider_python,
                            str(HERE / "probe_aider.py"),
                            str(root),
                            str(files),
                            chat_a,
                            chat_b,
                            edit,
                            str(args.tokens),
                        ]
                    )
                )
        entry: dict[str, object] = {
            "files": floors[0]["files"],
            "lines": floors[0]["lines"],
            "floor": [f["floor"] for f in floors],
            "hybridmap": ours,
            "aider": aiders,
        }
        report["corpora"][name] = entry  # type: ignore[index]
        floor = statistics.median(f["floor"] for f in floors)
        print(
            f"\n### {name}: {int(floors[0]['files'])} files, {int(floors[0]['lines'])} lines, "
            f"budget {args.tokens}, medians of {args.repeats}\n"
        )
        print("| measurement | hybridmap | Aider | hybridmap / Aider | hybridmap / floor |")
        print("|---|---:|---:|---:|---:|")
        print(f"| floor: read + bare tree-sitter parse, 1 core | {floor:.3f} s | | | 1.00 |")
        for key in ("cold", "warm_same", "warm_new_chat", "warm_new_chat_2", "warm_after_edit"):
            o = median(ours, key)
            a = median(aiders, key) if aiders else float("nan")
            print(f"| {key} | {o:.3f} s | {a:.3f} s | {o / a:.3f} | {o / floor:.2f} |")
        for key in ("cold_tokens", "warm_new_chat_tokens"):
            o = median(ours, key)
            a = median(aiders, key) if aiders else float("nan")
            print(f"| {key} (budget {args.tokens}) | {o:.0f} | {a:.0f} | | |")
        o_rss = median(ours, "peak_rss_mb")
        w_rss = median(ours, "peak_rss_workers_mb")
        a_rss = median(aiders, "peak_rss_mb") if aiders else float("nan")
        print(f"| peak RSS (main process) | {o_rss:.0f} MB | {a_rss:.0f} MB | {o_rss / a_rss:.2f} | |")
        print(f"| peak RSS (largest parse worker) | {w_rss:.0f} MB | | | |")
    out = WORK / "bench_static.json"
    out.write_text(json.dumps(report, indent=2))
    print(f"\nraw results: {out}")


if __name__ == "__main__":
    main()
