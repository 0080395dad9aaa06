"""The CLI contract of docs/configuration.md, run as a real subprocess."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..conftest import run_on_pty
from ..helpers import run_cli


def test_map_json_contract(stdlib_repo: Path, tmp_path: Path) -> None:
    proc = run_cli("map", str(stdlib_repo), "--tokens", "1024", "--format", "json", "--cache-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {"text", "tokens", "budget", "files", "servers", "edges", "diagnostics", "timings"} <= set(data)
    assert 973 <= data["tokens"] <= 1024 and data["budget"] == 1024
    assert data["files"], "map has files"
    first = data["files"][0]
    assert {"path", "rank", "symbols"} <= set(first)
    for sym in first["symbols"]:
        assert {"name", "kind", "line", "signature", "provenance"} <= set(sym)
        assert sym["line"] >= 1 and sym["provenance"] == "tree-sitter"
    ranks = [f["rank"] for f in data["files"]]
    assert ranks[0] > 0
    assert data["edges"]["name-match"] > 0
    assert all({"path", "kind", "message"} == set(d) for d in data["diagnostics"])
    assert data["timings"]["total"] > 0
    # Piped: no progress output; only the one line saying the one-shot map started no server.
    assert [line for line in proc.stderr.splitlines() if "no language server started" not in line] == []


def test_map_text_with_chat_and_mention(stdlib_repo: Path, tmp_path: Path) -> None:
    proc = run_cli(
        "map",
        str(stdlib_repo),
        "--tokens",
        "512",
        "--chat",
        "json/decoder.py",
        "--mention",
        "FileCookieJar",
        "--cache-dir",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    assert "json/decoder.py:" not in proc.stdout
    assert "class FileCookieJar" in proc.stdout
    assert "json/scanner.py:" in proc.stdout


def test_errors_are_one_line_and_nonzero(tmp_path: Path) -> None:
    proc = run_cli("map", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr
    proc = run_cli("map", str(tmp_path), "--tokens", "0")
    assert proc.returncode == 2 and "--tokens" in proc.stderr
    proc = run_cli("map", str(tmp_path), "--chat", "/etc/passwd")
    assert proc.returncode == 2 and "outside the root" in proc.stderr


def test_cache_clear(git_repo, tmp_path: Path) -> None:
    root = git_repo({"m.py": "def gamma():\n    pass\n"})
    assert run_cli("map", str(root), "--cache-dir", str(tmp_path)).returncode == 0
    proc = run_cli("cache", "clear", "--cache-dir", str(tmp_path))
    # The file's parse and the token counts of the lines its map showed.
    assert proc.returncode == 0 and re.search(r"removed [1-9]\d* entries", proc.stdout), proc.stdout
    again = run_cli("cache", "clear", "--cache-dir", str(tmp_path))
    assert again.returncode == 0 and "removed 0 entries" in again.stdout


def test_progress_shows_on_a_terminal_only(stdlib_repo: Path, tmp_path: Path) -> None:
    code, stderr, stdout = run_on_pty(
        ["map", str(stdlib_repo), "--tokens", "256", "--cache-dir", str(tmp_path / "tty")], stream="stderr"
    )
    assert code == 0
    assert "hybridmap: parsing" in stderr and "files" in stderr
    assert "hybridmap: " not in stdout  # the map itself stays clean (no progress line)


def test_a_one_shot_hybrid_map_says_once_that_no_server_started(tmp_path: Path) -> None:
    """On 48637be the map came back tree-sitter only and nothing said why; now one stderr line
    names the languages and how to get servers. A static map, which asked for none, says nothing."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_text("def run():\n    return 1\n")
    (root / "main.go").write_text("package main\n\nfunc main() {}\n")
    cache = str(tmp_path / "cache")
    hybrid = run_cli("map", str(root), "--cache-dir", cache)
    assert hybrid.returncode == 0, hybrid.stderr
    lines = [line for line in hybrid.stderr.splitlines() if "no language server started" in line]
    assert len(lines) == 1, hybrid.stderr
    assert "go, python" in lines[0] and "--server-wait" in lines[0] and "hybridmap mcp" in lines[0]
    static = run_cli("map", str(root), "--cache-dir", cache, "--mode", "static")
    assert static.returncode == 0 and "language server" not in static.stderr, static.stderr
    # An index a static map cannot use is said, not silently dropped (93cd2d1: nothing).
    indexed = run_cli("map", str(root), "--cache-dir", cache, "--mode", "static", "--index", "auto")
    assert indexed.returncode == 0 and "--index is ignored by --mode static" in indexed.stderr, indexed.stderr
