"""``hybridmap index --export / --import``: an index artifact built by one map, carried by a CI
cache, put into another machine's cache (the format: :mod:`hybridmap.features.index_artifact`)."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ... import __version__
from ...api.sync import RepoMap
from ...features.index_artifact import HISTORY_KEY, ArtifactError, ArtifactReport, read_history, write_artifact
from ...store import codec
from ...store.cache import Cache


def export_artifact(
    root: Path,
    out: Path,
    overrides: Mapping[str, Any],
    *,
    mode: Literal["static", "hybrid"] = "static",
    server_wait: float = 0.0,
) -> ArtifactReport:
    """Map ``root`` once into a new private cache directory (every file parsed, no parse
    deadline, servers started only for ``hybrid``) and write every entry that map stored to
    ``out``, and ``root``'s history. A private directory, not the user's cache: the artifact
    holds what this repository's map needs, and nothing of other repositories the user maps."""
    scratch = Path(tempfile.mkdtemp(prefix="hybridmap-export-"))
    try:
        run = {**overrides, "cache_dir": str(scratch / "cache"), "use_cache": True, "parse_deadline_seconds": 0.0}
        with RepoMap(root, overrides=run, start_servers=mode == "hybrid") as repo:
            result = repo.map(mode=mode, tokens=1024, server_wait=server_wait)
            settings = repo.settings
        log, shallow = read_history(root, settings)
        history = [(HISTORY_KEY, codec.encode(log))] if log is not None else []
        cache = Cache(scratch / "cache", settings.cache_size_limit, settings.cache_timeout_seconds)
        try:
            entries, size = write_artifact(out, itertools.chain(cache.raw_items(), history), __version__)
        finally:
            cache.close()
    except OSError as exc:
        raise ArtifactError(f"cannot write {out}: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    commits = len(log.commits) if log is not None else 0
    return ArtifactReport(
        out, entries - len(history), size, map_stats=dict(result.stats), history_commits=commits, shallow=shallow
    )
