"""Compiling the tag queries: this checkout's against an older commit's, and the tags they give.

    python benchmarks/bench_query_compile.py [--old REV] [--rounds 7] [--corpus DIR ...]

tree-sitter compiles a query in one call that holds the GIL (so it stalls every other thread,
an agent's event loop among them) and every process compiles each language it meets once. For
each language, each round compiles the old commit's query text (``git show REV:...``, inherits
resolved) and this checkout's, alternating which goes first; medians and new / old. With
``--corpus``, every file of the language under those directories is parsed once and both
queries run on it (the new one's ``#hm-ancestors?`` applied as the map applies them): the files
whose definitions or references differ are counted (the change is meant to keep them equal).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tree_sitter import Parser, Query, QueryCursor  # noqa: E402

from hybridmap.languages import query_predicates  # noqa: E402
from hybridmap.languages.registry import LanguageRegistry, read_query  # noqa: E402

LANGUAGES = ("python", "c", "cpp", "typescript", "tsx", "javascript", "rust", "go", "java")
_INHERITS = re.compile(r"^; inherits: (\w+)", re.M)


def old_query(rev: str, name: str) -> str:
    text = subprocess.run(
        ["git", "-C", str(HERE.parent), "show", f"{rev}:hybridmap/languages/queries/{name}-tags.scm"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    parent = _INHERITS.search(text)
    return (old_query(rev, parent.group(1)) + "\n" if parent else "") + text


def compile_ms(language: object, source: str) -> float:
    started = time.perf_counter()
    Query(language, source)  # type: ignore[arg-type]
    return (time.perf_counter() - started) * 1000


def tags(query: Query, root: object, checks: query_predicates.AncestorChecks) -> set[tuple[str, int, int]]:
    found = [
        (pattern, caps)
        for pattern, caps in QueryCursor(query).matches(root)  # type: ignore[arg-type]
        if pattern not in checks or query_predicates.passes(checks[pattern], caps)
    ]
    return {(c, n.start_byte, n.end_byte) for _, caps in found for c, nodes in caps.items() for n in nodes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="HEAD~1")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--corpus", nargs="*", default=[])
    args = parser.parse_args()
    registry = LanguageRegistry.load()
    print("| language | old ms | new ms | new / old | files | differing |\n|---|---:|---:|---:|---:|---:|")
    for name in LANGUAGES:
        language = registry.compiled(name).ts_language
        new_text = read_query(registry.get(name).query_path)
        old_text = old_query(args.old, name)
        old, new = [], []
        for round_ in range(args.rounds):
            pair = [(old, old_text), (new, new_text)]
            for times, text in pair if round_ % 2 == 0 else reversed(pair):
                times.append(compile_ms(language, text))
        files = differing = 0
        if args.corpus:
            old_query_, new_query = Query(language, old_text), Query(language, new_text)
            ts_parser = Parser(language)
            for directory in args.corpus:
                for path in sorted(Path(directory).rglob("*")):
                    if not path.is_file() or registry.language_for(path.name) != name:
                        continue
                    root = ts_parser.parse(path.read_bytes()).root_node
                    files += 1
                    new_checks = query_predicates.ancestor_checks(new_query, new_text)
                    differing += tags(old_query_, root, {}) != tags(new_query, root, new_checks)
        o, n = statistics.median(old), statistics.median(new)
        print(f"| {name} | {o:.0f} | {n:.0f} | {n / o:.2f} | {files} | {differing} |")


if __name__ == "__main__":
    main()
