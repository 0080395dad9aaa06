"""The last snapshot's trusted file states, kept on disk for the next process.

A one-shot map (the CLI without its daemon) starts with no snapshot, so its refresh read and
hashed every file: 28 % of a warm one-shot map of 100,000 files (docs/benchmarks.md). At the end
of a process the workspace's states that carry a stat signature are written here (path, language,
content sha256, the signature); the next process's first refresh trusts a file whose signature is
still the same, as a long-lived map trusts its own last refresh (``workspace.state``), and reads
the rest. A state read with a diagnostic (transcoded, unreadable) is not kept: it is read again.

The file lives in the cache directory (used only when it is the user's alone: ``store.cache``),
named by the root's path, and is our own JSON, checked field by field: anything else, or a root
that is not this one, is ignored whole (the refresh reads every file, as without it). Whoever can
write the cache directory can make a map trust a wrong hash, as they can plant a wrong parse: the
same trust, nothing executed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from ..infra.replace import read_bounded, replace_file
from .state import FileState

FORMAT = 1
#: Bytes read per listed file at most (a path, a language, a hash, four integers): with
#: ``max_files`` it bounds what a load reads.
BYTES_PER_FILE = 4_096


def states_path(cache_dir: Path, root: Path) -> Path:
    """Where ``root``'s states are kept under ``cache_dir``."""
    name = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir / "snapshots" / f"{name}.json"


def load_states(path: Path, root: Path, max_files: int) -> dict[str, FileState]:
    """The states kept at ``path`` for ``root``; empty when there are none or they are not ours."""
    data = read_bounded(path, max_files * BYTES_PER_FILE)
    if data is None:
        return {}
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("root") != str(root):
        return {}
    rows = document.get("files")
    if not isinstance(rows, list) or len(rows) > max_files:
        return {}
    states: dict[str, FileState] = {}
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 7
            and all(type(v) is str and v for v in row[:3])
            and all(type(v) is int and v >= 0 for v in row[3:])
        ):
            return {}
        rel, language, sha, *signature = row
        states[rel] = FileState(language, sha, tuple(signature))
    return states


def save_states(path: Path, root: Path, files: Mapping[str, FileState]) -> None:
    """Keep the states of ``files`` that carry a signature and no diagnostic (best effort: a
    failure leaves the next process to read every file)."""
    rows = [
        [rel, state.language, state.sha256, *state.signature]
        for rel, state in files.items()
        if state.sha256 and len(state.signature) == 4 and not state.diagnostics
    ]
    document = json.dumps({"format": FORMAT, "root": str(root), "files": rows}, separators=(",", ":"))
    replace_file(path, [document.encode("utf-8", "surrogatepass")])
