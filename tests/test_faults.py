"""Misbehaving servers are real processes: the map still comes back, nothing is left running."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.languages import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry

from .test_lsp import fixture_repo

FAULT_SERVER = Path(__file__).resolve().parent / "servers" / "fault_server.py"


def registry_with_fault_server(tmp_path: Path, mode: str, timeout: float = 2.0) -> LanguageRegistry:
    user = tmp_path / "user_configs"
    user.mkdir(exist_ok=True)
    (user / "python.toml").write_text(f"""
[language]
name = "python"
grammar = "python"
file-types = ["py"]
language-servers = ["fault"]

[language-server.fault]
command = "{sys.executable}"
args = ["{FAULT_SERVER}", "{mode}"]
timeout = {timeout}
ready-timeout = 5
""")
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


def map_with(tmp_path: Path, mode: str, **overrides: object) -> tuple[RepoMap, Path]:
    root = fixture_repo(tmp_path, "python")
    registry = registry_with_fault_server(tmp_path, mode)
    repo = RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache"), **overrides})
    return repo, root


@pytest.mark.parametrize("mode", ["crash-on-request", "hang", "exit-now", "flood-stderr", "spawn-child"])
def test_map_comes_back_within_its_deadline(mode: str, tmp_path: Path) -> None:
    repo, _ = map_with(tmp_path, mode)
    with repo:
        start = time.monotonic()
        result = repo.map(mode="hybrid", server_wait=8, tokens=256)
        elapsed = time.monotonic() - start
        assert elapsed < 8 + 3, f"{mode}: map took {elapsed:.1f}s"
        assert "def load" in result.text  # static symbols are always there
        report = result.servers["python"]
        if mode in ("crash-on-request", "exit-now"):
            assert report.state is ServerState.FAILED, report
            assert "exited with code" in report.detail or "initialize" in report.detail
            assert any(d.kind == "server_failed" and d.path == "python" for d in result.diagnostics)
        else:
            assert report.state is ServerState.READY, report
    # no_orphan_processes (conftest) checks that the server and its children are gone


def test_crashed_server_is_restarted_with_backoff_then_given_up(tmp_path: Path) -> None:
    repo, _ = map_with(tmp_path, "crash-on-request", server_restart_backoff=0.2, server_max_restarts=2)
    with repo:
        states = []
        for _ in range(6):
            result = repo.map(mode="hybrid", server_wait=3, tokens=256)
            states.append((result.servers["python"].state, result.servers["python"].detail))
            time.sleep(0.5)
    assert states[0][0] is ServerState.FAILED
    assert any("restarted 1x" in d for _, d in states)
    assert "restarted 2x" in states[-1][1]  # the limit: no third restart
    assert not any("restarted 3x" in d for _, d in states)


def test_hanging_request_times_out_and_keeps_static_edges(tmp_path: Path) -> None:
    repo, _ = map_with(tmp_path, "hang")
    with repo:
        result = repo.map(mode="hybrid", server_wait=6, tokens=256)
        edges = result.edges
    assert edges["lsp"] == 0 and edges["name-match"] > 0
    assert result.stats["lsp_errors"] >= 1
