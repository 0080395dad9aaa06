"""Server policy with real processes: restarts, trust in repository configs, the environment.

Each misbehaviour of a server is in ``test_fault_servers.py``; this file checks the policies
around them: how often a crashing server is restarted, that a repository cannot make us run
its commands, and what a server process may see of our environment.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.infra.git import git_config_environment
from hybridmap.sources.lsp.session import ENV_ALLOWLIST, INSTALL_DIRS, TOKEN_VARIABLE

from ..helpers import fixture_repo, registry_with_fault_server


def map_with(tmp_path: Path, mode: str, **overrides: object) -> tuple[RepoMap, Path]:
    root = fixture_repo(tmp_path, "python")
    registry = registry_with_fault_server(tmp_path, mode)
    repo = RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache"), **overrides})
    return repo, root


# --- restarts ---------------------------------------------------------------------------


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


def test_restart_waits_for_the_backoff_after_a_failure_mid_session(tmp_path: Path) -> None:
    """A server that crashes on a request (not at start) is not restarted before the backoff."""
    repo, _ = map_with(tmp_path, "crash-on-request", server_restart_backoff=30.0)
    with repo:
        first = repo.map(mode="hybrid", server_wait=3, tokens=256)
        second = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert first.servers["python"].state is ServerState.FAILED
    assert second.servers["python"].state is ServerState.FAILED
    assert "restarted" not in second.servers["python"].detail


# --- trust --------------------------------------------------------------------------------


def repository_server(root: Path, marker: Path, name: str = "evil") -> None:
    """The repository ships a server config whose command would create ``marker`` (which the
    sandbox refuses even once it is allowed to run) and says ``evil-ran`` on stderr."""
    configs = root / ".hybridmap" / "lsp_configs"
    configs.mkdir(parents=True, exist_ok=True)
    (configs / "python.toml").write_text(
        f'[language]\nname = "python"\nlanguage-servers = ["{name}"]\n\n'
        f'[language-server.{name}]\ncommand = "sh"\n'
        f'args = ["-c", "touch {marker}; echo evil-ran >&2; sleep 0.2; exit 1"]\n'
    )


def test_repository_server_never_runs_without_opt_in(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "marker"
    repository_server(root, marker)
    registry = registry_with_fault_server(tmp_path, None)  # the user has no Python server
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert not marker.exists()
    report = result.servers["python"]
    assert report.state is ServerState.UNTRUSTED and report.server is None
    assert report.detail.startswith("evil: untrusted (repository config; opt in with trust_repository_servers)")
    assert [(d.kind, d.message) for d in result.diagnostics if d.path == "python"] == [
        ("server_untrusted", report.detail)
    ]
    assert "def load" in result.text
    with RepoMap(
        root, registry=registry, overrides={"cache_dir": str(tmp_path / "c"), "trust_repository_servers": True}
    ) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert "evil-ran" in result.servers["python"].detail  # opted in: it ran (sandboxed: no marker)
    assert not marker.exists()
    assert result.servers["python"].state is ServerState.FAILED  # (and exited with code 1)
    assert "def load" in result.text


def test_untrusted_repository_server_is_reported_beside_the_one_used(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "marker"
    repository_server(root, marker)
    registry = registry_with_fault_server(tmp_path, "ok")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert not marker.exists()
    report = result.servers["python"]
    assert report.state is ServerState.READY and report.server == "fault"
    assert "evil: untrusted (repository config" in report.detail


def test_repository_cannot_replace_a_trusted_server_of_the_same_name(tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "marker"
    repository_server(root, marker, name="fault")  # same name as the user's server
    registry = registry_with_fault_server(tmp_path, "ok")
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert not marker.exists()
    assert result.servers["python"].state is ServerState.UNTRUSTED


@pytest.mark.parametrize("settings_file", ["hybridmap.toml", "pyproject.toml"])
def test_repository_cannot_opt_itself_in(settings_file: str, tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "marker"
    repository_server(root, marker)
    section = "[tool.hybridmap]\n" if settings_file == "pyproject.toml" else ""
    (root / settings_file).write_text(f"{section}trust_repository_servers = true\n")
    registry = registry_with_fault_server(tmp_path, None)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert not marker.exists()
    assert result.servers["python"].state is ServerState.UNTRUSTED
    notes = [d for d in result.diagnostics if d.kind == "repository_config"]
    assert len(notes) == 1 and "'trust_repository_servers' cannot be set by a repository" in notes[0].message
    assert "def load" in result.text  # the map still comes back


def test_user_config_file_opts_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fixture_repo(tmp_path, "python")
    marker = tmp_path / "marker"
    repository_server(root, marker)
    config_home = tmp_path / "xdg"
    (config_home / "hybridmap").mkdir(parents=True)
    (config_home / "hybridmap" / "config.toml").write_text("trust_repository_servers = true\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    registry = registry_with_fault_server(tmp_path, None)
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert "evil-ran" in result.servers["python"].detail


# --- environment ----------------------------------------------------------------------------


def test_server_environment_is_the_allowlist_plus_its_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYBRIDMAP_TEST_SECRET", "must-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "must-not-leak-either")
    monkeypatch.setenv("LANG", "C.UTF-8")
    root = fixture_repo(tmp_path, "python")
    env_file = tmp_path / "env.json"
    registry = registry_with_fault_server(
        tmp_path, "ok", extra_args=("--env-file", str(env_file)), environment='HYBRIDMAP_TEST_EXTRA = "from-config"'
    )
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="hybrid", server_wait=3, tokens=256)
    assert result.servers["python"].state is ServerState.READY
    seen = json.loads(env_file.read_text())
    assert "HYBRIDMAP_TEST_SECRET" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    assert seen["HYBRIDMAP_TEST_EXTRA"] == "from-config"
    assert seen["LANG"] == "C.UTF-8"
    # Its home, temporary and XDG directories are its scratch directory (the sandbox's one place
    # to write), never the user's.
    scratch = Path(seen["HOME"]).parent
    assert scratch.parent == tmp_path / "c" / "servers" and scratch.name.startswith("fault-")
    for name in ("TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert Path(seen[name]).parent == scratch, name
    # PATH: our install directories first, then the user's absolute PATH entries, in order.
    path = seen["PATH"].split(os.pathsep)
    assert path[: len(INSTALL_DIRS)] == [str(d) for d in INSTALL_DIRS]
    assert path[len(INSTALL_DIRS) :] == [p for p in os.environ["PATH"].split(os.pathsep) if os.path.isabs(p)]
    # Besides: our git overrides (for git the server runs) and the token that finds its processes.
    git_overrides = git_config_environment()
    assert {k: seen[k] for k in git_overrides} == git_overrides
    assert seen[TOKEN_VARIABLE]
    allowed = set(ENV_ALLOWLIST) | {"HYBRIDMAP_TEST_EXTRA", TOKEN_VARIABLE, "XDG_STATE_HOME"} | set(git_overrides)
    assert set(seen) <= allowed, set(seen) - allowed


def test_a_ready_server_that_times_out_is_a_diagnostic(tmp_path: Path) -> None:
    """Alive and READY, but every definition times out: the map says so, and keeps static edges."""
    repo, _ = map_with(tmp_path, "hang")
    with repo:
        result = repo.map(mode="hybrid", server_wait=4, tokens=256)
    assert result.servers["python"].state is ServerState.READY
    degraded = [d for d in result.diagnostics if d.kind == "server_degraded"]
    assert len(degraded) == 1 and degraded[0].path == "python"
    assert degraded[0].message.startswith("fault: ") and "timed out" in degraded[0].message
    assert result.edges["lsp"] == 0 and result.edges["name-match"] > 0
