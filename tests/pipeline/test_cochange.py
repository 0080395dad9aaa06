"""Git co-change on a repository with a scripted history: counts, incremental updates, ranking."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hybridmap import RepoMap
from hybridmap.infra import git as git_module
from hybridmap.pipeline.inputs.cochange import CoChangeIndex
from hybridmap.settings import Settings

from ..conftest import git, write_files

BASE = {
    "core.py": "def core_entry():\n    pass\n",
    "partner.py": "def partner_entry():\n    pass\n",
    "loner.py": "def loner_entry():\n    pass\n",
    "other.py": "def other_entry():\n    pass\n",
}


def _commit(root: Path, files: dict[str, str], message: str) -> None:
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def _history(git_repo) -> Path:
    """After the initial commit of the four files (which counts once for every pair): core.py and
    partner.py changed together 3 times, core.py and loner.py once, and one sweeping commit over
    25 files (more than co_change_max_files) that must not count."""
    root = git_repo(BASE)
    for i in range(3):
        _commit(root, {"core.py": BASE["core.py"] + f"# {i}\n", "partner.py": BASE["partner.py"] + f"# {i}\n"}, "pair")
    _commit(root, {"core.py": BASE["core.py"] + "# loner\n", "loner.py": BASE["loner.py"] + "# 1\n"}, "once")
    _commit(
        root, {f"bulk/f{i}.py": f"X{i} = 1\n" for i in range(24)} | {"core.py": "# sweep\n" + BASE["core.py"]}, "sweep"
    )
    return root


def test_pair_counts_and_the_commit_size_window(git_repo) -> None:
    root = _history(git_repo)
    index = CoChangeIndex(root, Settings())
    history = index.refresh()
    assert history.problem == "" and history.head is not None
    assert dict(history.of("core.py")) == {"partner.py": 4, "loner.py": 2, "other.py": 1}
    assert history.of("partner.py") == {"core.py": 4, "loner.py": 1, "other.py": 1}
    assert history.of("bulk/f0.py") == {}  # the sweeping commit counted for nothing
    narrow = CoChangeIndex(root, Settings().replace(co_change_max_commits=2)).refresh()
    assert dict(narrow.of("core.py")) == {"loner.py": 1}  # only the two newest commits read


def test_incremental_when_head_moves_forward_and_full_when_it_moves_elsewhere(git_repo) -> None:
    root = _history(git_repo)
    index = CoChangeIndex(root, Settings())
    first = index.refresh()
    assert index.refresh() is first  # same HEAD: nothing read
    _commit(root, {"core.py": "# more\n" + BASE["core.py"], "other.py": BASE["other.py"] + "# 1\n"}, "forward")
    moved = index.refresh()
    assert moved.head != first.head
    assert moved.of("core.py")["other.py"] == 2 and moved.of("core.py")["partner.py"] == 4
    assert moved.commits == first.commits + 1
    git(root, "checkout", "-q", "HEAD~6")  # back to the initial commit: history rewound
    back = index.refresh()
    assert back.of("core.py") == {"partner.py": 1, "loner.py": 1, "other.py": 1}


#: Longer than ``stat_racy_seconds``: HEAD's files are then old enough for their stamp to count.
SETTLE = 0.2


def _head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def _asked_without_git(index: CoChangeIndex, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The index's HEAD with no git to start (none on PATH)."""
    with monkeypatch.context() as patched:
        patched.setenv("PATH", "")
        return index.refresh().head


def test_head_is_read_from_its_files_while_they_stand_and_each_move_is_seen(git_repo, monkeypatch) -> None:
    """While the files git keeps HEAD in stand as they were when git last answered, a refresh
    starts no git; every way git moves HEAD changes them, and the next refresh has the new HEAD."""
    root = _history(git_repo)
    main = git(root, "branch", "--show-current").strip()
    moves: list[tuple[str, Callable[[], object]]] = [
        ("a commit on the branch", lambda: _commit(root, {"core.py": "# a\n"}, "a")),
        ("the refs packed (the loose ref goes)", lambda: git(root, "pack-refs", "--all", "--prune")),
        ("a commit on a packed branch", lambda: _commit(root, {"core.py": "# b\n"}, "b")),
        ("a checkout of a new branch", lambda: git(root, "checkout", "-q", "-b", "side", "HEAD~2")),
        ("a detached HEAD", lambda: git(root, "checkout", "-q", "--detach", "HEAD~1")),
        ("a commit on a detached HEAD", lambda: _commit(root, {"other.py": "# c\n"}, "c")),
        (
            "back to the branch, then reset",
            lambda: (git(root, "checkout", "-q", main), git(root, "reset", "-q", "--hard", "HEAD~1")),
        ),
    ]
    index = CoChangeIndex(root, Settings())
    time.sleep(SETTLE)
    index.refresh()
    assert CoChangeIndex(root, Settings()).refresh().head is not None
    assert _asked_without_git(CoChangeIndex(root, Settings()), monkeypatch) is None  # this can fail
    for what, move in moves:
        move()
        time.sleep(SETTLE)
        assert index.refresh().head == _head(root), what  # the files moved: git asked
        assert index.refresh().head == _head(root), what  # stamped before git answered
        assert _asked_without_git(index, monkeypatch) == _head(root), what


def test_a_move_within_the_racy_window_is_asked_of_git(git_repo, monkeypatch) -> None:
    """HEAD's files changed moments ago (a timestamp is coarser than two quick updates): no stamp
    counts, git is asked, and a commit right after a refresh is seen."""
    root = _history(git_repo)
    index = CoChangeIndex(root, Settings().replace(stat_racy_seconds=60.0))
    for n in range(3):
        index.refresh()
        assert _asked_without_git(index, monkeypatch) is None  # asked git: there is none
        _commit(root, {"core.py": f"# quick {n}\n"}, "quick")
        assert index.refresh().head == _head(root)


def test_a_linked_work_tree_reads_its_own_head(git_repo, tmp_path: Path, monkeypatch) -> None:
    """A linked work tree's HEAD is in its own git directory and its branch in the main one's: a
    commit in the main work tree does not move it, one in it does."""
    root = _history(git_repo)
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", "-b", "linked", str(linked))
    index = CoChangeIndex(linked, Settings())
    time.sleep(SETTLE)
    index.refresh()
    index.refresh()
    _commit(root, {"core.py": "# main moves\n"}, "main")
    time.sleep(SETTLE)
    assert _asked_without_git(index, monkeypatch) == _head(linked) != _head(root)
    _commit(linked, {"core.py": "# linked moves\n"}, "linked")
    time.sleep(SETTLE)
    assert index.refresh().head == _head(linked)
    index.refresh()
    assert _asked_without_git(index, monkeypatch) == _head(linked)


def test_no_git_means_off_quietly_and_a_failing_git_is_said(tmp_path: Path, git_repo) -> None:
    plain = tmp_path / "plain"
    write_files(plain, BASE)
    history = CoChangeIndex(plain, Settings()).refresh()
    assert history.partners == {} and history.problem == "" and history.head is None
    with RepoMap(plain, overrides={"cache_dir": str(tmp_path / "c")}) as repo:
        result = repo.map(mode="static", chat_files=["core.py"], tokens=1000)
    assert not any(d.kind == "co_change_off" for d in result.diagnostics)
    # A history git cannot read (its trees and blobs gone, the commits still there) is said.
    root = _history(git_repo)
    listing = git(root, "cat-file", "--batch-check", "--batch-all-objects")
    for line in listing.splitlines():
        sha, kind, _ = line.split()
        if kind != "commit":
            (root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    broken = CoChangeIndex(root, Settings()).refresh()
    assert broken.partners == {} and "co-change is off" in broken.problem
    with RepoMap(root, overrides={"cache_dir": str(tmp_path / "c2")}) as repo:
        said = repo.map(mode="static", chat_files=["core.py"], tokens=1000)
    assert any(d.kind == "co_change_off" for d in said.diagnostics)


def test_partners_of_the_chat_file_rank_higher(git_repo, tmp_path: Path) -> None:
    root = _history(git_repo)
    cache = str(tmp_path / "cache")
    with RepoMap(root, overrides={"cache_dir": cache, "co_change_boost": 0.0}) as repo:
        plain = repo.map(mode="static", chat_files=["core.py"], tokens=1000)
    with RepoMap(root, overrides={"cache_dir": cache, "co_change_boost": 1.0}) as repo:
        boosted = repo.map(mode="static", chat_files=["core.py"], tokens=1000)
    order = [f.path for f in boosted.files]
    assert order[0] == "partner.py", order
    partner = boosted.files[0]
    assert "committed with a chat file in 4 commits" in partner.why
    assert partner.file_rank > next(f for f in plain.files if f.path == "partner.py").file_rank
    assert not any(d.kind == "co_change_off" for d in boosted.diagnostics)


def test_a_partner_the_graph_does_not_reach_is_lifted_by_its_history(git_repo, tmp_path: Path) -> None:
    """A history partner that shares no name with the chat file has almost no PageRank, so a
    multiplier of it (``co_change_boost``) leaves it below the graph's favourite; the lift of
    its best definition (``co_change_definition_boost``) does not depend on its rank."""
    files = {
        "billing.py": "from util import fmt\n\ndef bill(x):\n    return fmt(x)\n",
        "util.py": "def fmt(x):\n    return str(x)\n",
        "ledger.py": "def post_entry(book):\n    return book\n",
    }
    files |= {f"view{i}.py": f"from util import fmt\n\ndef show_{i}(x):\n    return fmt(x)\n" for i in range(8)}
    root = git_repo(files)
    for i in range(4):
        edits = {path: files[path] + f"# {i}\n" for path in ("billing.py", "ledger.py")}
        _commit(root, edits, "billing and ledger")
    order = {}
    for lift in (0.0, 2.0):
        overrides = {
            "cache_dir": str(tmp_path / "c"),
            "co_change_definition_boost": lift,
            "text_similarity_boost": 0.0,  # the history alone
        }
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", chat_files=["billing.py"], tokens=1000)
        order[lift] = [f.path for f in result.files]
        if lift:
            assert "committed with a chat file in 5 commits" in result.files[0].why
    assert order[0.0][0] == "util.py", order[0.0]  # the control: the graph's favourite first
    assert order[2.0][0] == "ledger.py", order[2.0]


def test_a_partner_without_definitions_is_lifted_by_name(git_repo, tmp_path: Path) -> None:
    """A lifted file with no definition to lift (a message catalog: one call, nothing defined) is
    shown by name: the lift goes to that score instead (it did nothing before)."""
    catalog = 'Documentation.addTranslations({"locale": "nb", "messages": {"Search": "Søk"}});\n'
    files = {
        "app.py": "from util import fmt\n\ndef run(x):\n    return fmt(x)\n",
        "util.py": "def fmt(x):\n    return str(x)\n",
        "locale/nb/catalog.js": catalog,
    }
    files |= {f"view{i}.py": f"from util import fmt\n\ndef show_{i}(x):\n    return fmt(x)\n" for i in range(8)}
    root = git_repo(files)
    for i in range(4):
        _commit(root, {"app.py": files["app.py"] + f"# {i}\n", "locale/nb/catalog.js": f"// {i}\n" + catalog}, "both")
    order = {}
    for lift in (0.0, 2.0):
        overrides = {"cache_dir": str(tmp_path / "c"), "co_change_definition_boost": lift, "text_similarity_boost": 0.0}
        with RepoMap(root, overrides=overrides) as repo:
            result = repo.map(mode="static", chat_files=["app.py"], tokens=1000)
        order[lift] = [f.path for f in result.files]
        assert not any(f.symbols for f in result.files if f.path == "locale/nb/catalog.js")
    assert order[0.0][0] != "locale/nb/catalog.js", order[0.0]  # the control
    assert order[2.0][0] == "locale/nb/catalog.js", order[2.0]


def _shallow_clone(root: Path, depth: int) -> Path:
    clone = root.parent / f"{root.name}-depth{depth}"
    git(root.parent, "clone", "-q", "--no-local", "--depth", str(depth), f"file://{root}", str(clone))
    return clone


def test_a_shallow_clone_leaves_its_edge_out_and_continues_with_an_imported_history(git_repo) -> None:
    """A shallow clone's oldest commit lists its whole tree as if added at once: not a co-change.
    The history an index artifact brought for the root continues the clone's own commits, so the
    counts are the complete clone's; a complete clone never reads it."""
    root = _history(git_repo)
    full = CoChangeIndex(root, Settings()).refresh()
    clone = _shallow_clone(root, 2)  # the sweep, and "once" as the edge (its parent cut)
    alone = CoChangeIndex(clone, Settings()).refresh()
    assert alone.problem == "" and alone.commits == 1 and alone.imported == 0
    assert alone.of("core.py") == {} and alone.of("loner.py") == {}  # the edge's four files are no pairs

    log = git_module.CommitLog(full.head or "", git_module.log_name_only(root, 300).commits)
    asked: list[int] = []

    def imported() -> git_module.CommitLog:
        asked.append(1)
        return log

    continued = CoChangeIndex(clone, Settings(), imported).refresh()
    assert continued.partners == full.partners  # the edge's own changes from the imported log
    assert continued.commits == full.commits and continued.imported == full.commits - 1
    capped = CoChangeIndex(clone, Settings().replace(co_change_max_commits=3), imported).refresh()
    assert capped.commits == 3 and dict(capped.of("core.py")) == {"loner.py": 1, "partner.py": 1}  # newest first

    asked.clear()
    complete = CoChangeIndex(root, Settings(), imported).refresh()
    assert complete.partners == full.partners and complete.imported == 0 and asked == []
