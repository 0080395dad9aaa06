"""Hostile repositories against the language-server side: configs, outside content, repository
code run by servers, servers that never initialize, daemons, bounded close.

Every test builds a real repository (real git, real files) and uses real servers or
``tests/servers/fault_server.py``; each asserts what must never happen (a marker file written
by repository code, a secret from outside the root in the output, a process left behind, a
traceback) and that the map or doctor still came back and said why.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hybridmap.doctor import check_servers
from hybridmap.languages import LanguageRegistry
from hybridmap.settings import Settings

from ..conftest import git


def commit_repo(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    return root


# --- finding 12: a repository's .hybridmap/lsp_configs/*.toml --------------------------------

def _repo_config(server: str) -> str:
    return f"""
[language]
name = "python"
language-servers = ["evil"]
[language-server.evil]
command = "evil-server"
{server}
"""


BAD_CONFIGS = {
    "absolute-root-pattern": _repo_config('required-root-patterns = ["/etc/passwd"]'),
    "parent-root-pattern": _repo_config('required-root-patterns = ["../*"]'),
    "home-root-pattern": _repo_config('required-root-patterns = ["~/.ssh/*"]'),
    "pattern-not-a-string": _repo_config("required-root-patterns = [1, {a = 2}]"),
    "patterns-not-a-list": _repo_config('required-root-patterns = "go.mod"'),
    "too-many-patterns": _repo_config(f"required-root-patterns = {json.dumps([f'p{i}' for i in range(5000)])}"),
    "huge-pattern": _repo_config(f'required-root-patterns = ["{"*" * 100_000}"]'),
    "timeout-a-string": _repo_config('timeout = "abc"'),
    "timeout-huge": _repo_config("timeout = 1e300"),
    "timeout-nan": _repo_config("timeout = nan"),
    "timeout-negative": _repo_config("ready-timeout = -5"),
    "timeout-bool": _repo_config("timeout = true"),
    "install-a-table": _repo_config("install = { a = 1 }"),
    "command-a-table": _repo_config("command2 = 1\n[language-server.evil.command]\nx = 1"),
    "server-not-a-table": '[language]\nname = "python"\nlanguage-servers = ["evil"]\n[language-server]\nevil = 3\n',
    "servers-a-string": '[language]\nname = "python"\nlanguage-servers = "evil"\n[language-server.e]\ncommand = "x"\n',
    "environment-not-strings": _repo_config("environment = { A = 1 }"),
    "ready-regex-huge": _repo_config(f'ready = "log:{"a" * 100_000}"'),
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_repository_server_config_is_reported_not_a_crash(name: str, tmp_path: Path,
                                                              registry: LanguageRegistry) -> None:
    """Every field of a repository's server config, wrong in type, size or place: the doctor
    reports the file as ignored (no opt-in needed to read it) and the built-ins still serve."""
    root = commit_repo(tmp_path / "repo", {"a.py": "x = 1\n",
                                            ".hybridmap/lsp_configs/python.toml": BAD_CONFIGS[name]})
    settings = Settings(cache_dir=str(tmp_path / "cache"))
    checks = asyncio.run(check_servers(root, registry, settings, start=False, wait=0))
    python = {c.language: c for c in checks}["python"]
    assert python.config_problem.startswith("repository config ignored: "), python
    assert "evil" not in [c.name for c in python.candidates]
    assert python.chosen is not None  # the built-in candidates are untouched


def test_doctor_cli_with_absolute_root_pattern_has_no_traceback(tmp_path: Path) -> None:
    """The reported crash: ``hybridmap servers`` on such a repository, with and without start."""
    root = commit_repo(tmp_path / "repo", {"a.py": "x = 1\n",
                                            ".hybridmap/lsp_configs/python.toml": BAD_CONFIGS["absolute-root-pattern"]})
    for extra in (["--no-start"], ["--server-wait", "5"]):
        proc = subprocess.run([sys.executable, "-m", "hybridmap", "servers", str(root), *extra],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "repository config ignored" in proc.stdout and "not a relative glob" in proc.stdout
