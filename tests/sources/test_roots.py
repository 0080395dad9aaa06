"""Project roots: each file's server runs in its own project (go.mod, package.json, pyproject.toml),
a bounded number at once.

The monorepo fixture (``tests/fixtures/monorepo``) has two Go modules, two TypeScript packages
and two Python projects (one with a src layout), no manifest at the root, and the same names in
each pair. Real servers show what one server at the repository root gave, and what one server
per project root gives; pure tests pin down how a root is found.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from hybridmap import RepoMap, ServerState
from hybridmap.errors import ConfigError
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
from hybridmap.model import ServerReport
from hybridmap.settings import Settings
from hybridmap.sources.lsp.config import root_markers
from hybridmap.sources.lsp.pool import ServerPool, summarise
from hybridmap.sources.lsp.roots import LineMarker, ProjectRoots, RootMarkers, marker_problem

from ..conftest import git, write_files
from ..helpers import TESTS, edges, require

MONOREPO = TESTS / "fixtures" / "monorepo"
GO = RootMarkers(("go.mod",), ("go.work",))


def monorepo(tmp_path: Path) -> Path:
    root = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")
    return root


def touch(root: Path, *paths: str) -> None:
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")


# --- finding a file's project root (pure: files on disk, no server) ------------------------


def test_nearest_marker_upwards_wins(tmp_path: Path) -> None:
    touch(tmp_path, "a/go.mod", "a/b/c/x.go", "a/b/go.mod", "a/b/y.go", "z.go", "a/w.go")
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    found = roots.assign([(p, GO) for p in ("a/b/c/x.go", "a/b/y.go", "a/w.go", "z.go")])
    assert found == {"a/b/c/x.go": "a/b", "a/b/y.go": "a/b", "a/w.go": "a", "z.go": ""}


def test_workspace_marker_outermost_wins(tmp_path: Path) -> None:
    """A go.work makes one root of its modules, as the go command sees them."""
    touch(tmp_path, "w/go.work", "w/m1/go.mod", "w/m1/x.go", "w/m2/go.mod", "w/m2/y.go", "other/go.mod", "other/z.go")
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    found = roots.assign([(p, GO) for p in ("w/m1/x.go", "w/m2/y.go", "other/z.go")])
    assert found == {"w/m1/x.go": "w", "w/m2/y.go": "w", "other/z.go": "other"}


def test_a_cargo_workspace_without_a_lock_is_one_root(tmp_path: Path) -> None:
    """Most Rust libraries commit no Cargo.lock: their workspace is known by the root manifest's
    ``[workspace]`` table (the built-in rust.toml's line marker); a crate's own manifest below,
    or a manifest that only mentions the word, makes no workspace. An edit of the manifest is
    seen on the next call."""
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR])
    rust = root_markers(registry.get("rust").raw, registry.get("rust").config_path)
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["regex-syntax", "regex-lite"]\n',
        "src/lib.rs": "",
        "regex-syntax/Cargo.toml": '[package]\nname = "regex-syntax"\n',
        "regex-syntax/src/lib.rs": "",
        "regex-lite/Cargo.toml": '[package]\nname = "regex-lite"\n\n[workspace.lints]\n',
        "regex-lite/src/lib.rs": "",
        "other/Cargo.toml": '[package]\nname = "other"\ndescription = "not a [workspace]"\n',
        "other/src/lib.rs": "",
    }
    write_files(tmp_path, files)
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    paths = [p for p in files if p.endswith(".rs")]
    assert roots.assign([(p, rust) for p in paths]) == dict.fromkeys(paths, "")
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "regex"\n# no [workspace] any more\n')
    assert roots.assign([(p, rust) for p in paths]) == {
        "src/lib.rs": "",
        "regex-syntax/src/lib.rs": "regex-syntax",
        "regex-lite/src/lib.rs": "regex-lite",  # its own [workspace.lints]: the outermost there
        "other/src/lib.rs": "other",
    }


def test_no_marker_and_no_markers_fall_back_to_the_repository_root(tmp_path: Path) -> None:
    touch(tmp_path, "src/deep/x.go", "pkg/go.mod", "pkg/y.sh")
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    assert roots.root_of("src/deep/x.go", GO) == ""
    assert roots.root_of("pkg/y.sh", RootMarkers()) == ""  # a language without markers
    assert roots.root_of("../x.go", GO) == "" and roots.root_of("/etc/x.go", GO) == ""  # never climbed


def test_the_search_never_looks_above_the_repository_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outer = tmp_path / "outer"
    touch(outer, "go.mod", "repo/cmd/x.go")
    repo = outer / "repo"
    looked: list[str] = []
    real_lstat = os.lstat

    def spy(path: os.PathLike[str] | str, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.fspath(path))
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", spy)
    assert ProjectRoots(repo, racy_seconds=0).root_of("cmd/x.go", GO) == ""  # outer/go.mod is not ours
    assert looked and all(Path(p) == repo or repo in Path(p).parents for p in looked), looked


def test_symlinks_out_of_the_root_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    touch(outside, "go.mod", "mod/go.mod")
    repo = tmp_path / "repo"
    touch(repo, "linked_mod/x.go", "inner/x.go", "inside/x.go", "real.mod", "loop/x.go")
    (repo / "via").symlink_to(outside / "mod", target_is_directory=True)  # a directory link out
    (repo / "linked_mod" / "go.mod").symlink_to(outside / "go.mod")  # a marker link out
    (repo / "inside" / "go.mod").symlink_to(repo / "real.mod")  # a marker link that stays in
    (repo / "loop" / "go.mod").symlink_to(repo / "loop" / "go.mod")  # a link to itself
    roots = ProjectRoots(repo, racy_seconds=0)
    found = roots.assign([(p, GO) for p in ("via/x.go", "linked_mod/x.go", "inside/x.go", "loop/x.go")])
    assert found == {"via/x.go": "", "linked_mod/x.go": "", "inside/x.go": "inside", "loop/x.go": ""}


def test_a_marker_added_or_removed_later_is_seen(tmp_path: Path) -> None:
    touch(tmp_path, "svc/main.go")
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    assert roots.root_of("svc/main.go", GO) == ""
    time.sleep(0.01)  # a new directory mtime, whatever the file system's granularity
    touch(tmp_path, "svc/go.mod")
    assert roots.root_of("svc/main.go", GO) == "svc"
    reused = roots.stats["dirs_reused"]
    assert roots.root_of("svc/main.go", GO) == "svc" and roots.stats["dirs_reused"] > reused  # memo
    time.sleep(0.01)
    (tmp_path / "svc" / "go.mod").unlink()
    assert roots.root_of("svc/main.go", GO) == ""


def test_glob_markers_and_one_look_per_directory(tmp_path: Path) -> None:
    touch(tmp_path, "app/App.csproj", "app/a.cs", "app/b.cs", "app/sub/c.cs")
    roots = ProjectRoots(tmp_path, racy_seconds=0)
    markers = RootMarkers(("*.csproj",))
    found = roots.assign([(p, markers) for p in ("app/a.cs", "app/b.cs", "app/sub/c.cs")])
    assert set(found.values()) == {"app"}
    assert roots.stats["dirs_checked"] == 3  # app/sub, app, the root: each once


def test_marker_names_must_be_file_names(tmp_path: Path) -> None:
    assert marker_problem("go.mod") == "" and marker_problem("*.sln") == ""
    for bad in ("../go.mod", "a/go.mod", "/etc/passwd", "..", "", "x\0y"):
        assert marker_problem(bad), bad
    source = tmp_path / "x.toml"
    raw = {"language": {"roots": ["pyproject.toml"], "workspace-roots": ["go.work"]}}
    assert root_markers(raw, source) == RootMarkers(("pyproject.toml",), ("go.work",))
    with pytest.raises(ConfigError):
        root_markers({"language": {"roots": ["../up/go.mod"]}}, source)
    with pytest.raises(ConfigError):
        root_markers({"language": {"workspace-roots": "go.work"}}, source)
    lines = {"language": {"workspace-roots": ["go.work", {"file": "Cargo.toml", "line": "^\\[workspace"}]}}
    assert root_markers(lines, source) == RootMarkers((), ("go.work",), (LineMarker("Cargo.toml", "^\\[workspace"),))
    for bad in ({"file": "../Cargo.toml", "line": "x"}, {"file": "Cargo.toml"}, {"file": "C", "line": "["}):
        with pytest.raises(ConfigError):
            root_markers({"language": {"workspace-roots": [bad]}}, source)


def test_builtin_markers_of_languages_that_share_a_server_agree() -> None:
    """ts/tsx/js share one tsserver, c/cpp one clangd, per root: their roots must be the same."""
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR])

    def markers(name: str) -> RootMarkers:
        lang = registry.get(name)
        return root_markers(lang.raw, lang.config_path)

    assert markers("typescript") == markers("tsx") == markers("javascript")
    assert "package.json" in markers("typescript").project
    assert markers("c") == markers("cpp")
    assert markers("go") == RootMarkers(("go.mod",), ("go.work",))
    assert "pyproject.toml" in markers("python").project
    for name in registry.names:  # every built-in config parses
        markers(name)


# --- the pool: which roots get a server, within the bound (pure: nothing is started) -------


def test_select_keeps_the_focus_roots_within_the_bound(tmp_path: Path) -> None:
    root = monorepo(tmp_path)
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR], [BUILTIN_QUERY_DIR])
    pool = ServerPool(registry, root, Settings(lsp_max_servers=2))
    languages = {p: registry.language_for(p) for p in git(root, "ls-files").split()}
    found = pool.assign({p: lang for p, lang in languages.items() if lang})
    assert ("go", "services/a") in found and ("go", "services/b") in found
    assert ("typescript", "packages/web") in found and ("javascript", "packages/web") in found
    assert ("python", "py/two") in found and pool.root_of("py/two/src/two_pkg/store.py") == "py/two"
    selected = pool.select(found, focus=("services/b/main.go", "packages/web/src/legacy.js"))
    # The focus first; javascript in packages/web rides on typescript's server there (one process).
    assert selected[:2] == [("go", "services/b"), ("javascript", "packages/web")]
    assert ("typescript", "packages/web") in selected and ("go", "services/a") not in selected
    waiting = pool.reports.root_reports("go")["services/a"]
    assert waiting.state is ServerState.DISABLED and "lsp_max_servers = 2" in waiting.detail


def test_a_missing_server_takes_no_place_within_the_bound(tmp_path: Path) -> None:
    """lsp_max_servers = 1, Python (the larger language) with only a server that is not
    installed, Go with one that is: Go's server is selected. On 48637be the missing one took the
    only place before any start, and Go's installed server waited ("lsp_max_servers = 1")."""
    root = tmp_path / "repo"
    write_files(root, {f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(3)})
    write_files(root, {"main.go": "package main\n", "go.mod": "module x\n\ngo 1.22\n"})
    user = tmp_path / "user"
    user.mkdir()
    for language, server, command in (
        ("python", "absent", "no-such-language-server"),
        ("go", "present", sys.executable),
    ):
        text = (BUILTIN_CONFIG_DIR / f"{language}.toml").read_text()
        text = re.sub(r"language-servers = \[[^\]]*\]", f'language-servers = ["{server}"]', text)
        (user / f"{language}.toml").write_text(text + f'\n[language-server.{server}]\ncommand = "{command}"\n')
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    pool = ServerPool(registry, root, Settings(lsp_max_servers=1))
    paths = ["pkg/m0.py", "pkg/m1.py", "pkg/m2.py", "main.go"]
    found = pool.assign({p: lang for p in paths if (lang := registry.language_for(p))})
    assert len(found[("python", "")]) == 3 and len(found[("go", "")]) == 1
    assert ("go", "") in pool.select(found)
    assert "lsp_max_servers" not in pool.reports.root_reports("go")[""].detail


def test_a_missing_server_leaves_the_only_place_to_an_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same through a map with real processes: the user's Python config names a server that
    is not installed, rust-analyzer is, and lsp_max_servers is 1. Python has more files, yet Rust's
    server starts and resolves (on e3cb94e Rust stayed disabled, "lsp_max_servers = 1")."""
    require("rust-analyzer")
    root = tmp_path / "repo"
    shutil.copytree(TESTS / "fixtures" / "lsp" / "rust", root)
    write_files(root, {f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(8)})
    configs = tmp_path / "xdg" / "hybridmap" / "lsp_configs"
    configs.mkdir(parents=True)
    text = (BUILTIN_CONFIG_DIR / "python.toml").read_text()
    text = re.sub(r"language-servers = \[[^\]]*\]", 'language-servers = ["absent"]', text)
    (configs / "python.toml").write_text(text + '\n[language-server.absent]\ncommand = "no-such-language-server"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    overrides = {"cache_dir": str(tmp_path / "cache"), "lsp_max_servers": 1}
    with RepoMap(root, overrides=overrides) as repo:
        result = repo.map(mode="hybrid", server_wait=90, tokens=1000)
    assert result.servers["python"].state is ServerState.MISSING, result.servers["python"]
    assert result.servers["rust"].state is ServerState.READY, result.servers["rust"]


def test_a_language_report_summarises_its_roots() -> None:
    report = summarise(
        {
            "services/a": ServerReport(ServerState.READY, "gopls", 1.5, "gopls v0.23.0"),
            "services/b": ServerReport(ServerState.FAILED, "gopls", None, "gopls: exited with code 2"),
            "": ServerReport(ServerState.MISSING, None, None, "gopls: none of ['go.mod'] in root"),
        }
    )
    assert report.state is ServerState.READY and report.server == "gopls" and report.seconds_to_ready == 1.5
    assert report.detail.startswith("3 project roots (1 ready, 1 failed, 1 missing): ")
    assert "services/b: failed (gopls: exited with code 2)" in report.detail and ".: missing" in report.detail


# --- real servers on the monorepo ----------------------------------------------------------


def registry_without_roots(tmp_path: Path) -> LanguageRegistry:
    """The registry before project roots: no markers, so every file's root is the repository's."""
    user = tmp_path / "no_roots"
    user.mkdir()
    for language in ("go", "python", "typescript", "tsx", "javascript"):
        text = (BUILTIN_CONFIG_DIR / f"{language}.toml").read_text()
        # Set empty, not deleted: a user config is merged over the built-in one.
        text = re.sub(r"^(workspace-)?roots = .*$", r"\1roots = []", text, flags=re.M)
        (user / f"{language}.toml").write_text(text)
    return LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])


#: Edges only a server in the right project root gets (Go modules, a Python src layout).
PER_ROOT_ONLY = [
    ("services/a/main.go", "services/a/store/store.go", "Load"),
    ("services/b/main.go", "services/b/store/store.go", "Runner"),
    ("py/two/scripts/report.py", "py/two/src/two_pkg/store.py", "load"),
    ("py/two/scripts/report.py", "py/two/src/two_pkg/store.py", "Runner"),
]
#: Edges a server gets from either root: ty finds py/one's package from its importer; tsgo
#: finds each file's nearest tsconfig.json itself.
EITHER_ROOT = [
    ("py/one/app.py", "py/one/one_pkg/store.py", "load"),
    ("py/one/one_pkg/cli.py", "py/one/one_pkg/store.py", "Runner"),
    ("packages/web/src/index.ts", "packages/web/src/util.ts", "format"),
    ("packages/api/src/index.ts", "packages/api/src/util.ts", "Store"),
]
#: Name-matched guesses across projects that per-root answers remove.
WRONG = [
    ("services/a/main.go", "services/b/store/store.go", "Load"),
    ("services/b/main.go", "services/a/store/store.go", "Runner"),
    ("py/one/app.py", "py/two/src/two_pkg/store.py", "load"),
    ("py/two/scripts/report.py", "py/one/one_pkg/store.py", "load"),
    ("packages/web/src/index.ts", "packages/api/src/util.ts", "format"),
]


def test_one_server_at_the_repository_root_misses_the_projects(tmp_path: Path) -> None:
    """The old behaviour: gopls is not started (no go.mod at the root), so Go keeps its wrong
    guesses; ty at the root does not know py/two's src layout, so the script's imports lead
    nowhere (its edges to its own package are lost)."""
    for command in ("gopls", "ty", "tsgo"):
        require(command)
    root = monorepo(tmp_path)
    overrides = {"cache_dir": str(tmp_path / "cache")}
    with RepoMap(root, registry=registry_without_roots(tmp_path), overrides=overrides) as repo:
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        found = edges(repo)
        running = repo.running_servers()
    assert result.servers["go"].state is ServerState.MISSING, result.servers["go"]
    assert "none of ['go.mod', 'go.work'] in root" in result.servers["go"].detail
    assert {s.root for s in running} == {"."}
    for edge in PER_ROOT_ONLY:
        assert found.get(edge) != "lsp", edge
    assert found.get(WRONG[0]) == found.get(WRONG[1]) == "name-match"  # Go: the guesses stay
    for edge in EITHER_ROOT:
        assert found.get(edge) == "lsp", (edge, found.get(edge))


def test_one_server_per_project_root_resolves_each_project(tmp_path: Path) -> None:
    for command in ("gopls", "ty", "tsgo"):
        require(command)
    root = monorepo(tmp_path)
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        started = time.monotonic()
        result = repo.map(mode="hybrid", server_wait=60, tokens=512)
        seconds = time.monotonic() - started
        found = edges(repo)
        running = repo.running_servers()
        graph = repo.graph()
    assert graph is not None
    where = sorted((s.server, s.root) for s in running)
    assert where == [
        ("gopls", "services/a"),
        ("gopls", "services/b"),
        ("tsgo", "packages/api"),
        ("tsgo", "packages/web"),  # typescript and javascript share it
        ("ty", "py/one"),
        ("ty", "py/two"),
    ], where
    for language in ("go", "python", "typescript", "javascript"):
        report = result.servers[language]
        assert report.state is ServerState.READY, (language, report)
    assert result.servers["go"].detail.startswith("2 project roots (2 ready): services/a: ready"), result.servers
    for edge in PER_ROOT_ONLY + EITHER_ROOT:
        assert found.get(edge) == "lsp", (edge, found.get(edge))
    for edge in WRONG:
        assert edge not in found, edge
    assert not [d for d in result.diagnostics if d.kind.startswith("server_")], result.diagnostics
    assert seconds < 60, seconds


def test_lsp_max_servers_shuts_down_the_least_recently_used(tmp_path: Path) -> None:
    require("gopls")
    root = monorepo(tmp_path)
    overrides = {"cache_dir": str(tmp_path / "cache"), "lsp_max_servers": 1}
    with RepoMap(root, overrides=overrides) as repo:
        first = repo.map(mode="hybrid", server_wait=60, tokens=512, chat_files=["services/a/main.go"])
        (gopls_a,) = repo.running_servers()
        assert (gopls_a.server, gopls_a.root) == ("gopls", "services/a")
        pid = gopls_a.pid
        second = repo.map(mode="hybrid", server_wait=60, tokens=512, chat_files=["services/b/main.go"])
        found = edges(repo)
        assert [(s.server, s.root) for s in repo.running_servers()] == [("gopls", "services/b")]
    assert first.text and second.text  # maps still come back
    held = [d for d in first.diagnostics if d.kind == "server_limit"]
    assert {d.path for d in held} >= {"go", "python", "typescript"}, first.diagnostics
    assert any("gopls for project root services/b: waiting: lsp_max_servers = 1" in d.message for d in held)
    stopped = [d for d in second.diagnostics if d.kind == "server_limit" and "services/a" in d.message]
    assert stopped and "stopped: lsp_max_servers = 1" in stopped[0].message, second.diagnostics
    assert second.servers["go"].state is ServerState.READY
    assert "services/a: disabled (stopped" in second.servers["go"].detail, second.servers["go"]
    # Both modules' answers are in the map: a's from the first map, b's from the second.
    assert found.get(PER_ROOT_ONLY[0]) == found.get(PER_ROOT_ONLY[1]) == "lsp", found
    assert pid is not None and not _alive(pid)  # its process tree went with it


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:  # a zombie is gone but for its exit status
            return fh.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def test_markers_in_test_data_or_vendored_code_make_no_root(tmp_path: Path) -> None:
    from hybridmap.sources.lsp.roots import ProjectRoots, RootMarkers

    root = tmp_path / "repo"
    for rel in ("go.mod", "tests/fixtures/sample/go.mod", "vendor/lib/go.mod", "services/a/go.mod"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("module x\n")
    markers = RootMarkers(("go.mod",), ())
    roots = ProjectRoots(root, racy_seconds=0.0)
    assert roots.root_of("tests/fixtures/sample/main.go", markers) == ""
    assert roots.root_of("vendor/lib/lib.go", markers) == ""
    assert roots.root_of("services/a/main.go", markers) == "services/a"
