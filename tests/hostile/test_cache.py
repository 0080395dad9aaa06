"""Hostile cache directories: whoever can write the cache must not be able to run code in a map.

diskcache's default serializer unpickles what it reads (CVE-2025-69872): a pickle planted in the
cache directory runs when a map reads that entry. Each test maps a real repository once into a
real diskcache directory, plants what an attacker would under the keys that map really reads (by
diskcache's own pickle mode, or as raw rows in the SQLite file), maps again in this process, and
asserts that the payload never ran, that the map equals one made with a fresh cache, and that the
diagnostics say what happened.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
import stat
from pathlib import Path

import diskcache
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.infra.git import Commit, CommitLog
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import REFERENCE_KIND_CODES, FileTags, MapResult, ParseOutcome, Provenance, Span, Symbol
from hybridmap.store import codec
from hybridmap.store.cache import Cache, SafeDisk

from ..conftest import git, write_files


class Payload:
    """Unpickles by running ``exec``: creates ``marker`` (padding makes the pickle as large as needed)."""

    def __init__(self, marker: Path, padding: int = 0) -> None:
        self.code = f"open({str(marker)!r}, 'w').write('ran')  # {'x' * padding}"

    def __reduce__(self) -> tuple[object, ...]:
        return exec, (self.code,)


def small_repo(root: Path) -> Path:
    """Python files that call each other, and one big enough for diskcache to keep its value in a file."""
    files = {
        f"pkg/mod{i}.py": "".join(
            f"def func_{i}_{j}(value):\n    return func_{(i + 1) % 8}_{j}(value)\n\n" for j in range(12)
        )
        for i in range(8)
    }
    files["big.py"] = "".join(f"def big_function_{j}(value):\n    return value\n\n" for j in range(800))
    root.mkdir()
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "sample")
    return root


def map_with(root: Path, cache: Path, registry: LanguageRegistry) -> MapResult:
    with RepoMap(root, overrides={"cache_dir": str(cache)}, registry=registry, start_servers=False) as repo:
        return repo.map(tokens=2048, mode="static")


def cache_kinds(result: MapResult) -> list[tuple[str, str]]:
    return [(d.kind, d.message) for d in result.diagnostics if d.kind.startswith("cache_")]


def filled_cache(root: Path, cache: Path, registry: LanguageRegistry) -> tuple[MapResult, list[str]]:
    """The map of a fresh cache, and the keys of the parse entries it stored (those a next map reads)."""
    expected = map_with(root, cache, registry)
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        keys = [k for (k,) in db.execute("SELECT key FROM Cache WHERE key LIKE '%tags:%' ORDER BY rowid")]
    assert len(keys) == 9
    return expected, keys


def rows(cache: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(cache / "cache.db") as db:
        return db.execute("SELECT key, raw, mode, filename, value FROM Cache ORDER BY rowid").fetchall()


def test_entries_pickled_by_diskcache_never_run(tmp_path: Path, registry: LanguageRegistry) -> None:
    """An attacker using diskcache itself: its default Disk pickles, into the row or a value file."""
    root = small_repo(tmp_path / "repo")
    cache, marker = tmp_path / "cache", tmp_path / "marker"
    expected, keys = filled_cache(root, cache, registry)
    with diskcache.Cache(str(cache)) as disk:
        for n, key in enumerate(keys):
            disk.set(key, Payload(marker, padding=40_000 if n % 2 else 0))  # even: in the row; odd: a file
        assert disk.get(keys[1], read=False) is None and marker.exists()  # the payload is real
    marker.unlink()
    result = map_with(root, cache, registry)
    assert not marker.exists()
    assert result.text == expected.text and result.stats["files_parsed"] == 9
    assert cache_kinds(result) == [
        ("cache_corrupt", "9 cached entries unusable (pickled or foreign, refused unread); dropped and parsed again")
    ]
    healed = map_with(root, cache, registry)  # stored anew, in our encoding
    assert healed.stats["files_parsed"] == 0 and healed.text == expected.text and cache_kinds(healed) == []


def test_rows_written_into_the_database_never_run_nor_touch_other_files(
    tmp_path: Path, registry: LanguageRegistry
) -> None:
    """An attacker editing cache.db directly: pickle-mode rows, a value file path outside the cache
    (diskcache would read it, and delete it when the entry is dropped) and a pickled key."""
    root = small_repo(tmp_path / "repo")
    cache, marker = tmp_path / "cache", tmp_path / "marker"
    victim = tmp_path / "victim.txt"
    victim.write_text("someone's file\n")
    expected, keys = filled_cache(root, cache, registry)
    planted = pickle.dumps(Payload(marker))
    with sqlite3.connect(cache / "cache.db") as db:
        for key in keys[:-2]:  # diskcache's MODE_PICKLE (4), in the row
            db.execute("UPDATE Cache SET mode = 4, filename = NULL, value = ? WHERE key = ?", (planted, key))
        db.execute("UPDATE Cache SET mode = 2, filename = ?, value = NULL WHERE key = ?", (str(victim), keys[-2]))
        db.execute(
            "UPDATE Cache SET mode = 2, filename = ?, value = NULL WHERE key = ?", ("../" + victim.name, keys[-1])
        )
        db.execute(
            "INSERT INTO Cache (key, raw, store_time, mode, value) VALUES (?, 0, 0, 4, ?)",
            (pickle.dumps(Payload(marker)), planted),
        )  # a pickled key, with a pickled value
    result = map_with(root, cache, registry)
    assert not marker.exists()
    assert victim.read_text() == "someone's file\n"  # neither read into the map nor deleted
    assert result.text == expected.text and result.stats["files_parsed"] == 9
    assert cache_kinds(result) == [
        ("cache_corrupt", "9 cached entries unusable (pickled or foreign, refused unread); dropped and parsed again")
    ]
    # Listing keys (diskcache unpickles non-str keys) refuses the pickled one instead.
    with diskcache.Cache(str(cache), disk=SafeDisk) as disk, pytest.raises(ValueError, match="pickled cache key"):
        list(disk.iterkeys())
    assert not marker.exists()


def test_a_planted_settings_row_does_not_stop_or_steer_a_map(tmp_path: Path, registry: LanguageRegistry) -> None:
    """diskcache turns ``disk_*`` settings rows into Disk arguments and ``sqlite_*`` ones into PRAGMAs."""
    root = small_repo(tmp_path / "repo")
    cache, marker = tmp_path / "cache", tmp_path / "marker"
    expected, keys = filled_cache(root, cache, registry)
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("INSERT INTO Settings VALUES ('disk_fetch', 'pickle')")
        db.execute("UPDATE Cache SET mode = 4, value = ? WHERE key = ?", (pickle.dumps(Payload(marker)), keys[0]))
    result = map_with(root, cache, registry)
    assert not marker.exists() and result.text == expected.text
    assert cache_kinds(result) == [
        (
            "cache_corrupt",
            "cache database unreadable (settings table holds an entry "
            "hybridmap does not write ('disk_fetch')); rebuilding it",
        )
    ]
    assert map_with(root, cache, registry).stats["files_parsed"] == 0


@pytest.mark.parametrize("change", ["group-writable", "world-writable", "another user's"])
def test_a_directory_others_can_write_is_not_used(tmp_path: Path, registry: LanguageRegistry, change: str) -> None:
    root = small_repo(tmp_path / "repo")
    cache, marker = tmp_path / "cache", tmp_path / "marker"
    expected, keys = filled_cache(root, cache, registry)
    with diskcache.Cache(str(cache)) as disk:
        disk.set(keys[0], Payload(marker))  # what someone with write access could have done
    if change == "another user's":
        if os.geteuid() != 0:
            pytest.skip("giving a directory to another user needs root")
        os.chown(cache, 65534, 65534)
    else:
        cache.chmod(0o770 if change == "group-writable" else 0o777)
    mode = stat.S_IMODE(cache.stat().st_mode)
    before = rows(cache)
    result = map_with(root, cache, registry)
    assert not marker.exists()
    assert result.text == expected.text and result.stats["files_parsed"] == 9 and result.stats["cache_hits"] == 0
    why = (
        "it is owned by another user (uid 65534)"
        if change == "another user's"
        else f"others can write it (mode {mode:o})"
    )
    assert cache_kinds(result) == [
        (
            "cache_unavailable",
            f"cache directory not used: {why}, so anyone who can write "
            "it could plant entries; running without it (use a "
            f"directory only you can write: chmod 700 {cache})",
        )
    ]
    assert rows(cache) == before  # left alone: not read, not rebuilt, nothing dropped or added


def test_the_cache_is_created_owner_only(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = small_repo(tmp_path / "repo")
    cache = tmp_path / "new" / "cache"
    old_umask = os.umask(0o002)  # a common umask that makes group-writable files
    try:
        map_with(root, cache, registry)
    finally:
        os.umask(old_umask)
    modes = {str(p.relative_to(cache)): stat.S_IMODE(p.stat().st_mode) for p in [cache, *cache.rglob("*")]}
    assert list(cache.rglob("*.val")), "big.py's entry is in a value file"
    assert {name: mode for name, mode in modes.items() if mode != (0o700 if (cache / name).is_dir() else 0o600)} == {}


# --- the codec ----------------------------------------------------------------------------------

_text = st.text(max_size=40)
_int = st.integers(min_value=-1, max_value=2**31)
_spans = st.builds(Span, _int, _int, _int, _int)
_symbols = st.builds(Symbol, _text, _text, _spans, _int, _int, _text, _int, st.sampled_from(list(Provenance)), _text)


@st.composite
def _file_tags(draw: st.DrawFn) -> FileTags:
    count = draw(st.integers(0, 20))
    return FileTags(
        tuple(draw(st.lists(_symbols, max_size=8))),
        tuple(draw(st.lists(_text, min_size=count, max_size=count))),
        draw(st.binary(min_size=8 * count, max_size=8 * count)),
        bytes(draw(st.lists(st.integers(0, len(REFERENCE_KIND_CODES) - 1), min_size=count, max_size=count))),
        draw(st.integers(0, 2**31)),
        draw(st.booleans()),
    )


_problems = st.lists(st.tuples(_text, _text), max_size=3).map(tuple)
_shas = st.sampled_from((40, 64)).flatmap(lambda n: st.text("0123456789abcdef", min_size=n, max_size=n))
_commits = st.builds(Commit, _shas, st.lists(_text, max_size=4).map(tuple), st.booleans())
_values = st.one_of(
    st.builds(ParseOutcome, st.one_of(st.none(), _file_tags()), _problems),
    _file_tags(),
    st.text(),  # with lone surrogates: a hover may carry any str
    st.tuples(st.lists(_text, max_size=5).map(tuple), st.lists(st.tuples(_text, _text), max_size=5).map(tuple)),
    st.builds(CommitLog, _shas, st.lists(_commits, max_size=4).map(tuple)),  # an imported history
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_values)
def test_every_cached_value_round_trips(value: object) -> None:
    decoded = codec.decode(codec.encode(value))
    assert decoded == value and type(decoded) is type(value)


@settings(max_examples=300, deadline=None)
@given(_values, st.data())
def test_damaged_bytes_decode_to_a_value_or_a_codec_error(value: object, data: st.DataObject) -> None:
    """Cut, flipped or foreign bytes never raise anything but CodecError, nor give a malformed record."""
    encoded = bytearray(codec.encode(value))
    index = data.draw(st.integers(0, len(encoded) - 1))
    damage = data.draw(st.sampled_from(["cut", "flip", "foreign"]))
    if damage == "cut":
        damaged = bytes(encoded[:index])
    elif damage == "flip":
        encoded[index] ^= data.draw(st.integers(1, 255))
        damaged = bytes(encoded)
    else:
        damaged = data.draw(st.binary(max_size=64))
    try:
        decoded = codec.decode(damaged)
    except codec.CodecError:
        return
    if isinstance(decoded, CommitLog):  # full object names and str paths, or nothing
        shas = [decoded.head, *(c.sha for c in decoded.commits)]
        assert all(len(sha) in (40, 64) and set(sha) <= set("0123456789abcdef") for sha in shas)
        assert all(type(p) is str for c in decoded.commits for p in c.paths)
    tags = decoded.tags if isinstance(decoded, ParseOutcome) else decoded
    if isinstance(tags, FileTags):  # whatever decodes is a record the pipeline can use
        assert len(tags.references) == len(tags.ref_names)
        assert all(isinstance(s.span, Span) and isinstance(s.provenance, str) and s.provenance for s in tags.symbols)


def test_the_cache_stores_only_codec_bytes(tmp_path: Path) -> None:
    """A value the codec does not know is kept in memory for this process, never pickled to disk."""
    cache = Cache(tmp_path / "cache")
    cache.set_many({"lsp-other:1": {"a": "dict"}})
    assert not cache.persistent and cache.get_many(["lsp-other:1"]) == {"lsp-other:1": {"a": "dict"}}
    assert [d.kind for d in cache.diagnostics] == ["cache_unavailable"]
    cache.close()
    with sqlite3.connect(tmp_path / "cache" / "cache.db") as db:
        assert db.execute("SELECT count(*) FROM Cache").fetchone() == (0,)
