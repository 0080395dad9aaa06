"""A parse worker process, started by :func:`hybridmap.sources.treesitter.worker_command`
(isolated: ``python -I``, our own ``sys.path``, our own directory as cwd).

Reads one pickled job description on stdin (from its parent: trusted), writes a stream of
pickled ``(path, ParseOutcome)`` frames on stdout (8-byte length prefix), each flushed at once
so that what was parsed before the parse deadline reaches the parent even if it is then killed.
Spawned explicitly (not via multiprocessing) so it never re-imports the
caller's ``__main__`` and never forks a threaded process.
"""

from __future__ import annotations

import pickle
import struct
import sys
from pathlib import Path

from ..languages.registry import LanguageRegistry
from .treesitter import parse_serial


def main() -> None:
    job = pickle.load(sys.stdin.buffer)  # noqa: S301 - the parent process's pipe, never a file
    registry = LanguageRegistry.load([Path(d) for d in job["config_dirs"]], [Path(d) for d in job["query_dirs"]])
    out = sys.stdout.buffer
    for path, outcome in parse_serial(job["jobs"], registry, job["options"], job["deadline"]):
        frame = pickle.dumps((path, outcome), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(struct.pack("<Q", len(frame)) + frame)
        out.flush()


if __name__ == "__main__":
    main()
