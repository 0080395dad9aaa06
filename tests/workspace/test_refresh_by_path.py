"""A watch's batch re-read path by path (``Workspace.refresh_paths``) must give the snapshot a
whole listing gives: the same files, contents, languages, special files and diagnostics, after
any sequence of edits a working tree sees. Real git repositories and real files throughout."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from hybridmap.languages.registry import LanguageRegistry
from hybridmap.pipeline.inputs.session import Session
from hybridmap.settings import Settings
from hybridmap.workspace.state import Snapshot, Workspace

from ..conftest import git, write_files

START = {
    "README.md": "# demo\n",
    ".gitignore": "ignored/\n*.log\n",
    "pkg/__init__.py": "",
    "pkg/core.py": "def core():\n    return 1\n",
    "pkg/util.py": "def util():\n    return 2\n",
    "web/app.ts": "export function app(): number { return 1 }\n",
    "web/notes.txt": "not a source\n",
    "cmd/main.go": "package main\n\nfunc main() {}\n",
}
#: Where new files go: sources, non-sources, ignored, build output nobody committed, special files.
NEW_PLACES = ("pkg/", "web/", "cmd/", "", "ignored/", "build/", "pkg/sub/")
NEW_NAMES = ("extra.py", "more.ts", "data.json", "trace.log", "tool.go", "README.md", "CONTRIBUTING.md", "x.bin")


def _view(snapshot: Snapshot) -> tuple[object, ...]:
    """What must agree (order aside: nothing downstream depends on it)."""
    files = {
        p: (s.language, s.sha256, tuple((d.kind, d.message) for d in s.diagnostics)) for p, s in snapshot.files.items()
    }
    diagnostics = sorted((d.path, d.kind) for d in snapshot.diagnostics)
    return files, sorted(snapshot.special_files), diagnostics


def _fresh(root: Path, settings: Settings, registry: LanguageRegistry) -> Snapshot:
    return Workspace(root, settings, registry).refresh()[0]


def _edit(root: Path, rng: random.Random) -> set[str]:
    """One edit of the working tree; the paths a watch would name."""
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    )
    kind = rng.choice(("modify", "create", "create", "delete", "rename", "git add", "binary"))
    if kind in ("modify", "delete", "rename", "binary") and files:
        target = rng.choice([f for f in files if f != ".gitignore"])
        if kind == "modify":
            with (root / target).open("a") as handle:
                handle.write(f"\n# edit {rng.random()}\n")
            return {target}
        if kind == "binary":
            (root / target).write_bytes(b"\0\1\2" * 50)
            return {target}
        if kind == "delete":
            (root / target).unlink()
            return {target}
        renamed = f"{target.rpartition('/')[0]}/moved_{rng.randrange(1000)}.py".lstrip("/")
        os.rename(root / target, root / renamed)
        return {target, renamed}
    rel = rng.choice(NEW_PLACES) + rng.choice(NEW_NAMES)
    write_files(root, {rel: f"def made_{rng.randrange(1000)}():\n    pass\n"})
    if kind == "git add" and not rel.startswith(("ignored/",)) and not rel.endswith(".log"):
        git(root, "add", "--", rel)
    return {rel}


@pytest.mark.parametrize("seed", range(4))
def test_path_by_path_equals_a_whole_listing_after_any_edit(git_repo, seed: int) -> None:
    root = git_repo(START)
    settings = Settings(cache_dir=str(root.parent / "cache"))
    registry = LanguageRegistry.load()
    workspace = Workspace(root, settings, registry)
    workspace_shas = workspace.refresh()[0].shas
    rng = random.Random(seed)
    by_path = whole = 0
    for _ in range(25):
        named = _edit(root, rng)
        done = workspace.refresh_paths(named)
        if done is None:  # a new directory: only a whole listing can say
            assert any((root / rel).parent != root and not _was_listed_dir(workspace, rel) for rel in named), named
            workspace_shas = workspace.refresh()[0].shas
            whole += 1
            continue
        by_path += 1
        before = workspace_shas
        snapshot, changes = done
        fresh = _fresh(root, settings, registry)
        assert snapshot.stats["files_named"] == len(named)
        assert _view(snapshot) == _view(fresh), named
        assert changes.touched <= named
        # The per-path views (read through the states, which are patched at the named paths)
        # are those made afresh, and what moved between two of them reads the same either way.
        assert dict(snapshot.shas) == fresh.shas and dict(snapshot.languages) == fresh.languages
        assert Session.compare(before, snapshot.shas) == Session.compare(dict(before), dict(snapshot.shas))
        workspace_shas = snapshot.shas
    assert by_path >= 10  # most edits are answered path by path


def _was_listed_dir(workspace: Workspace, rel: str) -> bool:
    directory = rel.rpartition("/")[0]
    return not directory or any(p.startswith(directory + "/") for p in workspace.snapshot.files)


def test_what_only_a_whole_listing_can_say(git_repo) -> None:
    root = git_repo(START)
    settings = Settings(cache_dir=str(root.parent / "cache"))
    workspace = Workspace(root, settings, LanguageRegistry.load())
    workspace.refresh()
    # An ignore file: what it now ignores or lets in is not named.
    (root / ".gitignore").write_text("ignored/\n")
    assert workspace.refresh_paths({".gitignore"}) is None
    # A directory made, or removed with its files, is named by itself.
    write_files(root, {"newdir/a.py": "def a():\n    pass\n"})
    assert workspace.refresh_paths({"newdir"}) is None
    git(root, "rm", "-rq", "--cached", "web")
    for name in ("app.ts", "notes.txt"):
        (root / "web" / name).unlink()
    (root / "web").rmdir()
    assert workspace.refresh_paths({"web"}) is None
    # A whole listing again: path by path works from it.
    workspace.refresh()
    (root / "pkg" / "core.py").write_text("def core():\n    return 3\n")
    snapshot, changes = workspace.refresh_paths({"pkg/core.py"}) or (None, None)
    assert snapshot is not None and changes is not None and changes.changed == ("pkg/core.py",)


def test_no_path_by_path_without_git_or_past_max_files(tmp_path: Path, git_repo) -> None:
    write_files(tmp_path / "plain", START)  # no git: a walk, which ignore files steer
    registry = LanguageRegistry.load()
    walked = Workspace(tmp_path / "plain", Settings(cache_dir=str(tmp_path / "c1")), registry)
    walked.refresh()
    assert walked.refresh_paths({"pkg/core.py"}) is None
    root = git_repo(START)
    small = Workspace(root, Settings(cache_dir=str(tmp_path / "c2"), max_files=len(START)), registry)
    small.refresh()
    write_files(root, {"pkg/one_more.py": "def one_more():\n    pass\n"})
    assert small.refresh_paths({"pkg/one_more.py"}) is None  # max_files would choose what to keep


def test_hostile_names_are_literal_paths_to_git(git_repo) -> None:
    """Names a repository chooses reach git as ``:(literal)`` pathspecs after ``--``: a glob, an
    option, pathspec magic and a newline are each that one file, never a pattern or a flag."""
    root = git_repo(START)
    settings = Settings(cache_dir=str(root.parent / "cache"))
    registry = LanguageRegistry.load()
    workspace = Workspace(root, settings, registry)
    workspace.refresh()
    hostile = {
        "pkg/*.py": "def star():\n    pass\n",
        "pkg/--output=owned.py": "def option():\n    pass\n",
        "pkg/:(glob)**.py": "def magic():\n    pass\n",
        "pkg/new\nline.py": "def newline():\n    pass\n",
    }
    write_files(root, hostile)
    done = workspace.refresh_paths(set(hostile))
    assert done is not None
    snapshot, changes = done
    assert set(changes.added) == set(hostile)  # each name is itself, and only itself
    assert _view(snapshot) == _view(_fresh(root, settings, registry))
    assert not (root / "owned.py").exists() and not (root / "pkg" / "owned.py").exists()


def test_an_edit_of_a_listed_file_does_not_ask_git(git_repo) -> None:
    """A listed file that is still there stays listed: only new paths and paths gone are asked
    of git (at 100,000 files each question is a fork and a read of the whole index). With git
    unable to answer, an edit is still read path by path; a new file needs the whole listing."""
    root = git_repo(START)
    settings = Settings(cache_dir=str(root.parent / "cache"))
    workspace = Workspace(root, settings, LanguageRegistry.load())
    workspace.refresh()
    (root / ".git").rename(root.parent / "git-elsewhere")  # git now fails for this root
    (root / "pkg" / "core.py").write_text("def core():\n    return 4\n")
    done = workspace.refresh_paths({"pkg/core.py"})
    assert done is not None and done[1].changed == ("pkg/core.py",)
    write_files(root, {"pkg/fresh.py": "def fresh():\n    pass\n"})
    assert workspace.refresh_paths({"pkg/fresh.py"}) is None
    (root / "pkg" / "util.py").unlink()
    assert workspace.refresh_paths({"pkg/util.py"}) is None  # gone: git's index may still list it
