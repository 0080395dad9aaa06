"""A broken, shared, locked, foreign or read-only cache never stops a map, never makes it
wrong, and heals: the map equals one made with a fresh cache, and a later run hits.
(Entries and directories planted by someone else: tests/hostile/test_cache.py.)

Caches here are real diskcache/SQLite databases damaged the way disks and people damage
them; the other writers are real processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import diskcache

from hybridmap import RepoMap
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import MapResult
from hybridmap.settings import Settings
from hybridmap.sources.treesitter import ParseOptions, extract_tags
from hybridmap.store import codec
from hybridmap.store.cache import Cache, SafeDisk, disk_key, tags_key

from ..conftest import write_files
from ..helpers import PROJECT, map_with, needs_unprivileged, run_as_unprivileged, sample_repo

#: The last commit whose cache held bare FileTags under ``tags:1:`` keys.
SCHEMA_1_COMMIT = "2c9497c"


def fresh_map(root: Path, tmp_path: Path, registry: LanguageRegistry) -> MapResult:
    """The reference: the same repository mapped with a cache nobody touched."""
    reference = tmp_path / f"fresh-{time.monotonic_ns()}"
    result = map_with(root, reference, registry)
    shutil.rmtree(reference)
    return result


def cache_kinds(result: MapResult) -> list[tuple[str, str]]:
    return [(d.kind, d.message) for d in result.diagnostics if d.kind.startswith("cache_")]


def assert_heals(root: Path, cache: Path, registry: LanguageRegistry, expected: MapResult) -> None:
    """A later run on the same cache hits for every file and gives the same map."""
    later = map_with(root, cache, registry)
    assert later.stats["files_parsed"] == 0 and later.stats["cache_hits"] > 0
    assert later.text == expected.text and cache_kinds(later) == []


def checkpoint(cache: Path) -> None:
    """Move everything from the write-ahead log into cache.db, as SQLite does over time."""
    with sqlite3.connect(cache / "cache.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# --- damaged databases ---------------------------------------------------------------------


def test_garbage_over_the_database_is_rebuilt(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    map_with(root, cache, registry)
    checkpoint(cache)
    (cache / "cache.db").write_bytes(os.urandom((cache / "cache.db").stat().st_size))
    result = map_with(root, cache, registry)
    assert result.text == fresh_map(root, tmp_path, registry).text
    assert cache_kinds(result) == [
        ("cache_corrupt", "cache database unreadable (file is not a database); rebuilding it")
    ]
    assert_heals(root, cache, registry, result)


def test_truncated_database_is_found_damaged_mid_map_and_rebuilt(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    map_with(root, cache, registry)
    checkpoint(cache)
    size = (cache / "cache.db").stat().st_size
    with (cache / "cache.db").open("r+b") as fh:
        fh.truncate(size // 2)  # the header is intact: only reading the entries finds it
    result = map_with(root, cache, registry)
    assert result.text == fresh_map(root, tmp_path, registry).text
    assert cache_kinds(result) == [
        ("cache_corrupt", "cache database damaged (database disk image is malformed); rebuilt empty")
    ]
    assert_heals(root, cache, registry, result)


def test_corrupt_entries_are_dropped_and_parsed_again(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(tmp_path / "repo")
    # Big enough that diskcache keeps its value in a file of its own, not in the row.
    write_files(root, {"big.py": "".join(f"def big_function_{j}(value):\n    return value\n\n" for j in range(800))})
    cache = tmp_path / "cache"
    map_with(root, cache, registry)
    checkpoint(cache)
    with sqlite3.connect(cache / "cache.db") as db:
        rows = db.execute(
            "SELECT rowid, filename FROM Cache WHERE key LIKE ? ORDER BY rowid", (disk_key("tags:%"),)
        ).fetchall()
        in_row = next(rowid for rowid, filename in rows if filename is None)
        value = db.execute("SELECT value FROM Cache WHERE rowid = ?", (in_row,)).fetchone()[0]
        db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (value[: len(value) // 2], in_row))  # cut short
        value_file = next(filename for _, filename in rows if filename is not None)
    (cache / value_file).write_bytes(b"hmc\x01\x01garbage")  # our header, then no record
    result = map_with(root, cache, registry)
    assert result.stats["files_parsed"] == 2
    assert result.text == fresh_map(root, tmp_path, registry).text
    assert cache_kinds(result) == [
        ("cache_corrupt", "2 cached entries unusable (not in hybridmap's cache encoding); dropped and parsed again")
    ]
    assert_heals(root, cache, registry, result)


# --- other versions ------------------------------------------------------------------------


def old_version(tmp_path: Path) -> Path | None:
    """The package as it was at SCHEMA_1_COMMIT (None when this checkout lacks the history)."""
    target = tmp_path / "old-hybridmap"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(PROJECT), "archive", SCHEMA_1_COMMIT, "hybridmap", "lsp_configs", "queries"],
        capture_output=True,
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def map_with_old_version(old: Path, root: Path, cache: Path) -> dict[str, float]:
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(old)!r})
        import hybridmap
        assert hybridmap.__file__.startswith({str(old)!r})
        from hybridmap import RepoMap
        with RepoMap({str(root)!r}, overrides={{"cache_dir": {str(cache)!r}}}, start_servers=False) as repo:
            print(json.dumps(repo.map(tokens=2048, mode="static").stats))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd="/")
    return json.loads(proc.stdout)


def write_schema_1_entries(root: Path, cache: Path, registry: LanguageRegistry) -> None:
    """What SCHEMA_1_COMMIT stores (checked against that version: same keys, bare FileTags)."""
    with diskcache.Cache(str(cache)) as disk:
        for path in sorted(root.rglob("*.py")):
            data = path.read_bytes()
            key = f"tags:1:{registry.fingerprint('python')}:sig6-ml65536:{hashlib.sha256(data).hexdigest()}"
            disk.set(key, extract_tags(registry.compiled("python"), data))


def test_a_cache_written_by_the_previous_version(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    old = old_version(tmp_path)
    if old is not None:
        assert map_with_old_version(old, root, cache)["files_parsed"] == 40
    else:
        write_schema_1_entries(root, cache, registry)
    with diskcache.Cache(str(cache)) as disk:
        old_keys = sorted(disk.iterkeys())
    assert len(old_keys) == 40 and all(key.startswith("tags:1:") for key in old_keys)
    result = map_with(root, cache, registry)
    # Other schema, other keys: plain misses, nothing to report, nothing of theirs read.
    assert result.stats["files_parsed"] == 40 and cache_kinds(result) == []
    assert result.text == fresh_map(root, tmp_path, registry).text
    assert_heals(root, cache, registry, result)
    if old is not None:  # and the old version still finds its own entries in the shared cache
        assert map_with_old_version(old, root, cache)["files_parsed"] == 0


def test_entries_of_another_kind_under_todays_keys_are_dropped(tmp_path: Path, registry: LanguageRegistry) -> None:
    """A version that changes what it stores and forgets to bump the schema must not crash or
    mislead a newer one: such entries decode, into values the reader cannot use."""
    root = sample_repo(tmp_path / "repo", files=6)
    cache = tmp_path / "cache"
    options = ParseOptions.from_settings(Settings())
    with diskcache.Cache(str(cache)) as disk:
        for n, path in enumerate(sorted((root / "pkg").glob("*.py"))):
            data = path.read_bytes()
            key = tags_key(registry.fingerprint("python"), hashlib.sha256(data).hexdigest(), options.key)
            tags = extract_tags(registry.compiled("python"), data)
            other = (tags, "hover text", (("pkg/mod0.py",), (("pkg/mod0.py", "0" * 64),)))[n % 3]
            disk.set(disk_key(key), codec.encode(other))  # bare FileTags (as schema 1), a str, a tuple
    result = map_with(root, cache, registry)
    assert result.text == fresh_map(root, tmp_path, registry).text and result.stats["files_parsed"] == 6
    assert cache_kinds(result) == [
        (
            "cache_corrupt",
            "6 cached entries unusable (written by another hybridmap version, or damaged); dropped and parsed again",
        )
    ]
    assert_heals(root, cache, registry, result)


# --- permissions and other processes -------------------------------------------------------


@needs_unprivileged
def test_read_only_cache_directory(public_tmp: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(public_tmp / "repo", files=10)
    cache = public_tmp / "cache"
    expected = map_with(root, cache, registry)
    for path in [root, cache, *root.rglob("*"), *cache.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # readable by everyone, writable by root only
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in cache.iterdir()}
    proc = run_as_unprivileged(
        ["map", str(root), "--format", "json", "--mode", "static", "--tokens", "2048", "--cache-dir", str(cache)],
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["text"] == expected.text
    assert {d["kind"] for d in result["diagnostics"]} == {"cache_unavailable"}
    # Another user's directory is not used at all: that user could plant entries in it.
    assert "owned by another user (uid 0)" in result["diagnostics"][0]["message"]
    # Someone else's cache is left exactly as it was: not rebuilt, not deleted.
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in cache.iterdir()} == before


def test_a_process_holding_the_lock_does_not_hold_up_the_map(tmp_path: Path, registry: LanguageRegistry) -> None:
    root = sample_repo(tmp_path / "repo", files=10)
    cache = tmp_path / "cache"
    expected = map_with(root, cache, registry)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sqlite3, sys, time
        db = sqlite3.connect({str(cache / "cache.db")!r}, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")  # a writer stuck mid-transaction
        print("locked", flush=True)
        sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        write_files(root, {"pkg/new.py": "def brand_new_function():\n    return func_0_0(1)\n"})
        started = time.monotonic()
        result = map_with(root, cache, registry, cache_timeout_seconds=1.0)
        assert time.monotonic() - started < 1.0 + 10  # not diskcache's 60 s
        assert result.stats["files_parsed"] == 11 and result.text == fresh_map(root, tmp_path, registry).text
        assert (
            "cache_unavailable",
            "cache locked by another process for more than cache_timeout_seconds=1; running without it",
        ) in cache_kinds(result)
    finally:
        holder.kill()
        holder.wait()
    # Busy is not damage: the database was not deleted, and its entries still hit.
    after = map_with(root, cache, registry)
    assert after.stats["cache_hits"] >= expected.stats["files_parsed"] and cache_kinds(after) == []


DRIVER = textwrap.dedent("""
    import json, os, sys, time
    from hybridmap import RepoMap
    root, cache, go = sys.argv[1:4]
    while not os.path.exists(go):  # start together
        time.sleep(0.001)
    with RepoMap(root, overrides={"cache_dir": cache}, start_servers=False) as repo:
        result = repo.map(tokens=4096, mode="static")
    print(json.dumps(result.to_json()))
""")


def test_two_processes_mapping_with_one_cache_at_once(
    stdlib_repo: Path, tmp_path: Path, registry: LanguageRegistry
) -> None:
    cache = tmp_path / "shared"
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(stdlib_repo), str(cache), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)  # both imported and waiting
    go.touch()
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    with RepoMap(
        stdlib_repo, overrides={"cache_dir": str(tmp_path / "fresh")}, registry=registry, start_servers=False
    ) as repo:
        expected_json = repo.map(tokens=4096, mode="static").to_json()
    for out in outputs:
        assert out["text"] == expected_json["text"] and out["files"] == expected_json["files"]
        assert [d for d in out["diagnostics"] if d["kind"].startswith("cache_")] == []
    # Consistent afterwards: a third run parses nothing and gives the same map.
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(cache)}, registry=registry, start_servers=False) as repo:
        third = repo.map(tokens=4096, mode="static")
    assert third.stats["files_parsed"] == 0 and third.stats["cache_hits"] > 0
    assert third.to_json()["text"] == expected_json["text"] and cache_kinds(third) == []


# --- files that change while they are mapped ------------------------------------------------


def test_a_file_edited_after_it_was_read_gives_the_old_map_then_the_new(
    tmp_path: Path, registry: LanguageRegistry
) -> None:
    root = sample_repo(tmp_path / "repo", files=5, defs=3)
    write_files(root, {"a_edited.py": "def version_one():\n    return 1\n"})  # listed, and read, first
    cache = tmp_path / "cache"

    def edit_after_read(phase: str, done: int, total: int) -> None:
        if phase == "reading" and (root / "a_edited.py").read_text().startswith("def version_one"):
            (root / "a_edited.py").write_text("def version_two_longer():\n    return 2\n")

    with RepoMap(
        root, overrides={"cache_dir": str(cache)}, registry=registry, progress=edit_after_read, start_servers=False
    ) as repo:
        during = repo.map(tokens=2048, mode="static")
        after = repo.map(tokens=2048, mode="static")
    names = lambda result: {s.name for f in result.files if f.path == "a_edited.py" for s in f.symbols}  # noqa: E731
    assert names(during) == {"version_one"}  # what was read, whole
    assert names(after) == {"version_two_longer"}
    # The cache holds each content under its own hash: a new process sees the new version.
    assert names(map_with(root, cache, registry)) == {"version_two_longer"}


def test_a_same_size_edit_that_keeps_mtime_is_seen_next_time(tmp_path: Path, registry: LanguageRegistry) -> None:
    """mtime can be put back (cp -p, rsync -t) and two writes in one timestamp tick look alike:
    neither may leave the next map on the old content."""
    root = sample_repo(tmp_path / "repo", files=3, defs=2)
    write_files(root, {"a_same.py": "def alpha_name():\n    return 1\n"})  # listed, and read, first
    target = root / "a_same.py"

    def same_size_edit(phase: str, done: int, total: int) -> None:
        if phase == "reading" and "alpha" in target.read_text():
            st = target.stat()
            target.write_text("def omega_name():\n    return 1\n")  # same size
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))

    with RepoMap(
        root,
        overrides={"cache_dir": str(tmp_path / "cache")},
        registry=registry,
        progress=same_size_edit,
        start_servers=False,
    ) as repo:
        assert "def alpha_name" in repo.map(tokens=1024, mode="static").text  # read before the edit
        assert "def omega_name" in repo.map(tokens=1024, mode="static").text


def test_a_file_rewritten_in_place_during_maps(tmp_path: Path, registry: LanguageRegistry) -> None:
    """A real writer thread rewrites a file in place as fast as it can while 40 maps run."""
    root = sample_repo(tmp_path / "repo", files=5, defs=3)
    versions = {
        "one": "def first_variant_a():\n    return 1\n\ndef first_variant_b():\n    return 2\n",
        "two": "def other_variant_a():\n    return 3\n\ndef other_variant_b():\n    return 4\n",
    }
    allowed = [set(), {"first_variant_a", "first_variant_b"}, {"other_variant_a", "other_variant_b"}]
    hot = root / "hot.py"
    hot.write_text(versions["one"])
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            for text in versions.values():
                with hot.open("w") as fh:  # truncate, then write: readers can meet either half
                    fh.write(text)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    seen = []
    try:
        with RepoMap(
            root, overrides={"cache_dir": str(tmp_path / "cache")}, registry=registry, start_servers=False
        ) as repo:
            for _ in range(40):
                result = repo.map(tokens=2048, mode="static")
                shown = {s.name for f in result.files if f.path == "hot.py" for s in f.symbols}
                assert shown in allowed, shown  # a state the file had: never a mix
                seen.append(shown)
            stop.set()
            thread.join()
            hot.write_text(versions["two"])
            final = repo.map(tokens=2048, mode="static")
    finally:
        stop.set()
        thread.join()
    assert {s.name for f in final.files if f.path == "hot.py" for s in f.symbols} == allowed[2]


def test_memory_only_cache_is_bounded(tmp_path: Path) -> None:
    """Without a disk cache, a long-lived map that edits every turn must not grow without bound."""
    cache = Cache(None, memory_entries=10)
    for turn in range(25):
        cache.set_many({f"tags:{turn}": turn})
    assert len(cache.get_many(f"tags:{t}" for t in range(25))) == 10
    assert cache.get_many(["tags:24", "tags:15"]) == {"tags:24": 24, "tags:15": 15}
    assert cache.get_many(["tags:0"]) == {}


def test_a_cache_over_its_size_limit_keeps_the_latest_entries(tmp_path: Path) -> None:
    """Culled once per write (not inside every set): the size stays near the limit, and what goes
    is what was stored longest ago."""
    limit = 2**20
    cache = Cache(tmp_path / "cache", size_limit=limit)
    for batch in range(8):
        cache.set_many({f"text:{batch}:{i}": "x" * 4_000 + str(i) for i in range(64)})  # ~256 KB each
    volume = cache._disk.volume()
    newest = cache.get_many([f"text:7:{i}" for i in range(64)])
    oldest = cache.get_many([f"text:0:{i}" for i in range(64)])
    cache.close()
    assert volume <= limit + 300_000, volume  # the last write's batch may stand above it until the next
    assert len(newest) == 64 and oldest == {}


def test_many_keys_are_read_in_batches_with_each_row_checked(tmp_path: Path) -> None:
    """``get_many`` reads the disk a batch of keys per query: across batches, every stored entry
    comes back as one lookup per key gives it, and a bad row in any batch (pickled, not our
    codec, expired) is a miss, the first two dropped and said."""
    cache = Cache(tmp_path / "c")
    values = {f"text:{i:05d}": f"value {i}" * (1 + i % 3) for i in range(1_300)}
    values["text:big"] = "x" * 100_000  # a value file, not a row
    cache.set_many(values)
    bad = {"text:00700": "pickled", "text:01100": "foreign", "text:01250": "expired"}
    with sqlite3.connect(tmp_path / "c" / "cache.db") as db:
        db.execute("UPDATE Cache SET mode = 4 WHERE key = ?", (disk_key("text:00700"),))
        db.execute("UPDATE Cache SET value = ? WHERE key = ?", (b"not ours", disk_key("text:01100")))
        db.execute("UPDATE Cache SET expire_time = 1 WHERE key = ?", (disk_key("text:01250"),))
    cache.close()
    reader = Cache(tmp_path / "c")
    found = reader.get_many([*values, "text:missing"])
    said = sorted(d.message for d in reader.take_diagnostics())
    reader.close()
    assert found == {k: v for k, v in values.items() if k not in bad}
    assert said == [
        "1 cached entry unusable (not in hybridmap's cache encoding); dropped and parsed again",
        "1 cached entry unusable (pickled or foreign, refused unread); dropped and parsed again",
    ]
    one_by_one = Cache(tmp_path / "c")  # the same answers, a key at a time (the bad rows now gone)
    assert {key: one_by_one.get_many([key]).get(key) for key in found} == found
    assert one_by_one.get_many(list(bad)) == {}
    one_by_one.close()


def test_many_entries_are_written_at_once_and_diskcache_stays_consistent(tmp_path: Path) -> None:
    """New small entries go in one INSERT of the rows diskcache's own set writes; an entry already
    there and a large one go through set: every value reads back, and diskcache's own check finds
    its count, size and files as its triggers and value files say."""
    cache = Cache(tmp_path / "c")
    cache.set_many({"text:old": "before"})
    values = {f"text:{i:05d}": f"value {i}" for i in range(1_500)}
    values |= {"text:old": "after", "text:big": "x" * 100_000}
    cache.set_many(values)
    cache.close()
    with diskcache.Cache(str(tmp_path / "c"), disk=SafeDisk) as disk:
        assert disk.check() == []
        assert len(disk) == len(values)
        assert disk.volume() > 100_000  # the large value's file is counted
    reader = Cache(tmp_path / "c")
    assert reader.get_many(list(values)) == values
    reader.close()
