"""Hostile git metadata: a repository's git configuration must never run a command, and git
must never list files from outside the root. Each case is a real repository, real git, and the
real CLI in a subprocess; the attack's command creates a marker file outside the repository."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git, write_files
from tests.helpers import GIT_SOURCE, command_writing, map_json, repository, run_cli_with_env


def test_fsmonitor_and_hooks_in_repository_config_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = repository(tmp_path)
    git(root, "config", "core.fsmonitor", command_writing(marker))
    hooks = root / ".git" / "hooks"
    for hook in ("post-checkout", "post-index-change", "pre-auto-gc", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\n{command_writing(marker)}\n")
        (hooks / hook).chmod(0o755)
    (root / "ignored.py").write_text("def ignored_function():\n    pass\n")
    (root / ".gitignore").write_text("ignored.py\n")
    for command in (("map", str(root), "--mode", "static", "--no-cache"), ("servers", str(root))):
        proc = run_cli_with_env(*command)
        assert proc.returncode == 0, proc.stderr
    data = map_json(root)
    assert not marker.exists(), "a command from the repository's git config ran"
    paths = {f["path"] for f in data["files"]}
    assert "settings.py" in paths and "ignored.py" not in paths  # still listed by git, ignores honoured
    assert not any(d["kind"] == "git_unavailable" for d in data["diagnostics"])


def embedded_bare_repository(directory: Path, marker: Path) -> None:
    """What survives ``git clone``: a committed directory that git discovery takes for a bare
    repository, with a config that points its work tree at itself and names a command."""
    (directory / "objects").mkdir(parents=True)
    (directory / "refs" / "heads").mkdir(parents=True)
    (directory / "objects" / ".keep").write_text("")
    (directory / "refs" / "heads" / ".keep").write_text("")
    (directory / "HEAD").write_text("ref: refs/heads/main\n")
    (directory / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "{command_writing(marker)}"\n\thooksPath = .\n'
    )
    (directory / "mod.py").write_text("def embedded_function():\n    pass\n")


def test_embedded_bare_repository_survives_clone_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    outer = repository(tmp_path, "outer")
    embedded_bare_repository(outer / "evil", marker)
    git(outer, "add", "-A")
    git(outer, "commit", "-q", "-m", "add a directory")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(outer), str(clone)], check=True, capture_output=True)
    assert (clone / "evil" / "config").is_file()  # the attack survives the clone
    evil = clone / "evil"
    data = map_json(evil)  # the subdirectory as the root
    from_inside = map_json(".", cwd=evil)  # run from inside it
    servers = run_cli_with_env("servers", ".", cwd=evil)
    assert servers.returncode == 0, servers.stderr
    assert not marker.exists(), "an embedded bare repository's config ran a command"
    for result in (data, from_inside):
        assert "embedded_function" in result["text"]  # mapped by walking the directory
        reasons = [d["message"] for d in result["diagnostics"] if d["kind"] == "git_unavailable"]
        assert reasons and "embedded bare repository" in reasons[0]
    whole = map_json(clone)  # the clone itself maps normally, through git
    assert not marker.exists()
    assert {"app.py", "evil/mod.py"} <= {f["path"] for f in whole["files"]}


def test_core_worktree_pointing_outside_lists_nothing_from_there(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write_files(outside, {"secret_plans.py": "def secret_function():\n    pass\n", "private-notes.txt": "salary\n"})
    root = repository(tmp_path)
    git(root, "config", "core.worktree", str(outside))
    data = map_json(root)
    output = json.dumps(data)
    assert "secret" not in output and "private-notes" not in output
    assert "load_settings" in data["text"]  # the root's own files, walked
    assert any("core.worktree" in d["message"] for d in data["diagnostics"] if d["kind"] == "git_unavailable")


def test_dot_git_file_naming_another_repository_lists_nothing_from_it(tmp_path: Path) -> None:
    other = repository(tmp_path, "other", {"confidential_design.py": "def confidential():\n    pass\n"})
    root = tmp_path / "repo"
    write_files(root, GIT_SOURCE)
    (root / ".git").write_text(f"gitdir: {other / '.git'}\n")
    data = map_json(root)
    assert "confidential" not in json.dumps(data)
    assert "load_settings" in data["text"]
    assert any("elsewhere" in d["message"] for d in data["diagnostics"] if d["kind"] == "git_unavailable")


def test_linked_worktree_is_still_listed_by_git(tmp_path: Path) -> None:
    """The .git-file check must not refuse what git itself makes: a linked worktree."""
    main = repository(tmp_path, "main")
    (main / ".gitignore").write_text("build/\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "ignore build")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    write_files(linked, {"build/generated.py": "def generated():\n    pass\n"})
    data = map_json(linked)
    assert not any(d["kind"] == "git_unavailable" for d in data["diagnostics"])
    assert "generated" not in data["text"]  # git's ignore rules applied: git listed it


def test_a_git_the_repository_ships_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = repository(tmp_path)
    fake = root / "git"
    fake.write_text(f"#!/bin/sh\n{command_writing(marker)}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f".:{os.environ['PATH']}"}  # a careless PATH, run from inside
    data = map_json(".", cwd=root, env=env)
    assert not marker.exists()
    assert "load_settings" in data["text"]


def test_the_callers_git_variables_do_not_redirect_git(tmp_path: Path) -> None:
    other = repository(tmp_path, "other", {"confidential_design.py": "def confidential():\n    pass\n"})
    root = repository(tmp_path)
    env = {**os.environ, "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}
    data = map_json(root, env=env)
    assert "confidential" not in json.dumps(data)
    assert "settings.py" in {f["path"] for f in data["files"]}


@pytest.mark.parametrize("attack", ["hooks", "filter", "signature", "external-diff"])
def test_eval_checkouts_run_no_repository_command(tmp_path: Path, attack: str) -> None:
    """The eval checks commits out: the one place where git writes a work tree, so the one
    place hooks, filter drivers, signature programs and external diffs could run."""
    marker = tmp_path / "ran"
    root = repository(tmp_path)
    for step in range(3):
        (root / "settings.py").write_text(f"def load_settings():\n    return {{'step': {step}}}\n")
        (root / "app.py").write_text(f"def handle_request():\n    return load_settings() + {step}\n")
        git(root, "commit", "-q", "-am", f"change {step}")
    command = command_writing(marker)
    if attack == "hooks":
        script = root / "hooks" / "post-checkout"
        script.parent.mkdir()
        script.write_text(f"#!/bin/sh\n{command}\n")
        script.chmod(0o755)
        git(root, "config", "core.hooksPath", str(script.parent))
    elif attack == "filter":
        (root / ".git" / "info" / "attributes").write_text("*.py filter=evil diff=evil\n")
        git(root, "config", "filter.evil.smudge", command)
        git(root, "config", "filter.evil.process", command)
        git(root, "config", "filter.evil.required", "true")
    elif attack == "signature":
        git(root, "config", "log.showSignature", "true")
        git(root, "config", "gpg.program", str(tmp_path / "gpg.sh"))
        (tmp_path / "gpg.sh").write_text(f"#!/bin/sh\n{command}\n")
        (tmp_path / "gpg.sh").chmod(0o755)
    else:
        (root / ".git" / "info" / "attributes").write_text("*.py diff=evil\n")
        git(root, "config", "diff.external", command)
        git(root, "config", "diff.evil.textconv", command)
        git(root, "config", "diff.evil.command", command)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hybridmap",
            "eval",
            str(root),
            "--commits",
            "2",
            "--modes",
            "static",
            "--tokens",
            "256",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the repository's {attack} ran during the eval"
    assert json.loads(proc.stdout)["commits_evaluated"] == 2, "the eval still replayed the commits"


def test_git_run_by_a_language_server_obeys_our_overrides(tmp_path: Path) -> None:
    """Servers may run git (gopls through the go command); their environment carries the same
    overrides, which rank above the repository's config. A real git, with a server's env."""
    from hybridmap.sources.lsp.config import ServerConfig
    from hybridmap.sources.lsp.session import server_environment

    marker = tmp_path / "ran"
    root = repository(tmp_path)
    git(root, "config", "core.fsmonitor", command_writing(marker))
    env = server_environment(
        ServerConfig(name="any", command="any"), environ={**os.environ, "PATH": f".:{os.environ['PATH']}"}
    )
    assert "." not in env["PATH"].split(os.pathsep)
    subprocess.run(["git", "status", "--porcelain"], cwd=root, env=env, check=True, capture_output=True)
    assert not marker.exists()
    subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True, capture_output=True)
    assert marker.exists()  # the control: without the overrides, the repository's command runs


def test_a_server_the_repository_ships_is_never_found_on_a_relative_path(tmp_path: Path) -> None:
    from hybridmap.sources.lsp.session import find_command

    root = repository(tmp_path)
    fake = root / "ty-fake-server"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    cwd = os.getcwd()
    try:
        os.chdir(root)
        assert find_command("ty-fake-server", extra_dirs=(), environ={"PATH": f".:{os.defpath}"}) is None
        assert find_command("ty-fake-server", extra_dirs=(), environ={"PATH": f"{root}:{os.defpath}"})
    finally:
        os.chdir(cwd)


def test_history_for_ranking_runs_no_repository_command_and_stays_in_the_root(tmp_path: Path) -> None:
    """log_name_only (the co-change signal's git log): a repository whose config names commands
    for everything log could run, and hooks; paths come back relative to the root, changes
    outside it left out, the output bounded, a refused root answered with nothing."""
    from hybridmap.infra.git import is_shallow, log_name_only

    marker = tmp_path / "ran"
    root = repository(tmp_path, files={**GIT_SOURCE, "pkg/store.py": "def store():\n    pass\n"})
    write_files(root, {"app.py": "def handle_request():\n    return store()\n", "pkg/store.py": "def store(): 1\n"})
    git(root, "commit", "-q", "-am", "both")
    write_files(root, {"\nodd.py": "x = 1\n"})  # a first path starting with git's own separator
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd name")
    for key in ("core.fsmonitor", "core.pager", "gpg.program", "diff.external", "core.sshCommand"):
        git(root, "config", key, command_writing(marker))
    git(root, "config", "log.showSignature", "true")
    for hook in ("post-checkout", "post-index-change", "pre-auto-gc", "reference-transaction"):
        (root / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\n{command_writing(marker)}\n")
        (root / ".git" / "hooks" / hook).chmod(0o755)

    history = log_name_only(root, 10)
    assert not marker.exists(), "a command from the repository's git config ran"
    assert is_shallow(root) is False and not marker.exists()  # asked when a log ends at a first commit
    assert history.complete and not history.problem
    assert [c.paths for c in history.commits] == [
        ("\nodd.py",),
        ("app.py", "pkg/store.py"),
        ("app.py", "pkg/store.py", "settings.py"),
    ]
    assert all(len(c.sha) == 40 for c in history.commits)
    assert [c.parentless for c in history.commits] == [False, False, True]  # the first commit has none
    assert [c.paths for c in log_name_only(root, 1).commits] == [("\nodd.py",)]
    # A subdirectory root: its own paths, only the commits that touched it.
    assert [c.paths for c in log_name_only(root / "pkg", 10).commits] == [("store.py",), ("store.py",)]
    # Bounded: git is stopped, and only whole commits are kept.
    cut = log_name_only(root, 10, max_bytes=150)
    assert not cut.complete and 0 < len(cut.commits) < 3
    assert cut.commits == history.commits[: len(cut.commits)]
    assert not marker.exists()

    outside = tmp_path / "elsewhere"
    write_files(outside, {"secret_plans.py": "def secret_function():\n    pass\n"})
    git(root, "config", "core.worktree", str(outside))
    refused = log_name_only(root, 10)
    assert refused.commits == () and "core.worktree" in refused.problem


def test_head_is_read_only_from_a_repository_the_root_may_ask(tmp_path: Path) -> None:
    """HEAD comes with the location in one git process (a refresh asks for it on every map); it
    counts only when the location passes the same checks: another repository's HEAD, named by a
    planted .git file or core.worktree, is never the root's."""
    from hybridmap.infra.git import head_commit

    other = repository(tmp_path, "other", {"confidential_design.py": "def confidential():\n    pass\n"})
    other_head = git(other, "rev-parse", "HEAD").strip()
    assert head_commit(other) == other_head  # the control: its own root
    planted = tmp_path / "repo"
    write_files(planted, GIT_SOURCE)
    (planted / ".git").write_text(f"gitdir: {other / '.git'}\n")
    assert head_commit(planted) is None
    moved = repository(tmp_path, "moved")
    git(moved, "config", "core.worktree", str(other))
    assert head_commit(moved) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert head_commit(empty) is None  # no commit yet
