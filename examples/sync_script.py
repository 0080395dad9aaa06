"""A script that prints the map an agent would get: the synchronous facade, no event loop to manage.

    python examples/sync_script.py ROOT [--chat FILE ...] [--mention WORD ...] [--tokens N] [--wait SECONDS]

``RepoMap`` runs its own event loop in a thread, so it works from plain code (and from inside a
running loop, though agent loops should prefer ``AsyncRepoMap``: see agent_loop.py).
"""

from __future__ import annotations

import argparse
import sys

from hybridmap import RepoMap


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--chat", action="append", default=[], help="a file being edited (relative to ROOT)")
    parser.add_argument("--mention", action="append", default=[], help="an identifier or file name")
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait for language servers")
    args = parser.parse_args()

    # start_servers=False unless we wait: a one-shot script that does not wait cannot use them.
    with RepoMap(args.root, start_servers=args.wait > 0) as repo:
        result = repo.map(
            chat_files=args.chat,
            mentioned_idents=args.mention,
            tokens=args.tokens,
            mode="hybrid",
            server_wait=args.wait,
        )
    sys.stdout.write(result.text)
    for language, report in result.servers.items():
        print(f"# {language}: {report.state} ({report.server or 'no server'})", file=sys.stderr)
    for diagnostic in result.diagnostics:
        print(f"# {diagnostic.kind}: {diagnostic.path}: {diagnostic.message}", file=sys.stderr)
    print(f"# {result.tokens}/{result.budget} tokens, edges {result.edges}", file=sys.stderr)
    return 0 if result.files else 1


if __name__ == "__main__":
    sys.exit(main())
