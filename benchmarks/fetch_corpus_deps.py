"""Fetch an evaluation corpus's Rust dependencies while the network is there (set-up, not a map).

    python benchmarks/fetch_corpus_deps.py CORPUS [--commits 200]

rust-analyzer loads a cargo project by ``cargo metadata``, which the map runs offline (a map never
reaches the network): without the crates in ``~/.cargo/registry`` every hybrid map of the corpus
is ``degraded`` ("no matching package named ... found"), and its hybrid figures are a static map's
with a server's symbols. An evaluation checks out each of the last commits in turn, so this runs
``cargo fetch --locked`` once per distinct ``Cargo.lock`` of the last ``--commits`` first-parent
commits (each in a temporary ``git worktree``, removed after), then checks that ``cargo metadata
--offline --locked`` succeeds there. Idempotent: what is fetched already is not fetched again.

Only for the project's own evaluation corpora (public repositories chosen for it): ``cargo
fetch`` reads the checkout's ``.cargo/config.toml``, which is not something to do to an untrusted
repository (hybridmap itself never runs cargo on one outside its sandbox).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path


def git(corpus: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(corpus), *args], capture_output=True, text=True, check=True).stdout


def distinct_locks(corpus: Path, commits: int) -> dict[str, str]:
    """Cargo.lock blob -> the newest commit holding it, over the last ``commits`` first-parent commits."""
    out: dict[str, str] = {}
    for commit in git(corpus, "log", "--first-parent", "--format=%H", "-n", str(commits)).split():
        found = subprocess.run(
            ["git", "-C", str(corpus), "rev-parse", "-q", "--verify", f"{commit}:Cargo.lock"],
            capture_output=True,
            text=True,
        )
        if found.returncode == 0:
            out.setdefault(found.stdout.strip(), commit)
    return out


def fetch_at(corpus: Path, commit: str) -> bool:
    """Fetch the crates of ``commit``'s lock file; whether ``cargo metadata`` then works offline."""
    with tempfile.TemporaryDirectory(prefix="hm-corpus-deps-") as scratch:
        tree = Path(scratch) / "tree"
        git(corpus, "worktree", "add", "-q", "--detach", str(tree), commit)
        try:
            subprocess.run(["cargo", "fetch", "--locked"], cwd=tree, check=True)
            check = ["cargo", "metadata", "--offline", "--locked", "--format-version", "1"]
            return subprocess.run(check, cwd=tree, capture_output=True).returncode == 0
        finally:
            git(corpus, "worktree", "remove", "--force", str(tree))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    locks = distinct_locks(corpus, args.commits)
    if not locks:
        print(f"{corpus}: no Cargo.lock in the last {args.commits} commits: nothing to fetch")
        return
    failed = [commit for commit in locks.values() if not fetch_at(corpus, commit)]
    print(f"{corpus}: {len(locks)} distinct Cargo.lock, {len(locks) - len(failed)} loading offline")
    if failed:
        print("cargo metadata --offline failed at: " + ", ".join(c[:10] for c in failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
