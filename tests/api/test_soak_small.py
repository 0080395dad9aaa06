"""A long-lived map stays flat: what it keeps per file or per answer follows the files that exist.

A small soak (the long one is ``benchmarks/bench_soak.py``): one object, a real git repository,
the real ty server, 30 maps, and before each an edit as an agent makes them: a new file with a
name never used before (the previous one deleted), and a definition appended to a rotating file.
Counts, not timings: after 30 maps nothing the object keeps may name a deleted file, and nothing
may grow with the number of maps.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from hybridmap import RepoMap

from ..helpers import fixture_repo, registry_with_fault_server, require

MAPS = 30


def test_thirty_edited_maps_keep_nothing_of_deleted_files(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    rotating = [root / "store" / "disk.py", root / "store" / "memory.py", root / "app.py"]
    originals = {p: p.read_text() for p in rotating}
    sizes: list[dict[str, int]] = []
    previous: Path | None = None
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        # A leak test reads the stores themselves: no public report lists every memo by path.
        engine = repo._async._engine
        lsp = engine.lsp
        assert lsp is not None
        for i in range(MAPS):
            new = root / "store" / f"scratch_{i}.py"
            new.write_text(f"from store.disk import load\n\n\ndef scratch_{i}(x):\n    return load(x)\n")
            if previous is not None:
                previous.unlink()
            previous = new
            edited = rotating[i % len(rotating)]
            edited.write_text(originals[edited] + f"\n\ndef added_{i}(value):\n    return value\n")
            # The new file is shown and its server symbols fetched (server_wait), so the
            # object keeps merged tags, server symbols and an open document for it.
            result = repo.map(mentioned_idents=[f"scratch_{i}", f"added_{i}"], tokens=1024, server_wait=20)
            assert result.tokens <= 1024 and result.text.strip()
            assert f"store/scratch_{i}.py" in {f.path for f in result.files}

            live = set(repo.tags())
            assert len(live) == 5  # app.py, store/{__init__,disk,memory}.py and this map's scratch file
            (session,) = lsp.sessions()
            open_paths = {str(Path(unquote(urlparse(uri).path)).relative_to(root)) for uri in session._opened}
            kept = {
                "merge memo": set(engine.builder._merge_memo),
                "server symbols": set(lsp.outline._outlines),
                "hovers": {key[0] for key in lsp.outline._hovers},
                "definitions": {pair[0] for pair in lsp.resolver._resolved},
                "document texts": set(lsp.documents._lines),
                "documents open (ours)": {path for _, path in lsp.documents._open},
                "documents open (server)": open_paths,
            }
            for what, paths in kept.items():
                assert paths <= live, f"map {i}: {what} still holds deleted files {sorted(paths - live)}"
            sizes.append(
                {
                    "memo": len(engine.builder._merge_memo),
                    "open": len(session._opened),
                    "tasks": len(lsp._tasks),
                    "pending requests": session.pending_requests,
                }
            )
    for path, text in originals.items():
        path.write_text(text)
    # Bounded by the files, not the maps: the last map keeps no more than the tenth did.
    for key in sizes[0]:
        assert max(s[key] for s in sizes[10:]) <= max(sizes[9][key], len(live)), (key, sizes)
    assert all(s["tasks"] <= 1 and s["pending requests"] == 0 for s in sizes), sizes


def test_error_replies_leave_no_request_state_behind(tmp_path: Path) -> None:
    """Each reply is forgotten once handled, errors included: a long-lived session answers
    ContentModified after nearly every edit, and pygls itself forgets only successes."""
    root = fixture_repo(tmp_path, "python")
    # A real server that refuses every request once with ContentModified (the session retries).
    registry = registry_with_fault_server(tmp_path, "content-modified", timeout=5)
    app = root / "app.py"
    original = app.read_text()
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        for i in range(5):
            app.write_text(original + f"\n\ndef added_{i}(value):\n    return value\n")
            result = repo.map(tokens=1024, server_wait=20)
            assert result.edges.get("lsp", 0) >= 1  # the retried requests were answered
        lsp = repo._async._engine.lsp  # the session's stderr and request table: no public report
        assert lsp is not None
        (session,) = lsp.sessions()
        said = [line for line in session.stderr_tail if "content modified" in line]
        assert len(said) >= 10, said  # many error replies were handled...
        assert session.pending_requests == 0  # ...and none is remembered
