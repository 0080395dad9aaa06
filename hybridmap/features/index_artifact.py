"""An index artifact: what a warm map of a repository needs, in one file a CI cache can carry.

``hybridmap index ROOT --export FILE`` maps ROOT once into an empty, private cache directory
(every file parsed, no deadline; with ``--mode hybrid`` the servers' answers too) and writes every
entry that map stored (:func:`write_artifact`; the run is the CLI's,
:mod:`hybridmap.frontends.cli.artifact`, since it maps through the API); ``hybridmap index ROOT
--import FILE`` puts them into the user's own cache, so the next map there reads them instead of
parsing. Entries are keyed by content (the
file's sha256, the grammar and query fingerprint, the extraction settings: see
:mod:`hybridmap.store.cache`), so an artifact built on another machine, or at another commit,
serves exactly the files whose bytes are the same and misses the rest. The exporting clone's
history (its last ``co_change_max_commits`` commits and the files each changed, under
``HISTORY_KEY``) comes along: an import stores it for ROOT (:func:`imported_history_key`), and a
shallow clone there continues its own few commits with it for co-change
(:mod:`hybridmap.pipeline.inputs.cochange`).

The format is ours (no pickle, no SQLite file from elsewhere): a gzip stream of
``MAGIC`` + a JSON line (format, codec format, cache schema, hybridmap version),
then per entry ``struct "<HI32s"`` (key length, value length, sha256 of key + value), the key
(UTF-8) and the value (our codec's bytes), and an end record of key length 0. Reading is strict
and bounded: a wrong magic or format is refused whole (:class:`ArtifactError`); an entry whose
digest does not match, whose value is not our codec's, or that is larger than
``artifact_max_entry_bytes`` is skipped and counted; the whole stream stops at
``artifact_max_bytes`` decompressed; a stream cut short keeps the entries before the cut and
says so. What an entry holds is decoded only when a map reads it, by the codec, which builds
data records and nothing else (a bad one is dropped and its file parsed again).

Trust: an artifact is data the user chose to import, as their cache directory is; it cannot make
hybridmap run anything or read outside the root, but whoever wrote it chose what the map shows
for the files it covers (docs/security.md).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import struct
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from ..infra import git
from ..pipeline.inputs.cochange import imported_history_key
from ..settings import Settings
from ..store import codec
from ..store.cache import CACHE_SCHEMA, Cache

MAGIC = b"hybridmap-index\n"
#: Bump when the layout changes; an artifact of another format is refused whole.
FORMAT = 1
_ENTRY = struct.Struct("<HI32s")
#: The JSON line after the magic: never longer than this.
_META_MAX = 4_096
#: Entries written to the cache per transaction on import.
_IMPORT_BATCH = 2_000
_VALUE_PREFIX = codec.MAGIC + bytes((codec.FORMAT,))
#: What the header says and an import must find the same: the layout, the codec's format and the
#: cache schema the entries were written for (the one rule, for the writer and the reader).
_COMPATIBLE = {"format": FORMAT, "codec": codec.FORMAT, "cache_schema": CACHE_SCHEMA}
#: The key of the exporting clone's history in an artifact (never a cache key: an import stores
#: it under the importing root's own key).
HISTORY_KEY = "history"


class ArtifactError(ConfigError):
    """Not an index artifact hybridmap can read (another file, format or codec), or one it
    cannot write."""


@dataclass(frozen=True, slots=True)
class ArtifactReport:
    """What an export wrote or an import took."""

    path: Path
    entries: int
    """Entries written (export) or stored in the cache (import)."""
    value_bytes: int
    skipped: Mapping[str, int] = field(default_factory=dict)
    """Import: entries left out, by why (``digest``, ``not our codec``, ``too large``, ``too many
    bytes``)."""
    truncated: bool = False
    """Import: the stream ended before its end record (the entries before the cut are kept)."""
    map_stats: Mapping[str, float] = field(default_factory=dict)
    """Export: the statistics of the map that filled the cache (files parsed, servers...)."""
    history_commits: int = 0
    """Commits of history written (export) or stored for the root (import)."""
    shallow: bool = False
    """Export: the clone was shallow, so its history is short (a CI checkout's default)."""


def read_history(root: Path, settings: Settings) -> tuple[git.CommitLog | None, bool]:
    """The history an export carries: ``root``'s last ``co_change_max_commits`` commits as its
    log gives them, a shallow clone's edge left out (its changes are its whole tree); and whether
    the clone is shallow. None outside a repository or when git cannot say."""
    timeout = settings.co_change_timeout_seconds
    try:
        head = git.head_commit(root, timeout)
        if head is None:
            return None, False
        history = git.log_name_only(root, settings.co_change_max_commits, timeout, head=head)
        shallow = git.is_shallow(root, timeout)
    except git.GitUnavailable:
        return None, False
    commits = tuple(c for c in history.commits if not (shallow and c.parentless))
    return git.CommitLog(head, commits), shallow


def _digest(key: bytes, value: bytes) -> bytes:
    return hashlib.sha256(key + b"\0" + value).digest()


def write_artifact(out: Path, items: Iterable[tuple[str, bytes]], version: str) -> tuple[int, int]:
    """Write ``items`` as an artifact at ``out`` (a private temporary file renamed over it), its
    header naming hybridmap ``version``; (entries, value bytes)."""
    out = out.expanduser()
    directory = out.parent if str(out.parent) else Path(".")
    fd, part = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=directory)
    entries = size = 0
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as stream:
            stream.write(MAGIC)
            stream.write(json.dumps({**_COMPATIBLE, "hybridmap": version}, sort_keys=True).encode() + b"\n")
            for key, value in items:
                key_bytes = key.encode("utf-8", "surrogatepass")
                if not key_bytes or len(key_bytes) > 0xFFFF:
                    continue
                stream.write(_ENTRY.pack(len(key_bytes), len(value), _digest(key_bytes, value)))
                stream.write(key_bytes)
                stream.write(value)
                entries += 1
                size += len(value)
            stream.write(_ENTRY.pack(0, 0, bytes(32)))
        os.replace(part, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(part)
        raise
    return entries, size


class _Reader:
    """Reads one artifact strictly, within the byte limits; counts what it skips."""

    def __init__(self, stream: gzip.GzipFile, max_bytes: int, max_entry: int) -> None:
        self._stream = stream
        self._left = max_bytes
        self._max_entry = max_entry
        self.skipped: Counter[str] = Counter()
        self.truncated = False

    def _read(self, n: int) -> bytes:
        """Exactly ``n`` bytes, or fewer at the end of the stream (or of the byte limit)."""
        if n > self._left:
            self.skipped["too many bytes"] += 1
            self._left = 0
            return b""
        data = self._stream.read(n)
        self._left -= len(data)
        return data

    def header(self, path: Path) -> None:
        if self._read(len(MAGIC)) != MAGIC:
            raise ArtifactError(f"{path} is not a hybridmap index artifact")
        line = self._stream.readline(_META_MAX)
        self._left -= len(line)
        try:
            meta = json.loads(line)
        except ValueError:
            meta = None
        if not isinstance(meta, dict):
            raise ArtifactError(f"{path}: the artifact's header is damaged")
        for name, value in _COMPATIBLE.items():
            if meta.get(name) != value:
                raise ArtifactError(
                    f"{path}: an artifact of {name} {meta.get(name)!r}; this hybridmap reads {value} "
                    "(export it again with this version)"
                )

    def entries(self) -> Iterator[tuple[str, bytes]]:
        while True:
            head = self._read(_ENTRY.size)
            if len(head) < _ENTRY.size:
                self.truncated = self._left > 0
                return
            key_len, value_len, digest = _ENTRY.unpack(head)
            if key_len == 0:
                return
            if value_len > self._max_entry:
                self.skipped["too large"] += 1
                if not self._skip(key_len + value_len):
                    return
                continue
            key_bytes, value = self._read(key_len), self._read(value_len)
            if len(key_bytes) < key_len or len(value) < value_len:
                self.truncated = self._left > 0
                return
            if _digest(key_bytes, value) != digest:
                self.skipped["digest"] += 1
            elif not value.startswith(_VALUE_PREFIX):
                self.skipped["not our codec"] += 1
            else:
                try:
                    yield key_bytes.decode("utf-8", "surrogatepass"), value
                except UnicodeDecodeError:
                    self.skipped["digest"] += 1

    def _skip(self, n: int) -> bool:
        """Read past ``n`` bytes in steps (never held at once); False when the stream ended."""
        while n > 0:
            step = min(n, 1 << 20)
            if len(self._read(step)) < step:
                self.truncated = self._left > 0
                return False
            n -= step
        return True


def import_artifact(path: Path, cache: Cache, settings: Settings, root: Path | None = None) -> ArtifactReport:
    """Put the entries of the artifact at ``path`` into ``cache``, and its history there for
    ``root`` (see the module docstring; without ``root`` the history is left out)."""
    path = path.expanduser()
    entries = size = history = 0
    try:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            reader = _Reader(stream, settings.artifact_max_bytes, settings.artifact_max_entry_bytes)
            try:
                reader.header(path)
            except (EOFError, zlib.error) as exc:  # cut or damaged before its header ended
                raise ArtifactError(f"{path}: the artifact's header is damaged") from exc
            batch: dict[str, bytes] = {}
            try:
                for key, value in reader.entries():
                    if key == HISTORY_KEY:
                        history = _store_history(value, cache, root, reader.skipped)
                        continue
                    batch[key] = value
                    size += len(value)
                    if len(batch) >= _IMPORT_BATCH:
                        cache.set_raw_many(batch)
                        entries += len(batch)
                        batch = {}
            except (EOFError, OSError, zlib.error) as exc:  # a gzip stream cut short or damaged
                if isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile) and exc.errno is not None:
                    raise
                reader.truncated = True
            cache.set_raw_many(batch)
            entries += len(batch)
    except gzip.BadGzipFile as exc:
        raise ArtifactError(f"{path} is not a hybridmap index artifact ({exc})") from exc
    except OSError as exc:
        raise ArtifactError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return ArtifactReport(path, entries, size, dict(reader.skipped), reader.truncated, history_commits=history)


def _store_history(value: bytes, cache: Cache, root: Path | None, skipped: Counter[str]) -> int:
    """Store an artifact's history for ``root`` (checked now: the count is reported); its commits."""
    try:
        log = codec.decode(value)
    except codec.CodecError:
        log = None
    if not isinstance(log, git.CommitLog):
        skipped["not our codec"] += 1
        return 0
    if root is not None:
        cache.set_raw_many({imported_history_key(root): value})
    return len(log.commits)
