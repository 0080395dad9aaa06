"""A parse worker process: ``python -m hybridmap.sources.parse_worker``.

Reads one pickled job description on stdin, writes a stream of pickled
``(path, ParseOutcome)`` frames on stdout (8-byte length prefix).
Spawned explicitly (not via multiprocessing) so it never re-imports the
caller's ``__main__`` and never forks a threaded process.
"""

from __future__ import annotations

import pickle
import struct
import sys
from pathlib import Path

from ..languages import LanguageRegistry
from .treesitter import parse_serial


def main() -> None:
    job = pickle.load(sys.stdin.buffer)
    registry = LanguageRegistry.load([Path(d) for d in job["config_dirs"]],
                                     [Path(d) for d in job["query_dirs"]])
    out = sys.stdout.buffer
    for path, outcome in parse_serial(job["jobs"], registry, job["options"]):
        frame = pickle.dumps((path, outcome), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(struct.pack("<Q", len(frame)))
        out.write(frame)
    out.flush()


if __name__ == "__main__":
    main()
