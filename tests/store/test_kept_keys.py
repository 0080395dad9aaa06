"""Each file's tags key and problems, kept by a one-shot process for the next (store/kept_keys.py,
sources/static_index.py): the next one-shot map reads no cache record of an unchanged file until
its tags are read, and says and shows what a map that read every record says and shows; a record
gone or damaged since is parsed when read; a kept file that is not exactly ours is not used."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hybridmap import RepoMap
from hybridmap.store.kept_keys import KeptKeys, encode_keys, kept_keys_path, load_keys, save_keys
from tests.helpers import run_cli

#: A syntax error (a problem kept with the key), a notebook that does not read (said by the
#: reading, never parsed: no key), names shared across files.
FILES = {
    "billing/invoice.py": (
        "from core.money import round_cents\n\nclass Invoice:\n    def total(self, lines):\n"
        "        return round_cents(sum(lines))\n"
    ),
    "core/money.py": "def round_cents(value):\n    return round(value, 2)\n\nclass (((:\n    x = = 1\n  ]]] {{{\n",
    "reports/tax_report.py": (
        "from billing.invoice import Invoice\n\ndef tax_summary(lines):\n    return Invoice().total(lines)\n"
    ),
    "notes/scratch.ipynb": "{ this is not a notebook",
    "svc/server.go": "package svc\n\ntype Server struct{}\n\nfunc NewServer() *Server { return &Server{} }\n",
}
CHAT = ["reports/tax_report.py"]
PARSED = set(FILES) - {"notes/scratch.ipynb"}


def _one_shot(root: Path, cache: Path, *, one_shot: bool = True, **overrides: object):  # type: ignore[no-untyped-def]
    with RepoMap(
        root,
        overrides={"cache_dir": str(cache), "syntax_error_report_lines": 1, **overrides},
        start_servers=False,
        one_shot=one_shot,
    ) as repo:
        return repo.map(mode="static", chat_files=CHAT, tokens=2000)  # type: ignore[arg-type]


def _said(result) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What a map says, less how it was made."""
    diagnostics = sorted((d.path, d.kind, d.message) for d in result.diagnostics if d.kind != "cache_corrupt")
    return {"text": result.text, "files": result.files, "edges": result.edges, "diagnostics": diagnostics}


def _records(cache: Path) -> int:
    with sqlite3.connect(cache / "cache.db") as db:
        return int(db.execute("SELECT count(*) FROM Cache WHERE key LIKE '%tags%'").fetchone()[0])


def test_an_unchanged_file_is_taken_unread_and_the_map_is_the_same(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first = _one_shot(root, cache)
    kinds = {d.kind for d in first.diagnostics}
    assert {"syntax_error", "notebook_unreadable"} <= kinds  # what the kept problems must carry
    assert first.stats["tags_unread"] == 0 and first.stats["cache_hits"] == 0
    path = kept_keys_path(cache, str(root.resolve()))
    kept = load_keys(path, str(root.resolve()), 1000)
    assert kept is not None and set(kept.keys) == PARSED
    assert kept.untagged == frozenset() and set(kept.problems) == {"core/money.py"}

    second = _one_shot(root, cache)
    assert second.stats["tags_unread"] == len(PARSED) and second.stats["cache_hits"] == 0
    assert second.stats["graph_adopted"] == 1
    assert _said(second) == _said(first)
    # The same files, keys and problems: nothing new to keep, the file is not written again.
    written = path.stat().st_mtime_ns
    third = _one_shot(root, cache)
    assert _said(third) == _said(first) and path.stat().st_mtime_ns == written

    # Without the kept keys, every record is read at the lookup: the same map.
    assert _said(_one_shot(root, cache, persist_graph=False)) == _said(first)


def test_an_edited_file_is_looked_up_and_the_others_stay_unread(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _one_shot(root, cache)
    (root / "core/money.py").write_text("def round_cents(value):\n    return round(value, 2)\n")
    edited = _one_shot(root, cache)
    assert edited.stats["tags_unread"] == len(PARSED) - 1 and edited.stats["files_parsed"] == 1
    assert "syntax_error" not in {d.kind for d in edited.diagnostics}
    fresh = _one_shot(root, tmp_path / "fresh")
    assert _said(edited) == _said(fresh)
    again = _one_shot(root, cache)  # the edit's key was kept in turn
    assert again.stats["tags_unread"] == len(PARSED) and _said(again) == _said(fresh)


@pytest.mark.parametrize("loss", ["evicted", "damaged"])
def test_a_record_gone_or_damaged_since_is_parsed_when_its_tags_are_read(git_repo, tmp_path: Path, loss: str) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    first = _one_shot(root, cache)
    records = _records(cache)
    with sqlite3.connect(cache / "cache.db") as db:
        rows = db.execute("SELECT rowid, value FROM Cache WHERE key LIKE '%tags%'").fetchall()
        (rowid, value) = next((r, v) for r, v in rows if b"round_cents" in v and b"Invoice" not in v)
        if loss == "evicted":
            db.execute("DELETE FROM Cache WHERE rowid = ?", (rowid,))
        else:
            db.execute("UPDATE Cache SET value = ? WHERE rowid = ?", (value[:-4] + b"????", rowid))
    later = _one_shot(root, cache)
    assert later.stats["tags_unread"] == len(PARSED)
    assert "round_cents" in later.text and _said(later) == _said(first)
    assert any(d.kind == "cache_corrupt" for d in later.diagnostics) == (loss == "damaged")
    assert _records(cache) == records  # parsed and cached again
    assert _said(_one_shot(root, cache, persist_graph=False)) == _said(first)


def test_long_lived_maps_neither_read_nor_write_kept_keys(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _one_shot(root, cache, one_shot=False)
    assert not kept_keys_path(cache, str(root.resolve())).exists()
    _one_shot(root, cache)
    assert _one_shot(root, cache, one_shot=False).stats["tags_unread"] == 0


def test_kept_keys_of_another_root_or_too_large_are_not_used(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    _one_shot(root, cache)
    path = kept_keys_path(cache, str(root.resolve()))
    assert load_keys(path, "/elsewhere", 1000) is None
    assert load_keys(path, str(root.resolve()), 0) is None  # larger than max_files allows: not read
    other = tmp_path / "other"
    shutil.copytree(root, other)
    shutil.copy(path, kept_keys_path(cache, str(other.resolve())))  # planted under another root's name
    assert _one_shot(other, cache).stats["tags_unread"] == 0


def test_planted_problems_are_printed_made_safe(git_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Kept keys are the cache's: a planted file can give a file problems of any text, and the
    CLI prints them escaped, as the repository's own names."""
    root = git_repo(FILES)
    cache = tmp_path / "cache"
    args = ("map", str(root), "--chat", CHAT[0], "--cache-dir", str(cache))
    first = run_cli(*args, env={"HYBRIDMAP_DAEMON": "off"})
    assert first.returncode == 0, first.stderr
    path = kept_keys_path(cache, str(root.resolve()))
    kept = load_keys(path, str(root.resolve()), 1000)
    assert kept is not None
    # Control characters click does not strip on its own (it strips escape sequences off a
    # terminal): a bell, a backspace, a carriage return.
    planted = {"svc/server.go": (("evil\x07\x08\r", "\x1b]0;owned\x07 line\nbreak\r"),)}
    save_keys(path, str(root.resolve()), KeptKeys(kept.keys, planted))
    later = run_cli(*args, env={"HYBRIDMAP_DAEMON": "off"})
    assert later.returncode == 0, later.stderr
    assert "svc/server.go: evil" in later.stderr  # the planted problem was read, and said
    assert not any(c in later.stderr for c in "\x1b\x07\x08\r"), later.stderr


def test_kept_keys_read_back_as_written(tmp_path: Path) -> None:
    kept = KeptKeys(
        {"a.py": "k1", "b/c.py": "k2", "d.ipynb": "k3"},
        {"b/c.py": (("syntax_error", "line 3"),), "d.ipynb": (("notebook_unreadable", "not JSON"),)},
        frozenset({"d.ipynb"}),
    )
    pieces = encode_keys("/r", kept)
    assert pieces is not None
    path = tmp_path / "k.bin"
    path.write_bytes(b"".join(pieces))
    loaded = load_keys(path, "/r", 1000)
    assert loaded is not None
    assert dict(loaded.keys) == dict(kept.keys) and dict(loaded.problems) == dict(kept.problems)
    assert loaded.untagged == kept.untagged
    assert encode_keys("/r", KeptKeys({"a\0.py": "k"}, {})) is None  # a NUL in a path: not kept


_DATA: list[bytes] = []


def _data() -> bytes:
    if not _DATA:
        kept = KeptKeys({"a.py": "k1", "b.py": "k2"}, {"b.py": (("syntax_error", "x"),)}, frozenset())
        _DATA.append(b"".join(encode_keys("/r", kept) or []))
    return _DATA[0]


@settings(max_examples=300, deadline=None)
@given(at=st.integers(0, 10_000), value=st.integers(0, 255), cut=st.integers(0, 10_000))
def test_damaged_bytes_never_raise(tmp_path_factory: pytest.TempPathFactory, at: int, value: int, cut: int) -> None:
    data = bytearray(_data())
    data[at % len(data)] = value
    path = tmp_path_factory.mktemp("keys") / "k.bin"
    path.write_bytes(bytes(data[: len(data) - cut % len(data)]))
    loaded = load_keys(path, "/r", 1000)
    assert loaded is None or isinstance(loaded, KeptKeys)


def test_a_pass_over_every_file_reads_their_records_ahead(
    git_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """After an edit a one-shot map rebuilds its graph from every file's tags: taken unread, their
    records are read in batches once files are read in the order they were indexed (one query
    each was half of such a map at 100,000 files), and the map is a fresh one's."""
    from hybridmap.sources import unread_tags
    from hybridmap.store.cache import Cache

    files = {
        f"pkg/mod_{i:03}.py": f"def helper_{i}(value):\n    return step_{(i + 1) % 150}(value)\n\n\n"
        f"def step_{i}(value):\n    return value\n"
        for i in range(150)
    }
    root = git_repo({**files, **FILES})
    cache = tmp_path / "cache"
    _one_shot(root, cache)
    (root / "core/money.py").write_text("def round_cents(value):\n    return round(value, 2)\n")
    asked: list[int] = []
    real = Cache.get_many

    def counted(self, keys, **options):  # type: ignore[no-untyped-def]
        keys = list(keys)
        if keys and all(key.startswith("tags:") for key in keys):  # the files' records, no other entry
            asked.append(len(keys))
        return real(self, keys, **options)

    monkeypatch.setattr(Cache, "get_many", counted)
    edited = _one_shot(root, cache)
    monkeypatch.undo()
    assert edited.stats["graph_rebuilt"] == 1 and edited.stats["tags_unread"] == len(PARSED) + 150 - 1
    singles = sum(1 for n in asked if n == 1)
    assert singles <= unread_tags.READ_AHEAD_AFTER + 10, str(asked)  # the rest came in batches
    assert any(n > 1 for n in asked)
    assert _said(edited) == _said(_one_shot(root, tmp_path / "fresh"))
