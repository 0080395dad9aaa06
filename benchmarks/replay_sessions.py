"""Replay a repository's history as one agent session and measure how much of each map's text
a prompt cache keeps: the stable layout (issue 28, item 2) against today's rank order.

The commits ``hybridmap eval`` would pick (the most recent qualifying ones), oldest first, each
checked out at its parent in one scratch worktree that one long-lived map follows (as an agent's
repository moves under it); at each, the co-edit task's chat file is open and its map is asked
for. Per map: the share of its tokens in the longest common prefix with the session's previous
map (what a provider's prompt cache would reuse), and the co-edit recall, MRR and first-five
recall of the other changed files, as ``hybridmap eval`` scores them. Every system replays the
same commits; with ``--turns``, one conversation per commit of three or more files instead, its
files edited one after another (turn t: file t open, the earlier ones edited; the map should show
those not edited yet). Systems: ``plain`` (rank order), ``stable`` (``stable_layout``), and each
``--variant NAME:key=value,...`` (the stable layout with those settings).

    python benchmarks/replay_sessions.py benchmarks/.work/corpora/chi --commits 30 --tokens 1024 \\
        --variant deep:stable_layout_depth=100 --json-out /tmp/chi-sessions.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from hybridmap import AsyncRepoMap
from hybridmap.frontends.evaluate.diffs import file_diff
from hybridmap.frontends.evaluate.git import open_repository
from hybridmap.frontends.evaluate.history import select_commits
from hybridmap.frontends.evaluate.metrics import MapOutcome, ShownFile, score
from hybridmap.frontends.evaluate.run import parse_variant
from hybridmap.frontends.evaluate.tasks import Task, co_edit_chat_file
from hybridmap.frontends.evaluate.worktree import ScratchWorktree
from hybridmap.infra.sanitize import escape_path
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.pack.tokens import make_counter
from hybridmap.settings import Settings


def common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])  # noqa: RUF071 - characters, not path components, are meant


def text_position(text: str, path: str) -> int:
    """Where ``path``'s first block starts in a map's text (a header line starts with the path)."""
    shown = escape_path(path)
    for start in (0, *(i + 1 for i, c in enumerate(text) if c == "\n")):
        if text.startswith(shown, start) and text[start + len(shown) : start + len(shown) + 1] in (":", " ", "\n"):
            return start
    return len(text)


async def replay(
    root: Path, commits: int, tokens: int, systems: dict[str, dict[str, Any]], cache: Path, turns: bool = False
) -> dict:
    repo = open_repository(root)
    registry = LanguageRegistry.load()
    selection = select_commits(repo, "HEAD", commits, lambda p: registry.language_for(p) is not None, scan_limit=5000)
    ordered = list(reversed(selection.commits))  # a session moves forward in time
    counter = make_counter(Settings().encoding, None)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in systems}
    with ScratchWorktree(repo) as worktree:
        maps: dict[str, AsyncRepoMap] = {}
        previous: dict[str, str] = {}
        try:
            for commit in ordered:
                checkout = await asyncio.to_thread(worktree.checkout, commit.parent)
                diffs = [file_diff(repo, commit.parent, commit.sha, c.old_path, c.new_path) for c in commit.changes]
                order = [d.old_path for d in sorted(diffs, key=lambda d: (-(d.added + d.deleted), d.old_path))]
                if turns:  # one conversation per commit: its files edited one after another
                    if len(order) < 3:
                        continue
                    steps = [(order[t], tuple(order[:t]), tuple(order[t + 1 :])) for t in range(len(order) - 1)]
                    previous.clear()
                    for repo_map in maps.values():
                        repo_map.forget_session()
                else:  # one conversation over the history: each commit's co-edit task
                    chat = co_edit_chat_file(diffs).old_path
                    steps = [(chat, (), tuple(p for p in order if p != chat))]
                for chat, edited, targets in steps:
                    task = Task("co-edit", (chat,), (), (), targets, ())
                    for name, overrides in systems.items():
                        if name not in maps:
                            settings = {"cache_dir": str(cache), **overrides}
                            maps[name] = AsyncRepoMap(checkout, overrides=settings, start_servers=False)
                        result = await maps[name].map(
                            chat_files=[chat], edited_files=edited, tokens=tokens, mode="static"
                        )
                        # Scored in the order the text shows the files (a stable layout's JSON keeps
                        # rank order, but the model reads the text).
                        files = sorted(result.files, key=lambda f: text_position(result.text, f.path))
                        shown = tuple(ShownFile(f.path, tuple(s.name for s in f.symbols)) for f in files)
                        got = score(task, MapOutcome(shown, result.tokens, 0.0))
                        row = {"recall": got.file_recall, "mrr": got.reciprocal_rank, "top5": got.first_five_recall}
                        if name in previous:
                            kept = counter.count(common_prefix(previous[name], result.text))
                            row["prefix"] = kept / max(1, result.tokens)
                        previous[name] = result.text
                        rows[name].append(row)
        finally:
            for repo_map in maps.values():
                await repo_map.aclose()

    def mean(name: str, key: str) -> float:
        values = [r[key] for r in rows[name] if key in r]
        return statistics.fmean(values) if values else 0.0

    return {
        "root": str(root),
        "commits": len(ordered),
        "tokens": tokens,
        "systems": {
            name: {k: round(mean(name, k), 4) for k in ("prefix", "recall", "mrr", "top5")} for name in systems
        },
        "maps": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--variant", action="append", default=[], help="NAME:key=value,... on top of stable")
    parser.add_argument(
        "--turns",
        action="store_true",
        help="one conversation per commit of 3+ files, its files edited one after another (the map "
        "at each turn should show the files not edited yet), instead of one over the history",
    )
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    systems: dict[str, dict[str, Any]] = {"plain": {"stable_layout": False}, "stable": {"stable_layout": True}}
    for text in args.variant:
        variant = parse_variant(text)
        systems[variant.name] = {"stable_layout": True, **variant.overrides}
    with tempfile.TemporaryDirectory(prefix="hybridmap-replay-") as cache:
        report = asyncio.run(replay(args.root.resolve(), args.commits, args.tokens, systems, Path(cache), args.turns))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))
    maps = len(report["maps"]["plain"])
    print(f"{report['root']}: {report['commits']} commits, {maps} maps a system, {report['tokens']} tokens")
    print("| system | prefix kept | recall | MRR | first five |")
    print("|---|---:|---:|---:|---:|")
    for name, m in report["systems"].items():
        print(f"| {name} | {m['prefix']:.3f} | {m['recall']:.3f} | {m['mrr']:.3f} | {m['top5']:.3f} |")


if __name__ == "__main__":
    main()
