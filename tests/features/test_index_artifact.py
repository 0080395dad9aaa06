"""Index artifacts (``hybridmap index --export / --import``): a real export by the CLI, imported
into an empty cache; hostile and damaged artifacts are skipped or refused, never trusted."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.features.index_artifact import (
    _ENTRY,
    MAGIC,
    ArtifactError,
    _digest,
    import_artifact,
    write_artifact,
)
from hybridmap.settings import Settings
from hybridmap.store import codec
from hybridmap.store.cache import CACHE_SCHEMA, Cache

from ..conftest import git, write_files
from ..helpers import run_cli

META = {"format": 1, "codec": codec.FORMAT, "cache_schema": CACHE_SCHEMA, "hybridmap": "test"}


def _map(root: Path, cache: Path) -> dict:
    proc = run_cli(
        "map", str(root), "--mode", "static", "--format", "json", "--tokens", "800", "--cache-dir", f"{cache}"
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_an_exported_index_makes_the_first_map_elsewhere_warm(stdlib_repo: Path, tmp_path: Path) -> None:
    artifact = tmp_path / "ci" / "index.hmi"
    artifact.parent.mkdir()
    proc = run_cli("index", str(stdlib_repo), "--export", str(artifact))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(artifact)
    assert artifact.read_bytes()[:2] == b"\x1f\x8b"  # gzip
    cold = _map(stdlib_repo, tmp_path / "cold")
    assert cold["stats"]["files_parsed"] > 20
    proc = run_cli("index", str(stdlib_repo), "--import", str(artifact), "--cache-dir", str(tmp_path / "warm"))
    assert proc.returncode == 0, proc.stderr
    imported = int(proc.stderr.split(" entries imported")[0].rsplit(" ", 1)[-1])
    assert imported >= cold["stats"]["files_parsed"]
    warm = _map(stdlib_repo, tmp_path / "warm")
    assert warm["stats"]["files_parsed"] == 0
    assert warm["stats"]["cache_hits"] == cold["stats"]["files_parsed"]
    assert warm["text"] == cold["text"]


def _entries(tmp_path: Path) -> list[tuple[str, bytes]]:
    """Real entries: those a cache holds after storing two values."""
    cache = Cache(tmp_path / "source")
    cache.set_many({"tok:1:x:aa": "3", "tok:1:x:bb": "5"})
    items = sorted(cache.raw_items())
    cache.close()
    return items


def _import(path: Path, tmp_path: Path, **limits: int) -> tuple[object, dict[str, object]]:
    cache = Cache(tmp_path / "target")
    try:
        report = import_artifact(path, cache, Settings(**limits))
        got = cache.get_many(["tok:1:x:aa", "tok:1:x:bb", "tok:1:x:cc"])
    finally:
        cache.close()
    return report, got


def _raw(entries: list[tuple[bytes, bytes, bytes]], end: bool = True, meta: dict | None = None) -> bytes:
    body = MAGIC + json.dumps(meta or META).encode() + b"\n"
    for key, value, digest in entries:
        body += _ENTRY.pack(len(key), len(value), digest) + key + value
    return body + (_ENTRY.pack(0, 0, bytes(32)) if end else b"")


def test_round_trip_through_the_format(tmp_path: Path) -> None:
    entries = _entries(tmp_path)
    assert len(entries) == 2 and all(v.startswith(codec.MAGIC) for _, v in entries)
    written = write_artifact(tmp_path / "a.hmi", entries, "test")
    assert written == (2, sum(len(v) for _, v in entries))
    report, got = _import(tmp_path / "a.hmi", tmp_path)
    assert (report.entries, report.skipped, report.truncated) == (2, {}, False)
    assert got == {"tok:1:x:aa": "3", "tok:1:x:bb": "5"}


def test_a_tampered_entry_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    (k1, v1), (k2, v2) = _entries(tmp_path)
    forged = v2[:-1] + b"9"  # the value changed, the digest not
    pickled = pickle.dumps("5")  # a valid digest, but not our codec: never decoded
    raw = _raw(
        [
            (k1.encode(), v1, _digest(k1.encode(), v1)),
            (k2.encode(), forged, _digest(k2.encode(), v2)),
            (b"tok:1:x:cc", pickled, _digest(b"tok:1:x:cc", pickled)),
        ]
    )
    (tmp_path / "a.hmi").write_bytes(gzip.compress(raw))
    report, got = _import(tmp_path / "a.hmi", tmp_path)
    assert report.entries == 1 and report.skipped == {"digest": 1, "not our codec": 1}
    assert got == {"tok:1:x:aa": "3"}


def test_a_cut_artifact_keeps_what_came_before_the_cut(tmp_path: Path) -> None:
    (k1, v1), (k2, v2) = _entries(tmp_path)
    raw = _raw([(k.encode(), v, _digest(k.encode(), v)) for k, v in ((k1, v1), (k2, v2))])
    whole = gzip.compress(raw)
    (tmp_path / "cut.hmi").write_bytes(whole[: len(whole) - 12])  # the gzip trailer and more
    report, got = _import(tmp_path / "cut.hmi", tmp_path)
    assert report.truncated
    assert got.get("tok:1:x:aa") == "3"
    (tmp_path / "noend.hmi").write_bytes(gzip.compress(_raw([(k1.encode(), v1, _digest(k1.encode(), v1))], end=False)))
    report, got = _import(tmp_path / "noend.hmi", tmp_path / "2")
    assert report.entries == 1 and report.truncated


def test_limits_bound_what_an_import_reads(tmp_path: Path) -> None:
    (k1, v1), _ = _entries(tmp_path)
    big = codec.encode("x" * 5_000)
    raw = _raw([(b"tok:1:x:bb", big, _digest(b"tok:1:x:bb", big)), (k1.encode(), v1, _digest(k1.encode(), v1))])
    (tmp_path / "a.hmi").write_bytes(gzip.compress(raw))
    report, got = _import(tmp_path / "a.hmi", tmp_path, artifact_max_entry_bytes=1_024)
    assert report.skipped == {"too large": 1} and got == {"tok:1:x:aa": "3"}
    # A stream that decompresses to more than the limit (a gzip bomb) stops at it.
    bomb = _raw([(b"tok:1:x:bb", b"\0" * (3 << 20), bytes(32))])
    (tmp_path / "bomb.hmi").write_bytes(gzip.compress(bomb))
    report, got = _import(tmp_path / "bomb.hmi", tmp_path / "b", artifact_max_bytes=1 << 20)
    assert report.entries == 0 and report.skipped == {"too many bytes": 1} and got == {}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"not gzip at all", "not a hybridmap index artifact"),
        (gzip.compress(b"PK\x03\x04 a zip, say"), "not a hybridmap index artifact"),
        (gzip.compress(MAGIC + b"{not json\n"), "header is damaged"),
        (gzip.compress(_raw([]))[:16], "header is damaged"),  # cut inside the header
        (gzip.compress(_raw([], meta={**META, "format": 2})), "format 2"),
        (gzip.compress(_raw([], meta={**META, "codec": 99})), "codec 99"),
    ],
)
def test_what_is_not_an_artifact_of_ours_is_refused_whole(tmp_path: Path, content: bytes, said: str) -> None:
    (tmp_path / "x.hmi").write_bytes(content)
    with pytest.raises(ArtifactError, match=said):
        _import(tmp_path / "x.hmi", tmp_path)
    proc = run_cli("index", str(tmp_path), "--import", str(tmp_path / "x.hmi"), "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode != 0 and said in proc.stderr and proc.stderr.count("\n") == 1


def test_a_garbage_value_in_our_codec_is_dropped_when_read_and_the_file_parsed(git_repo, tmp_path: Path) -> None:
    """An entry that passes the import's checks but does not decode (codec magic, then noise)
    is a miss when a map reads it: dropped, its file parsed, the map right."""
    root = git_repo({"app.py": "def run():\n    return 1\n"})
    artifact = tmp_path / "a.hmi"
    assert run_cli("index", str(root), "--export", str(artifact)).returncode == 0
    with gzip.open(artifact) as stream:
        raw = stream.read()
    tags_at = raw.index(b"tags:")
    key_len, value_len, _ = _ENTRY.unpack(raw[tags_at - _ENTRY.size : tags_at])
    key = raw[tags_at : tags_at + key_len]
    noise = codec.MAGIC + bytes((codec.FORMAT,)) + b"\xff" * (value_len - 4)
    start = tags_at - _ENTRY.size
    forged = raw[:start] + _ENTRY.pack(key_len, len(noise), _digest(key, noise)) + key + noise
    forged += raw[tags_at + key_len + value_len :]
    artifact.write_bytes(gzip.compress(forged))
    proc = run_cli("index", str(root), "--import", str(artifact), "--cache-dir", str(tmp_path / "c"))
    assert proc.returncode == 0 and "skipped" not in proc.stderr, proc.stderr
    result = _map(root, tmp_path / "c")
    assert result["stats"]["files_parsed"] == 1
    assert any(d["kind"] == "cache_corrupt" for d in result["diagnostics"])
    assert "def run" in result["text"]


def test_the_history_comes_along_for_a_shallow_clone(git_repo, tmp_path: Path) -> None:
    """CI exports from a clone with its history; an agent's shallow clone imports it and ranks the
    chat file's history partners as the complete clone does (co-change), where alone it has none."""
    files = {name: f"def {name[:-3]}_entry():\n    pass\n" for name in ("core.py", "partner.py", "other.py")}
    root = git_repo(files)
    for i in range(4):
        write_files(root, {"core.py": files["core.py"] + f"# {i}\n", "partner.py": files["partner.py"] + f"# {i}\n"})
        git(root, "commit", "-qam", "pair")
    write_files(root, {"other.py": files["other.py"] + "# solo\n"})
    git(root, "commit", "-qam", "solo")
    artifact = tmp_path / "index.hmi"
    proc = run_cli("index", str(root), "--export", str(artifact))
    assert proc.returncode == 0, proc.stderr
    assert "history: 6 commits" in proc.stderr and "shallow" not in proc.stderr
    clone = tmp_path / "agent"
    git(tmp_path, "clone", "-q", "--no-local", "--depth", "1", f"file://{root}", str(clone))

    def first_why(cache: Path) -> str:
        with RepoMap(clone, overrides={"cache_dir": str(cache)}) as repo:
            result = repo.map(mode="static", chat_files=["core.py"], tokens=1000)
        return next(f.why for f in result.files if f.path == "partner.py")

    assert "commits" not in first_why(tmp_path / "alone")
    proc = run_cli("index", str(clone), "--import", str(artifact), "--cache-dir", str(tmp_path / "warm"))
    assert proc.returncode == 0, proc.stderr
    assert "history: 6 commits" in proc.stderr
    assert "committed with a chat file in 5 commits" in first_why(tmp_path / "warm")
    # Exported from the shallow clone, the artifact says how little history it carries.
    proc = run_cli("index", str(clone), "--export", str(tmp_path / "thin.hmi"))
    assert proc.returncode == 0, proc.stderr
    assert "history: 0 commits" in proc.stderr and "shallow clone" in proc.stderr
