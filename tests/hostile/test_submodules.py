"""Git submodules: a checked-out submodule's files are mapped, listed by git as a repository of
its own with the same hardening, and a submodule's git metadata (which comes with the repository
when it arrives as a directory) neither runs a command nor lists files from elsewhere. Real
repositories, real ``git submodule``, the real CLI in a subprocess; the attack's command creates
a marker file outside the repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from hybridmap.infra.git import git_config_environment
from hybridmap.settings import Settings
from hybridmap.workspace.walk import list_files
from tests.conftest import git, write_files
from tests.helpers import command_writing, map_json, repository

ALLOW_FILE = ("-c", "protocol.file.allow=always")  # git refuses local submodule URLs by default


def superproject(tmp_path: Path) -> Path:
    """``app/`` with a submodule ``vendor/lib`` (added with ``git submodule add``) that has a
    submodule of its own, ``deps/inner``; both checked out."""
    inner = repository(tmp_path, "inner", {"inner_mod.py": "def inner_helper():\n    pass\n"})
    lib = repository(
        tmp_path,
        "lib",
        {"lib_mod.py": "def vendored_parser():\n    return inner_helper()\n", ".gitignore": "ignored_in_lib.py\n"},
    )
    git(lib, *ALLOW_FILE, "submodule", "add", "-q", str(inner), "deps/inner")
    git(lib, "commit", "-q", "-m", "add inner")
    app = repository(tmp_path, "app", {"app.py": "def main():\n    return vendored_parser()\n"})
    git(app, *ALLOW_FILE, "submodule", "add", "-q", str(lib), "vendor/lib")
    git(app, *ALLOW_FILE, "submodule", "update", "-q", "--init", "--recursive")
    git(app, "commit", "-q", "-m", "add lib")
    assert (app / "vendor" / "lib" / ".git").is_file()  # absorbed: the git dir is in app/.git/modules
    return app


def test_a_checked_out_submodule_is_mapped(tmp_path: Path) -> None:
    app = superproject(tmp_path)
    lib = app / "vendor" / "lib"
    write_files(lib, {"untracked_in_lib.py": "def fresh_in_lib():\n    pass\n", "ignored_in_lib.py": "x = 1\n"})
    data = map_json(app)
    paths = {f["path"] for f in data["files"]}
    assert {"app.py", "vendor/lib/lib_mod.py", "vendor/lib/deps/inner/inner_mod.py"} <= paths
    listed = list_files(app, Settings())
    assert "vendor/lib/untracked_in_lib.py" in listed.paths  # untracked, not ignored: listed as in the root
    assert "vendor/lib/ignored_in_lib.py" not in listed.paths  # the submodule's own .gitignore
    assert "vendor/lib" not in listed.paths and "vendor/lib/deps/inner" not in listed.paths  # gitlinks
    assert not [d for d in data["diagnostics"] if d["kind"] in ("submodule_skipped", "git_unavailable")]
    # A root below the superproject's top: paths relative to it.
    assert "lib/lib_mod.py" in list_files(app / "vendor", Settings()).paths
    # max_submodules bounds how many are listed, and says so.
    capped = list_files(app, Settings().replace(max_submodules=1))
    assert "vendor/lib/lib_mod.py" in capped.paths
    assert "vendor/lib/deps/inner/inner_mod.py" not in capped.paths
    assert any("max_submodules=1" in d.message and "deps/inner" in d.message for d in capped.diagnostics)

    # A clone without --recurse-submodules: nothing checked out, said in one diagnostic.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(app), str(clone))
    cloned = map_json(clone)
    assert "app.py" in {f["path"] for f in cloned["files"]}
    notes = [d["message"] for d in cloned["diagnostics"] if d["kind"] == "submodule_skipped"]
    assert len(notes) == 1 and "1 submodule(s) not checked out" in notes[0] and "vendor/lib" in notes[0]
    git(clone, *ALLOW_FILE, "submodule", "update", "-q", "--init", "--recursive")
    assert "vendor/lib/deps/inner/inner_mod.py" in list_files(clone, Settings()).paths


def test_a_submodules_fsmonitor_and_hooks_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    app = superproject(tmp_path)
    lib = app / "vendor" / "lib"
    git_dir = app / ".git" / "modules" / "vendor" / "lib"
    git(lib, "config", "core.fsmonitor", command_writing(marker))  # written to .git/modules/vendor/lib/config
    assert command_writing(marker) in (git_dir / "config").read_text()
    for hook in ("post-checkout", "post-index-change", "pre-auto-gc", "reference-transaction"):
        (git_dir / "hooks" / hook).write_text(f"#!/bin/sh\n{command_writing(marker)}\n")
        (git_dir / "hooks" / hook).chmod(0o755)
    data = map_json(app)
    assert not marker.exists(), "a command from the submodule's git config ran"
    assert "vendor/lib/lib_mod.py" in {f["path"] for f in data["files"]}  # still listed, by git
    # git run by a language server (gopls runs git) recurses into submodules (`git status`): the
    # overrides in its environment reach the child git that runs in the submodule.
    env = {**os.environ, **git_config_environment()}
    subprocess.run(["git", "status", "--porcelain"], cwd=app, env=env, check=True, capture_output=True)
    assert not marker.exists(), "the submodule's fsmonitor ran under a server's git environment"
    subprocess.run(["git", "status", "--porcelain"], cwd=app, check=True, capture_output=True)
    assert marker.exists()  # the control: git itself, without the overrides, runs it


def test_a_fake_submodule_naming_a_git_directory_elsewhere_is_refused(tmp_path: Path) -> None:
    """A repository arriving as a directory brings its submodules' git metadata: a git dir in
    ``.git/modules`` whose ``core.worktree`` moves the work tree (to the superproject), a
    gitlink's ``.git`` file naming another repository on the machine, which even points back, and
    a submodule directory that is a symbolic link to another repository."""
    app = superproject(tmp_path)
    lib = app / "vendor" / "lib"
    inner = lib / "deps" / "inner"
    git(inner, "config", "core.worktree", str(app))
    moved = map_json(app)
    assert "vendor/lib/lib_mod.py" in {f["path"] for f in moved["files"]}
    reasons = {d["path"]: d["message"] for d in moved["diagnostics"] if d["kind"] == "submodule_skipped"}
    assert "own work tree" in reasons["vendor/lib/deps/inner"]
    assert not any(f["path"].startswith("vendor/lib/deps/") for f in moved["files"])

    other = repository(tmp_path, "other", {"confidential_design.py": "def confidential():\n    pass\n"})
    git(other, "config", "core.worktree", str(lib))
    (lib / ".git").write_text(f"gitdir: {other / '.git'}\n")
    data = map_json(app)
    assert "confidential" not in json.dumps(data)
    paths = {f["path"] for f in data["files"]}
    assert "app.py" in paths and not any(p.startswith("vendor/") for p in paths)
    reasons = {d["path"]: d["message"] for d in data["diagnostics"] if d["kind"] == "submodule_skipped"}
    assert "outside the superproject's .git/modules" in reasons["vendor/lib"]

    # The submodule's directory swapped for a symbolic link to another repository: not followed.
    shutil.rmtree(lib)
    lib.symlink_to(other)
    listed = list_files(app, Settings())
    assert not any(path.startswith("vendor/") for path in listed.paths)
    assert [d.message for d in listed.diagnostics if d.path == "vendor/lib"] == [
        "submodule not listed: its path passes through a symbolic link"
    ]
