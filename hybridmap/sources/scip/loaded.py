"""An index file read, checked and digested once (cached by the file's size and mtime).

What :class:`~.source.ScipSource` needs of an index, whatever the snapshot: the documents by
path (paths checked: never ``..``, absolute or outside the root), which documents define each
symbol, which packages are the repository's own, and the sidecar of content hashes written by
``hybridmap index`` (``<index>.files.json``) when there is one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...infra.boundaries import inside
from ...model import Diagnostic
from ...settings import Settings
from .index import ROLE_DEFINITION, Document, ScipIndex
from .symbols import is_local, parse_symbol
from .wire import WireError

MAX_INDEX_BYTES = 1 << 30
"""An index larger than this is not read (it is held in memory while decoded)."""
MAX_SIDECAR_BYTES = 1 << 28
SIDECAR_SUFFIX = ".files.json"
SIDECAR_FORMAT = 1


def default_index_path(root: Path, settings: Settings) -> Path:
    """Where ``hybridmap index ROOT`` writes by default (and what ``scip_index = "auto"`` names):
    our cache directory, one folder per resolved root. Never inside the repository: the walk
    would list it, and a repository must not be able to ship the index its own map trusts."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", root.name)[:40] or "root"
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:12]
    return settings.resolved_cache_dir() / "scip" / f"{name}-{digest}" / "index.scip"


def configured_index(root: Path, settings: Settings) -> Path | None:
    """The index ``settings.scip_index`` names for ``root`` (resolved), or None when it is off
    (empty). ``auto`` is :func:`default_index_path`; a relative path is relative to ``root``."""
    value = settings.scip_index
    if not value:
        return None
    if value == "auto":
        return default_index_path(root, settings)
    path = Path(value).expanduser()
    return path if path.is_absolute() else root / path


def sidecar_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + SIDECAR_SUFFIX)


@dataclass(frozen=True, slots=True)
class LoadedIndex:
    key: tuple[int, int]
    """(size, mtime_ns) of the index file when it was read."""
    mtime_ns: int
    documents: dict[str, tuple[Document, ...]]
    """Checked relative path -> its documents (usually one; two indexers may describe a file)."""
    definitions: dict[str, frozenset[str]]
    """Global symbol -> the paths whose documents define it."""
    packages: frozenset[str]
    """Packages of the symbols the documents define: the repository's own code."""
    sidecar: dict[str, str] | None
    """Indexed path -> sha256 of the content indexed; None: no (valid) sidecar, judge by mtime."""
    diagnostics: tuple[Diagnostic, ...]
    stats: dict[str, float]


def _read_bounded(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most ``limit`` bytes (OSError or WireError otherwise)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WireError(f"{path}: not a regular file")
        if info.st_size > limit:
            raise WireError(f"{path}: {info.st_size} bytes, more than the {limit} read")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise WireError(f"{path}: grew past {limit} bytes while read")
    return data, info


def index_key(index_path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(index_path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def load_index(root: Path, index_path: Path) -> LoadedIndex:
    """Read and digest ``index_path``; OSError or :class:`WireError` when it cannot be used."""
    started = time.perf_counter()
    data, info = _read_bounded(index_path, MAX_INDEX_BYTES)
    index = ScipIndex.decode(data)
    decoded = time.perf_counter()
    documents: dict[str, list[Document]] = {}
    refused: list[str] = []
    for document in index.documents:
        path = checked_path(root, document.relative_path)
        if path is None:
            refused.append(document.relative_path)
            continue
        documents.setdefault(path, []).append(document)
    definitions, packages = _definitions(documents)
    diagnostics: list[Diagnostic] = []
    if refused:
        shown = ", ".join(repr(p)[:80] for p in refused[:3])
        diagnostics.append(
            Diagnostic(
                str(index_path),
                "scip_path_refused",
                f"{len(refused)} document paths in the index are absolute, contain '..' or lead outside "
                f"the root; ignored ({shown})",
            )
        )
    sidecar, problem = _read_sidecar(index_path, hashlib.sha256(data).hexdigest())
    if problem:
        diagnostics.append(Diagnostic(str(index_path), "scip_sidecar", problem))
    occurrences = sum(len(d.occurrences) for d in index.documents)
    stats = {
        "scip_index_bytes": float(len(data)),
        "scip_documents": float(len(index.documents)),
        "scip_occurrences": float(occurrences),
        "scip_decode_seconds": decoded - started,
        "scip_load_seconds": time.perf_counter() - started,
    }
    return LoadedIndex(
        (info.st_size, info.st_mtime_ns),
        info.st_mtime_ns,
        {path: tuple(docs) for path, docs in documents.items()},
        definitions,
        packages,
        sidecar,
        tuple(diagnostics),
        stats,
    )


def checked_path(root: Path, relative: str) -> str | None:
    """``relative`` as a repository path, or None when an index may not name it: empty, absolute,
    with empty, ``.`` or ``..`` parts, a NUL or backslash, or resolving (symlinks) outside the
    root. Only the path is resolved; nothing is read."""
    if not relative or "\0" in relative or "\\" in relative or relative.startswith("/"):
        return None
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    try:
        real = (root / PurePosixPath(relative)).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return relative if inside(root, real) else None


def _definitions(documents: dict[str, list[Document]]) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    where: dict[str, set[str]] = {}
    packages: set[str] = set()
    for path, docs in documents.items():
        for document in docs:
            for occurrence in document.occurrences:
                symbol = occurrence.symbol
                if occurrence.roles & ROLE_DEFINITION and symbol and not is_local(symbol):
                    where.setdefault(symbol, set()).add(path)
    for symbol in where:
        parsed = parse_symbol(symbol)
        if parsed is not None:
            packages.add(parsed.package)
    return {symbol: frozenset(paths) for symbol, paths in where.items()}, frozenset(packages)


def _read_sidecar(index_path: Path, index_sha: str) -> tuple[dict[str, str] | None, str]:
    """(path -> sha256, "") from a valid sidecar of this very index; (None, why) otherwise
    ("" when there is none at all: the source says so once, as the mtime rule)."""
    path = sidecar_path(index_path)
    try:
        data, _ = _read_bounded(path, MAX_SIDECAR_BYTES)
    except FileNotFoundError:
        return None, ""
    except (OSError, WireError) as exc:
        return None, f"{path.name}: cannot read ({exc}); staleness judged by mtime"
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return None, f"{path.name}: not JSON; staleness judged by mtime"
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("format") != SIDECAR_FORMAT or not isinstance(files, dict):
        return None, f"{path.name}: not a format-{SIDECAR_FORMAT} file list; staleness judged by mtime"
    if document.get("index_sha256") != index_sha:
        return None, f"{path.name}: written for another index; staleness judged by mtime"
    out = {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str) and len(v) == 64}
    return out, ""


def write_sidecar(index_path: Path, files: dict[str, str]) -> Path:
    """Write ``<index>.files.json`` for the index now at ``index_path``: the sha256 of each
    indexed file's content (as the walk reads it) and of the index itself."""
    digest = hashlib.sha256(index_path.read_bytes()).hexdigest()
    path = sidecar_path(index_path)
    body = {"format": SIDECAR_FORMAT, "index_sha256": digest, "files": dict(sorted(files.items()))}
    temporary = path.with_name(path.name + ".tmp")
    # ASCII JSON: a file name that is not UTF-8 (a surrogate escape) round-trips as \udcXX.
    temporary.write_text(json.dumps(body, indent=0), "ascii")
    temporary.replace(path)
    return path
