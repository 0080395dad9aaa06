"""Scripts named like a language (issue 23, finding 4.3).

A ``file-types`` string is an extension and, Helix-style, a whole file name: ``bin/elm`` and
``bin/php``, shell wrappers many projects keep, were parsed as Elm and PHP, and ``bin/elm``,
handed to elm-language-server, made it report the whole project degraded ("No Elm workspace
contains .../bin/elm"). A file without an extension that only a bare name matches is now a
source only by its shebang, and of the shebang's language (``#!/bin/sh``: shell).

A real git repository holding the Elm and PHP fixtures, wrappers in ``bin/`` and a real PHP
script named ``tools/php``; mapped through the real CLI (static, the files' languages) and the API
with the real elm-language-server (hybrid: its state).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hybridmap import RepoMap, ServerState
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry

from ..conftest import git
from ..helpers import LSP_FIXTURES as FIXTURES
from ..helpers import require

WRAPPERS = {
    "bin/elm": '#!/bin/sh\nexec "$HOME/.local/elm-0.19.1/bin/elm" "$@"\n',
    "bin/php": '#!/bin/sh\nexec docker run --rm -v "$PWD:/app" php:8.3 php "$@"\n',
    "bin/sh": "# not a script: no shebang\nrun() { :; }\n",
    "tools/php": "#!/usr/bin/env php\n<?php\nfunction tool_helper(): int { return 1; }\n",
}


def wrapper_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "elm", root)
    shutil.copytree(FIXTURES / "php", root, dirs_exist_ok=True)
    for rel, text in WRAPPERS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "elm and php with wrapper scripts")
    return root


def test_wrapper_scripts_are_not_parsed_as_the_language_they_are_named_after(tmp_path: Path) -> None:
    root = wrapper_repo(tmp_path)
    command = [sys.executable, "-P", "-m", "hybridmap", "map", str(root), "--mode", "static", "--format", "json"]
    proc = subprocess.run(
        [*command, "--tokens", "4000", "--cache-dir", str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "home")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    languages = {f["path"]: f["language"] for f in json.loads(proc.stdout)["files"]}
    elm = {p for p, lang in languages.items() if lang == "elm"}
    php = {p for p, lang in languages.items() if lang == "php"}
    assert elm == {"src/Main.elm", "src/Disk.elm", "src/Memory.elm"}, languages  # before: and bin/elm
    assert php == {"app.php", "src/Store/Disk.php", "src/Store/Memory.php", "tools/php"}, languages
    assert languages.get("bin/elm") == languages.get("bin/php") == "bash", languages
    assert "bin/sh" not in languages, languages  # named like an extension, no shebang: not a source


def _without_servers(directory: Path, language: str) -> None:
    """A user config for ``language`` with no server (merged over the built-in one)."""
    (directory / f"{language}.toml").write_text("[language]\nlanguage-servers = []\n")


def test_the_elm_server_is_not_degraded_by_a_wrapper_script(tmp_path: Path) -> None:
    require("elm-language-server")
    root = wrapper_repo(tmp_path)
    # Only elm-language-server runs: another server starting beside it on a loaded machine
    # sometimes has it answer before its workspace is loaded (a race of its own, not this one).
    user = tmp_path / "user_configs"
    user.mkdir()
    for language in ("bash", "php"):
        _without_servers(user, language)
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=30, tokens=4000)
    report = result.servers["elm"]
    # Before: degraded, "No Elm workspace contains .../bin/elm".
    assert report.state is ServerState.READY, report
    assert not [d for d in result.diagnostics if "bin/" in d.message], result.diagnostics
    assert result.edges.get("lsp", 0) > 0, result.edges
