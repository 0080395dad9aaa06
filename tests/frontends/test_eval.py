"""hybridmap eval on real git repositories built here: selection, tasks, metrics, errors, cleanup."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from hybridmap.errors import RequestError, RootError
from hybridmap.frontends.evaluate.aider_runner import message_mentions as aider_message_mentions
from hybridmap.frontends.evaluate.definitions import changed_definitions
from hybridmap.frontends.evaluate.diffs import file_diff, parse_hunks
from hybridmap.frontends.evaluate.git import open_repository
from hybridmap.frontends.evaluate.history import select_commits
from hybridmap.frontends.evaluate.mentions import message_mentions
from hybridmap.frontends.evaluate.metrics import MapOutcome, ShownFile, percentile, score
from hybridmap.frontends.evaluate.peer import DEFAULT_PYTHON, find_aider_python
from hybridmap.frontends.evaluate.tasks import build_tasks, message_text, with_typos
from hybridmap.frontends.evaluate.worktree import ScratchWorktree
from hybridmap.languages.registry import LanguageRegistry
from hybridmap.model import FileTags
from hybridmap.pipeline.inputs.conversation import MessageIndex
from hybridmap.settings import Settings
from hybridmap.sources.treesitter import extract_tags

from ..conftest import git, run_on_pty, write_files
from ..helpers import run_cli

STORE = """\
class Store:
    def __init__(self):
        self.items = {}

    def save(self, key, value):
        self.items[key] = value

    def load(self, key):
        return self.items.get(key)
"""
MODELS = """\
from app.store import Store


class Model:
    def __init__(self, store: Store):
        self.store = store

    def persist(self, name):
        self.store.save(name, self)
"""
VIEWS = """\
from app.models import Model
from app.util import format_name


def render_view(model: Model):
    return format_name(model.store.load("name"))
"""
UTIL = """\
def format_name(name):
    return str(name)


def slugify(text):
    return text.lower().replace(" ", "-")
"""


def _commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


def make_history(root: Path) -> dict[str, str]:
    """A small Python project whose history holds every case the selection must tell apart."""
    root.mkdir()
    files = {
        "README.md": "# app\n",
        "app/__init__.py": "",
        "app/store.py": STORE,
        "app/models.py": MODELS,
        "app/views.py": VIEWS,
        "app/util.py": UTIL,
        # A second 'load': the name alone cannot tell which one views.py calls; a server can.
        "app/disk.py": "def load(path):\n    return open(path).read()\n",
    }
    files.update({f"app/m{k}.py": f"def helper_{k}():\n    return {k}\n" for k in range(1, 9)})
    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    shas = {"c0": _commit(root, "initial")}
    # c1: co-edit of two files; models.py has more changed lines (the co-edit chat file).
    _edit(
        root,
        "app/store.py",
        "        self.items[key] = value\n",
        "        self.items[key] = value\n        return key\n",
    )
    _edit(
        root,
        "app/models.py",
        "        self.store.save(name, self)\n",
        "        key = self.store.save(name, self)\n        return key\n",
    )
    shas["c1"] = _commit(root, "Add `Store.save` return value used by Model.persist")
    # c2: one file only.
    _edit(root, "app/util.py", "return str(name)", "return str(name).strip()")
    shas["c2"] = _commit(root, "strip names")
    # c3: eight files.
    for k in range(1, 9):
        _edit(root, f"app/m{k}.py", f"return {k}", f"return {k} * 2")
    shas["c3"] = _commit(root, "double every helper")
    # c4: a side branch co-editing two files, merged with a merge commit.
    git(root, "checkout", "-q", "-b", "feature")
    _edit(root, "app/views.py", 'load("name")', 'load("title")')
    _edit(root, "app/util.py", "def slugify(text):\n", "def slugify(text):\n    text = text.strip()\n")
    shas["side"] = _commit(root, "feature work on render_view and slugify")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "feature", "-m", "Merge feature")
    shas["merge"] = git(root, "rev-parse", "HEAD").strip()
    # c5: three files.
    _edit(
        root,
        "app/views.py",
        '    return format_name(model.store.load("title"))',
        '    name = model.store.load("title")\n    return format_name(name)',
    )
    _edit(root, "app/util.py", "return str(name).strip()", "return str(name).strip().title()")
    _edit(root, "app/store.py", "return self.items.get(key)", "return self.items.get(key, None)")
    shas["c5"] = _commit(root, "render_view shows the formatted name from util.py")
    # c6: a new file and one modified file: one target only.
    write_files(root, {"app/extra.py": "def extra():\n    return 1\n"})
    _edit(root, "app/util.py", "def slugify(text):\n", "def slugify(text: str):\n")
    shas["c6"] = _commit(root, "add extra")
    # c7: a pure rename plus one modified file: one target only.
    git(root, "mv", "app/m1.py", "app/m1_renamed.py")
    _edit(root, "app/m2.py", "* 2", "* 3")
    shas["c7"] = _commit(root, "rename m1")
    # c8: a method inserted inside a class, a function appended to a file, and a non-source file.
    _edit(
        root,
        "app/store.py",
        "    def load(self, key):\n",
        "    def clear(self):\n        self.items.clear()\n\n    def load(self, key):\n",
    )
    (root / "app/models.py").write_text(
        (root / "app/models.py").read_text() + "\n\ndef make_model():\n    return Model(Store())\n"
    )
    (root / "README.md").write_text("# app\n\nNow with clear().\n")
    shas["c8"] = _commit(root, "Model keeps a default store\n\nSigned-off-by: Someone <someone@example.invalid>\n")
    return shas


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "project"
    return root, make_history(root)


@pytest.fixture(scope="module")
def registry_module() -> LanguageRegistry:
    return LanguageRegistry.load()


def worktrees(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


# --- selection -------------------------------------------------------------------------------


def test_selection_keeps_first_parent_non_merge_commits_that_modify_two_to_six_source_files(
    history: tuple[Path, dict[str, str]], registry_module: LanguageRegistry
) -> None:
    root, shas = history
    repo = open_repository(root)
    is_source = lambda path: registry_module.language_for(path) is not None  # noqa: E731
    selection = select_commits(repo, "HEAD", 10, is_source, scan_limit=100)
    assert [c.sha for c in selection.commits] == [shas["c8"], shas["c5"], shas["c1"]]
    c8, c5, c1 = selection.commits
    assert [ch.old_path for ch in c8.changes] == ["app/models.py", "app/store.py"]  # README is not source
    assert [ch.old_path for ch in c5.changes] == ["app/store.py", "app/util.py", "app/views.py"]
    assert c1.parent == shas["c0"] and c1.subject.startswith("Add `Store.save`")
    assert c8.message.startswith("Model keeps a default store")
    # 10 asked, 3 qualify: not an error, but said.
    assert selection.scanned == 9 and "only 3 of the 10" in selection.shortfall
    assert select_commits(repo, "HEAD", 2, is_source, scan_limit=100).shortfall == ""
    # --rev starts elsewhere: the side branch's own commit qualifies there.
    side = select_commits(repo, "feature", 5, is_source, scan_limit=100)
    assert [c.sha for c in side.commits] == [shas["side"], shas["c1"]]


def test_selection_errors(tmp_path: Path, git_repo, registry_module: LanguageRegistry) -> None:
    is_source = lambda path: registry_module.language_for(path) is not None  # noqa: E731
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(RootError, match="not a git repository"):
        open_repository(plain)
    single = git_repo({"a.py": "def a():\n    pass\n"})
    with pytest.raises(RequestError, match=r"history too short: HEAD has 1 commit"):
        select_commits(open_repository(single), "HEAD", 3, is_source, scan_limit=100)
    with pytest.raises(RequestError, match="'nope' does not name a commit"):
        select_commits(open_repository(single), "nope", 3, is_source, scan_limit=100)
    empty = git_repo({}, commit=False)
    with pytest.raises(RequestError, match="does not name a commit"):
        select_commits(open_repository(empty), "HEAD", 3, is_source, scan_limit=100)
    (single / "a.py").write_text("def a():\n    return 1\n")
    git(single, "commit", "-qam", "one file")
    with pytest.raises(RequestError, match="no qualifying commit in the last 2 first-parent commits"):
        select_commits(open_repository(single), "HEAD", 3, is_source, scan_limit=100)


# --- what a commit changed -------------------------------------------------------------------


def test_hunks_parse_old_side_lines_and_insertions() -> None:
    hunks = parse_hunks("@@ -3 +3 @@\n-a\n+b\n@@ -10,0 +11,2 @@\n+x\n+y\n@@ -20,4 +22,0 @@\n")
    assert [(h.old_start, h.old_count, h.new_start, h.new_count) for h in hunks] == [
        (3, 1, 3, 1),
        (10, 0, 11, 2),
        (20, 4, 22, 0),
    ]
    assert list(hunks[0].old_lines) == [3] and list(hunks[0].new_lines) == [3]
    assert list(hunks[1].old_lines) == [] and list(hunks[1].new_lines) == [11, 12]
    assert list(hunks[2].old_lines) == [20, 21, 22, 23] and list(hunks[2].new_lines) == []


def test_changed_definitions_are_the_innermost_definitions_the_diff_touches(
    history: tuple[Path, dict[str, str]], registry_module: LanguageRegistry
) -> None:
    root, shas = history
    repo = open_repository(root)
    compiled = registry_module.compiled("python")

    def changed(parent: str, sha: str, path: str, both_sides: bool = True) -> list[tuple[str, str]]:
        old = extract_tags(compiled, git(root, "show", f"{parent}:{path}").encode())
        diff = file_diff(repo, parent, sha, path, path)
        assert diff.new_source.decode() == git(root, "show", f"{sha}:{path}")
        new = extract_tags(compiled, diff.new_source) if both_sides else None
        return [(d.name, d.kind) for d in changed_definitions(path, old, new, diff.hunks)]

    # A line appended at the end of a method body: the method, not its class (only the
    # commit's side shows that the line lands inside the method).
    assert changed(shas["c0"], shas["c1"], "app/store.py") == [("save", "method")]
    assert changed(shas["c0"], shas["c1"], "app/store.py", both_sides=False) == []
    assert changed(shas["c0"], shas["c1"], "app/models.py") == [("persist", "method")]
    # A line inserted at the top of a function body.
    assert changed(shas["merge"], shas["c5"], "app/views.py") == [("render_view", "function")]
    # A method inserted between two methods changes the class body.
    assert changed(shas["c7"], shas["c8"], "app/store.py") == [("Store", "class")]
    # A function appended after the last definition changes none.
    assert changed(shas["c7"], shas["c8"], "app/models.py") == []
    # Line numbers are the parent's, 1-based.
    diff = file_diff(repo, shas["c0"], shas["c1"], "app/store.py", "app/store.py")
    found = changed_definitions(
        "app/store.py", extract_tags(compiled, STORE.encode()), extract_tags(compiled, diff.new_source), diff.hunks
    )
    assert [d.line for d in found] == [5]


def test_message_mentions() -> None:
    names = {"Store", "save", "Model", "persist", "render_view", "format_name", "load"}
    paths = ["app/store.py", "app/models.py", "app/util.py", "app/views.py"]
    message = (
        "Fix `Store.save` crash in models.py when render_view gets None; see https://example.invalid/x\n"
        "\nThe parseConfig helper and MAX_SIZE too (#123), thanks a@b.invalid\n"
        "Signed-off-by: Some One <some@example.invalid>\nCo-authored-by: Other <o@example.invalid>\n"
    )
    assert message_mentions(message, names, paths) == (
        "Store",
        "save",
        "models.py",
        "render_view",
        "parseConfig",
        "MAX_SIZE",
    )
    # Definition names and file stems count only when they exist; stopwords never.
    assert message_mentions("Model keeps a default store", names, paths) == ("Model", "store")
    assert message_mentions("Update the docs", names, paths) == ()
    assert message_mentions("Revert `b279713e` and 0123abc in `Store`", names, paths) == ("Store",)


def test_message_text_is_the_message_without_trailers() -> None:
    message = (
        "Fix `Store.save` when the key is None\n\nSee https://example.invalid/1 for why.\n"
        "Signed-off-by: Some One <some@example.invalid>\nCo-authored-by: Other <o@example.invalid>\n"
    )
    assert message_text(message) == "Fix `Store.save` when the key is None\n\nSee https://example.invalid/1 for why."


def test_message_typos_swap_two_letters_of_long_compound_identifiers() -> None:
    text = "Fix compute_total and ParseConfigFile in load(), not get_user; HTTPServerBase too"
    slipped = with_typos(text)
    assert slipped == with_typos(text)  # the same slips on every run
    before, after = text.split(), slipped.split()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert [a for a, _ in changed] == ["compute_total", "ParseConfigFile", "HTTPServerBase"]  # 8+ letters, compound
    for word, typo in changed:
        assert sorted(word) == sorted(typo) and sum(x != y for x, y in zip(word, typo, strict=True)) == 2


def test_aider_reads_a_message_as_its_coder_does() -> None:
    files = ["app/store.py", "app/models.py", "app/util.py", "lib/util.py", "app/views.py", "main.py"]
    fnames, idents = aider_message_mentions(
        "Fix `app/util.py`, store.py and views.py: render_view/Store() in models, the storage", files, ["app/views.py"]
    )
    # A path; a unique file name with a dot (util.py is not unique); a stem of 5+ characters
    # equal to a word of 5+ (models, and views: the chat file's name does not count as a name,
    # but the stem match looks at every file, as Aider's does). Every word is an identifier.
    assert fnames == {"app/util.py", "app/store.py", "app/models.py", "app/views.py"}
    assert aider_message_mentions("views.py", files, ["app/views.py"])[0] == {"app/views.py"}  # by its stem
    assert aider_message_mentions("vie.py x", ["a/vie.py"], ["a/vie.py"])[0] == set()
    assert {"Fix", "app", "util", "py", "render_view", "Store", "the", "storage"} <= idents
    assert aider_message_mentions("see main", files, [])[0] == set()  # "main" is under 5 characters


def test_tasks_of_a_commit(history: tuple[Path, dict[str, str]], registry_module: LanguageRegistry) -> None:
    root, _shas = history
    repo = open_repository(root)
    is_source = lambda path: registry_module.language_for(path) is not None  # noqa: E731
    c8, c5, c1 = select_commits(repo, "HEAD", 3, is_source, scan_limit=100).commits
    compiled = registry_module.compiled("python")

    def tags_at(sha: str) -> dict[str, FileTags]:
        paths = git(root, "ls-tree", "-r", "--name-only", sha).split()
        return {p: extract_tags(compiled, git(root, "show", f"{sha}:{p}").encode()) for p in paths if p.endswith(".py")}

    def tasks_for(commit, settings: Settings | None = None):  # type: ignore[no-untyped-def]
        tags = tags_at(commit.parent)
        diffs = tuple(file_diff(repo, commit.parent, commit.sha, c.old_path, c.new_path) for c in commit.changes)
        new = {d.old_path: extract_tags(compiled, d.new_source) for d in diffs}
        names = {s.name for t in tags.values() for s in t.symbols}
        return build_tasks(commit, diffs, tags, new, names, MessageIndex.from_tags(tags, settings or Settings()))

    co_edit, message, text = tasks_for(c1).tasks
    assert (co_edit.kind, co_edit.chat_files, co_edit.targets) == ("co-edit", ("app/models.py",), ("app/store.py",))
    assert [d.name for d in co_edit.definitions] == ["save"]
    assert (message.kind, message.chat_files) == ("message", ())
    assert message.targets == ("app/models.py", "app/store.py")
    assert message.mentions == ("Store", "save", "Model", "persist")
    assert [d.name for d in message.definitions] == ["persist", "save"]
    # The message as written, read by the product: `Store` is also the stem of app/store.py.
    assert (text.kind, text.chat_files, text.targets) == ("message-text", (), ("app/models.py", "app/store.py"))
    assert text.text == "Add `Store.save` return value used by Model.persist"
    assert (text.mentioned_files, text.mentions) == (("app/store.py",), ("Store", "save", "Model", "persist"))
    assert text.definitions == message.definitions
    five = tasks_for(c5)
    assert five.tasks[0].chat_files == ("app/views.py",)  # 3 changed lines; the others have 2 each
    assert five.tasks[0].targets == ("app/store.py", "app/util.py")
    assert five.tasks[1].mentions == ("util.py", "render_view")
    assert five.tasks[1].mentioned_files == ("app/util.py",)
    assert sorted(d.name for d in five.definitions) == ["format_name", "load", "render_view"]
    eight = tasks_for(c8)
    assert eight.tasks[1].mentions == ("Model", "store")  # the trailer is not read
    assert eight.tasks[2].text == "Model keeps a default store"
    # "store" names app/store.py by its stem; a word of one part finds a definition only as
    # spelled (not the class Store).
    assert (eight.tasks[2].mentioned_files, eight.tasks[2].mentions) == (("app/store.py",), ("Model",))
    # Against a repository that defines nothing, only the identifier-shaped word is left; without
    # unmatched words nothing is, and the task is asked all the same.
    only = build_tasks(c5, (), {}, {}, set(), MessageIndex((), (), Settings()), ("message-text",))
    assert [(t.kind, t.mentions, t.mentioned_files) for t in only.tasks] == [("message-text", ("render_view",), ())]
    none = MessageIndex((), (), Settings(message_unmatched_words=False))
    only = build_tasks(c5, (), {}, {}, set(), none, ("message-text",))
    assert [(t.kind, t.mentions, t.mentioned_files) for t in only.tasks] == [("message-text", (), ())]


def test_metrics_on_known_answers() -> None:
    from hybridmap.frontends.evaluate.definitions import ChangedDefinition
    from hybridmap.frontends.evaluate.tasks import Task

    task = Task(
        "co-edit",
        ("a.py",),
        (),
        (),
        ("b.py", "c.py", "d.py"),
        (
            ChangedDefinition("b.py", "f", "function", 1),
            ChangedDefinition("c.py", "g", "function", 3),
            ChangedDefinition("d.py", "h", "function", 5),
            ChangedDefinition("b.py", "k", "class", 9),
        ),
    )
    outcome = MapOutcome(
        (
            ShownFile("x.py", ("f", "g")),
            ShownFile("y.py", ()),
            ShownFile("c.py", ("g",)),
            ShownFile("b.py", ("other",)),
        ),
        100,
        0.01,
    )
    result = score(task, outcome)
    assert result.file_recall == pytest.approx(2 / 3)
    assert result.reciprocal_rank == pytest.approx(1 / 3)  # c.py is third
    assert (result.definitions_hit, result.definitions_total) == (1, 4)  # g in c.py; f is shown in x.py only
    assert result.definition_recall == pytest.approx(0.25)
    empty = score(task, MapOutcome((), 0, 0.0))
    assert (empty.file_recall, empty.reciprocal_rank, empty.definition_recall) == (0.0, 0.0, 0.0)
    no_defs = Task("message", (), ("w",), (), ("b.py",), ())
    assert score(no_defs, outcome).definition_recall is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)
    assert percentile([5.0], 95) == 5.0 and percentile([], 50) is None


# --- the command -----------------------------------------------------------------------------


def test_eval_json_shape_and_known_numbers(history: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, shas = history
    # The user's own work tree and index carry changes: eval must not touch them.
    (root / "app/util.py").write_text(UTIL + "\n# local edit\n")
    (root / "notes.txt").write_text("untracked\n")
    (root / "app/m3.py").write_text("def helper_3():\n    return 'staged'\n")
    git(root, "add", "app/m3.py")
    before = (git(root, "status", "--porcelain"), git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached"))
    out = tmp_path / "eval.json"
    proc = run_cli(
        "eval",
        str(root),
        "--commits",
        "5",
        "--modes",
        "static",
        "--tokens",
        "256,4096",
        "--format",
        "json",
        "--json-out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (
        "hybridmap: warning: only 3 of the 5 requested commits qualify "
        "(scanned 9 first-parent commits of HEAD); evaluating 3"
    )
    data = json.loads(proc.stdout)
    assert json.loads(out.read_text()) == data
    assert (git(root, "status", "--porcelain"), git(root, "rev-parse", "HEAD"), git(root, "diff", "--cached")) == before
    assert worktrees(root) == [str(root)]

    assert {
        "schema",
        "root",
        "rev",
        "head",
        "commits_requested",
        "commits_evaluated",
        "commits_scanned",
        "shortfall",
        "budgets",
        "systems",
        "server_wait",
        "versions",
        "elapsed_seconds",
        "summary",
        "servers_ready_commits",
        "summary_servers_ready",
        "servers",
        "commits",
    } <= set(data)
    assert data["servers_ready_commits"] == 0  # static only: no server
    assert (data["commits_requested"], data["commits_evaluated"], data["budgets"], data["systems"]) == (
        5,
        3,
        [256, 4096],
        ["static"],
    )
    assert data["head"] == shas["c8"]
    assert [c["sha"] for c in data["commits"]] == [shas["c8"], shas["c5"], shas["c1"]]
    assert [(row["system"], row["task"]) for row in data["summary"]] == [
        ("static", "co-edit"),
        ("static", "message"),
        ("static", "message-text"),
    ]
    assert data["task_kinds"] == ["co-edit", "message", "message-text"]
    c1 = data["commits"][2]
    assert c1["files"] == [
        {"path": "app/models.py", "new_path": "app/models.py", "added": 2, "deleted": 1},
        {"path": "app/store.py", "new_path": "app/store.py", "added": 1, "deleted": 0},
    ]
    assert [d["name"] for d in c1["changed_definitions"]] == ["persist", "save"]
    run = c1["runs"]["static"]
    assert run["error"] == "" and run["servers"] == {} and run["edges"]["name-match"] > 0
    assert [(m["task"], m["budget"]) for m in run["maps"]] == [
        ("co-edit", 256),
        ("co-edit", 4096),
        ("message", 256),
        ("message", 4096),
        ("message-text", 256),
        ("message-text", 4096),
    ]
    for commit in data["commits"]:
        targets = {t["kind"]: t["targets"] for t in commit["tasks"]}
        for m in commit["runs"]["static"]["maps"]:
            assert m["tokens"] <= m["budget"] and m["seconds"] > 0
            # The scores are those of the files listed, in the order listed.
            wanted = targets[m["task"]]
            first = next((i for i, f in enumerate(m["files"]) if f in wanted), None)
            assert m["reciprocal_rank"] == (0.0 if first is None else 1 / (first + 1))
            assert m["file_recall"] == len(set(wanted) & set(m["files"])) / len(wanted)
            if m["budget"] == 4096:
                # The whole project fits in 4096 tokens: every target and every changed definition is shown.
                assert m["file_recall"] == 1.0
                assert m["definition_recall"] in (1.0, None)
        co_edit = next(t for t in commit["tasks"] if t["kind"] == "co-edit")
        assert all(
            co_edit["chat_files"][0] not in m["files"]
            for m in commit["runs"]["static"]["maps"]
            if m["task"] == "co-edit"
        )
    summary = {row["task"]: row for row in data["summary"]}
    assert summary["co-edit"]["tasks"] == 3 and summary["message"]["tasks"] == 3
    assert summary["message-text"]["tasks"] == 3 and summary["message-text"]["recall"]["4096"] == 1.0
    assert summary["co-edit"]["recall"]["4096"] == 1.0
    assert summary["co-edit"]["definition_recall"]["4096"] == 1.0
    assert summary["co-edit"]["definition_tasks"] == 3
    c8 = data["commits"][0]
    assert [(t["chat_files"], t["targets"], [d["name"] for d in t["definitions"]]) for t in c8["tasks"]] == [
        (["app/models.py"], ["app/store.py"], ["Store"]),  # models.py: 4 added lines, store.py 3
        ([], ["app/models.py", "app/store.py"], ["Store"]),
        ([], ["app/models.py", "app/store.py"], ["Store"]),
    ]  # the appended make_model is not in the parent
    assert c8["tasks"][2] | {"definitions": []} == {
        "kind": "message-text",
        "chat_files": [],
        "mentions": ["Model"],
        "mentioned_files": ["app/store.py"],
        "targets": ["app/models.py", "app/store.py"],
        "definitions": [],
        "text": "Model keeps a default store",
    }


def test_eval_markdown_table(history: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, _ = history
    saved = tmp_path / "report.json"
    proc = run_cli(
        "eval", str(root), "--commits", "2", "--modes", "static", "--tokens", "512,1024", "--json-out", str(saved)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # piped: no progress bar, and 2 of 2 qualify: no warning
    # A saved report renders to exactly the same markdown.
    again = run_cli("eval", "--from-json", str(saved))
    assert again.returncode == 0 and again.stdout == proc.stdout
    # --tasks asks only the kinds named.
    only = run_cli(
        "eval", str(root), "--commits", "2", "--modes", "static", "--tokens", "512", "--tasks", "message-text"
    )
    assert only.returncode == 0, only.stderr
    assert [row.split(" | ")[1] for row in only.stdout.splitlines() if row.startswith("| hybridmap static |")] == [
        "message-text"
    ]
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    again = run_cli("eval", "--from-json", str(broken))
    assert again.returncode == 2 and "cannot render" in again.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| system |"))
    assert header == (
        "| system | task | tasks (with defs) | recall@512 | recall@1024 | MRR@512 | MRR@1024 | "
        "top5@512 | top5@1024 | defs@512 | defs@1024 | s/map median | s/map p95 | max tokens/budget |"
    )
    rows = [line for line in lines if line.startswith("| hybridmap static |")]
    assert [row.split(" | ")[1] for row in rows] == ["co-edit", "message", "message-text"]
    assert all(row.split(" | ")[2] == "2 (2)" for row in rows)
    # top5 columns are measured (numbers, not the empty mark of a report saved before them).
    assert all(all(cell.replace(".", "").isdigit() for cell in row.split(" | ")[7:9]) for row in rows), rows


def test_hybrid_mode_uses_the_server_within_its_wait(history: tuple[Path, dict[str, str]]) -> None:
    root, _ = history
    proc = run_cli(
        "eval",
        str(root),
        "--commits",
        "2",
        "--modes",
        "static,hybrid",
        "--tokens",
        "1024",
        "--server-wait",
        "20",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for commit in data["commits"]:
        static, hybrid = commit["runs"]["static"], commit["runs"]["hybrid"]
        assert static["servers"] == {} and static["edges"].get("lsp", 0) == 0
        assert hybrid["servers"]["python"]["state"] == "ready"
        assert hybrid["servers"]["python"]["server"] == "ty"
        # views.py's call of store.load is resolved by the server: an lsp edge.
        assert hybrid["edges"]["lsp"] > 0
        assert hybrid["first_map_seconds"] < 20 + 15  # the wait is a deadline
        assert len(hybrid["maps"]) == len(static["maps"]) == len(commit["tasks"])
    assert data["servers_ready_commits"] == 2
    assert data["servers"]["languages"]["python"]["ready"] == 2
    assert data["summary_servers_ready"] == data["summary"]


def test_bare_repositories_and_subdirectories(history: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    root, shas = history
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    proc = run_cli("eval", str(bare), "--commits", "2", "--modes", "static", "--tokens", "512", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [c["sha"] for c in data["commits"]] == [shas["c8"], shas["c5"]]
    assert len(worktrees(bare)) == 1
    # ROOT inside a repository: only its files count, with paths relative to it.
    proc = run_cli(
        "eval", str(root / "app"), "--commits", "2", "--modes", "static", "--tokens", "512", "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [f["path"] for f in data["commits"][0]["files"]] == ["models.py", "store.py"]
    maps = data["commits"][0]["runs"]["static"]["maps"]
    assert maps and all(not f.startswith("app/") for m in maps for f in m["files"])
    assert worktrees(root) == [str(root)]


def test_progress_bar_on_a_terminal_only(history: tuple[Path, dict[str, str]]) -> None:
    root, _ = history
    code, stderr, stdout = run_on_pty(
        ["eval", str(root), "--commits", "2", "--modes", "static", "--tokens", "256"], stream="stderr"
    )
    assert code == 0
    assert "hybridmap eval [" in stderr and "0/2 commits" in stderr and "2/2 commits" in stderr
    assert stderr.endswith("\r\x1b[K")  # the bar is cleared before the report is printed
    assert "hybridmap eval [" not in stdout


def test_variants_run_beside_the_defaults_on_the_same_tasks(history: tuple[Path, dict[str, str]]) -> None:
    root, _ = history
    proc = run_cli(
        "eval",
        str(root),
        *("--commits", "2", "--modes", "static", "--tokens", "1024", "--tasks", "co-edit", "--format", "json"),
        *("--variant", "same:co_change_boost=1.0", "--variant", 'noapp:exclude=["app/**"]'),
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["systems"] == ["static", "static[same]", "static[noapp]"]
    for commit in data["commits"]:
        runs = commit["runs"]
        # The default's value as a variant: the very same maps; leaving app/ out: none of it shown.
        assert [m["files"] for m in runs["static[same]"]["maps"]] == [m["files"] for m in runs["static"]["maps"]]
        assert all(m["files"] for m in runs["static"]["maps"])
        assert all(not f.startswith("app/") for m in runs["static[noapp]"]["maps"] for f in m["files"])
    rows = {row["system"]: row for row in data["summary"]}
    assert rows["static[same]"]["recall"] == rows["static"]["recall"]
    assert rows["static[noapp]"]["recall"] != rows["static"]["recall"]
    for bad, says in (
        ("co_change_boost=2", "must be NAME:key=value"),
        ("x:nosuch=1", "unknown setting 'nosuch'"),
        ("x:co_change_boost", "is not key=value"),
        ("x:co_change_boost=-5", "co_change_boost"),
    ):
        proc = run_cli("eval", str(root), "--variant", bad)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, (bad, proc.stderr)
    proc = run_cli("eval", str(root), "--variant", "a:co_change_boost=1", "--variant", "a:co_change_boost=2")
    assert proc.returncode == 2 and "--variant names must differ" in proc.stderr


def test_eval_errors_are_one_line(tmp_path: Path, git_repo) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = run_cli("eval", str(plain))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "is not a git repository" in proc.stderr
    single = git_repo({"a.py": "def a():\n    pass\n"})
    proc = run_cli("eval", str(single))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "history too short: HEAD has 1 commit(s)" in proc.stderr
    proc = run_cli("eval", str(single), "--tokens", "12,x")
    assert proc.returncode == 2 and "--tokens" in proc.stderr
    proc = run_cli("eval", str(single), "--modes", "fast")
    assert proc.returncode == 2 and "unknown value 'fast'" in proc.stderr
    proc = run_cli("eval", str(single), "--tasks", "co-edit,chat")
    assert proc.returncode == 2 and "--tasks: unknown value 'chat'" in proc.stderr
    proc = run_cli("eval", str(single), "--peer", "aider", "--aider-python", str(tmp_path / "nowhere/python"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "no python with Aider" in proc.stderr and "benchmarks/setup_aider_env.sh" in proc.stderr


# --- the scratch worktree --------------------------------------------------------------------


def test_worktree_is_removed_after_an_exception(history: tuple[Path, dict[str, str]]) -> None:
    root, shas = history
    repo = open_repository(root)
    seen: list[Path] = []
    with pytest.raises(ZeroDivisionError), ScratchWorktree(repo) as worktree:
        checked = worktree.checkout(shas["c0"])
        assert (checked / "app/store.py").read_text() == STORE
        checked = worktree.checkout(shas["c1"])  # reused, not re-added
        (checked / "stray.txt").write_text("left by a server\n")
        checked = worktree.checkout(shas["c5"])
        assert not (checked / "stray.txt").exists()
        assert "return key" in (checked / "app/store.py").read_text()
        seen.append(checked)
        assert len(worktrees(root)) == 2
        raise ZeroDivisionError  # an error inside the block
    assert worktrees(root) == [str(root)]
    assert not seen[0].exists() and not seen[0].parent.exists()
    assert git(root, "rev-parse", "HEAD").strip() == shas["c8"]


def _interrupt_when(
    root: Path, args: list[str], is_target: Callable[[psutil.Process], bool], sig: signal.Signals = signal.SIGINT
) -> list[psutil.Process]:
    """Run eval, send ``sig`` once a matching child process runs; check the cleanup; return those children."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hybridmap", "eval", str(root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    me = psutil.Process(proc.pid)
    targets: list[psutil.Process] = []
    scratch: list[str] = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None and not targets:
            with contextlib.suppress(psutil.Error):
                targets = [p for p in me.children(recursive=True) if is_target(p)]
            scratch = worktrees(root)[1:]
            time.sleep(0.01)
        if not (targets and scratch):
            proc.kill()
            raise AssertionError(f"the eval ended before the awaited process ran: {proc.communicate()[1]}")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().endswith("hybridmap: error: interrupted; the scratch worktree was removed")
    assert out == ""
    assert worktrees(root) == [str(root)]
    assert not Path(scratch[0]).exists() and not Path(scratch[0]).parent.exists()
    alive = psutil.wait_procs(targets, timeout=10)[1]
    assert alive == [], f"still running: {alive}"
    return targets


def test_ctrl_c_mid_run_removes_the_worktree_and_stops_the_servers(history: tuple[Path, dict[str, str]]) -> None:
    root, _ = history
    _interrupt_when(
        root,
        ["--commits", "3", "--modes", "static,hybrid", "--server-wait", "30", "--format", "json"],
        lambda p: p.name() == "ty",
    )


def test_sigterm_cleans_up_like_ctrl_c(history: tuple[Path, dict[str, str]]) -> None:
    root, _ = history
    _interrupt_when(
        root, ["--commits", "3", "--modes", "hybrid", "--server-wait", "30"], lambda p: p.name() == "ty", signal.SIGTERM
    )


def test_ctrl_c_while_the_peer_runs_stops_it(history: tuple[Path, dict[str, str]]) -> None:
    python = os.environ.get("HYBRIDMAP_AIDER_PYTHON") or str(DEFAULT_PYTHON)
    if not Path(python).is_file():
        reason = f"Aider's venv not found at {python} (create it with benchmarks/setup_aider_env.sh)"
        print(reason)
        pytest.skip(reason)
    root, _ = history
    _interrupt_when(
        root,
        ["--commits", "3", "--modes", "", "--peer", "aider", "--aider-python", python],
        lambda p: any(part.endswith("aider_runner.py") for part in p.cmdline()) and "--version" not in p.cmdline(),
    )


# --- the peer --------------------------------------------------------------------------------


def test_aider_python_is_looked_up_in_order(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_aider_python(str(fake), {}) == fake
    assert find_aider_python(None, {"HYBRIDMAP_AIDER_PYTHON": str(fake)}) == fake
    with pytest.raises(RequestError, match=r"no python with Aider at '.*missing'"):
        find_aider_python(None, {"HYBRIDMAP_AIDER_PYTHON": str(tmp_path / "missing")})


def test_peer_aider_runs_the_real_aider(history: tuple[Path, dict[str, str]]) -> None:
    python = os.environ.get("HYBRIDMAP_AIDER_PYTHON") or str(DEFAULT_PYTHON)
    if not Path(python).is_file():
        reason = f"Aider's venv not found at {python} (create it with benchmarks/setup_aider_env.sh)"
        print(reason)
        pytest.skip(reason)
    root, _shas = history
    proc = run_cli(
        "eval",
        str(root),
        "--commits",
        "3",
        "--modes",
        "static",
        "--peer",
        "aider",
        "--tokens",
        "256,4096",
        "--format",
        "json",
        "--aider-python",
        python,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["systems"] == ["static", "aider"]
    assert data["versions"]["aider"] == "0.86.2"
    assert {row["system"] for row in data["summary"]} == {"static", "aider"}
    for commit in data["commits"]:
        aider = commit["runs"]["aider"]
        assert aider["error"] == "" and aider["first_map_seconds"] > 0
        tasks = {t["kind"]: t for t in commit["tasks"]}
        assert [(m["task"], m["budget"]) for m in aider["maps"]] == [
            (kind, budget) for kind in tasks for budget in (256, 4096)
        ]
        for m in aider["maps"]:
            assert m["tokens"] > 0
            assert set(tasks[m["task"]]["chat_files"]).isdisjoint(m["files"])
            if m["budget"] == 4096:
                # Everything fits: Aider shows every file with definitions but the chat files.
                assert m["file_recall"] == 1.0
    # Reproducible: the same requests give the same maps (Aider's runner has a fixed hash seed).
    again = run_cli(
        "eval",
        str(root),
        "--commits",
        "3",
        "--modes",
        "",
        "--peer",
        "aider",
        "--tokens",
        "256,4096",
        "--format",
        "json",
        "--aider-python",
        python,
    )
    assert again.returncode == 0, again.stderr
    assert [[m["files"] for m in c["runs"]["aider"]["maps"]] for c in json.loads(again.stdout)["commits"]] == [
        [m["files"] for m in c["runs"]["aider"]["maps"]] for c in data["commits"]
    ]
    # Files come in Aider's rank order (from get_ranked_tags), not in the name order of its text.
    orders = [m["files"] for c in data["commits"] for m in c["runs"]["aider"]["maps"]]
    assert any(files != sorted(files) for files in orders)
    c1 = data["commits"][2]
    co_edit = next(m for m in c1["runs"]["aider"]["maps"] if m["task"] == "co-edit" and m["budget"] == 4096)
    assert co_edit["files"][0] == "app/store.py"  # what the chat file models.py imports ranks first


def test_peer_bm25_lists_the_files_that_read_like_the_task(history: tuple[Path, dict[str, str]]) -> None:
    """The lexical baseline beside both Aider and the map: 20 files at most, never a chat file,
    the same list for every budget, cut where a small budget ends."""
    root, _shas = history
    proc = run_cli("eval", str(root), "--commits", "3", "--modes", "static", "--peer", "bm25", "--tokens", "256,4096")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "eval", str(root), "--commits", "3", "--modes", "", "--peer", "bm25", "--tokens", "30,4096", "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["systems"] == ["bm25"]
    listed = 0
    for commit in data["commits"]:
        run = commit["runs"]["bm25"]
        assert run["error"] == ""
        tasks = {t["kind"]: t for t in commit["tasks"]}
        maps = {(m["task"], m["budget"]): m for m in run["maps"]}
        for kind, task in tasks.items():
            small, large = maps[(kind, 30)], maps[(kind, 4096)]
            assert set(task["chat_files"]).isdisjoint(large["files"])
            assert 0 < len(large["files"]) <= 20 and large["tokens"] <= 4096
            assert small["files"] == large["files"][: len(small["files"])] and small["tokens"] <= 30
            listed += len(large["files"])
    assert listed > 0


def test_first_five_recall_counts_only_the_top_of_the_map() -> None:
    from hybridmap.frontends.evaluate.metrics import MapOutcome, ShownFile, score
    from hybridmap.frontends.evaluate.tasks import Task

    task = Task("co-edit", ("chat.py",), (), (), ("deep.py", "top.py"), ())
    files = tuple(ShownFile(p, ()) for p in ("a.py", "top.py", "b.py", "c.py", "d.py", "deep.py"))
    result = score(task, MapOutcome(files, 100, 0.1))
    assert (result.file_recall, result.first_five_recall, result.reciprocal_rank) == (1.0, 0.5, 0.5)


def test_a_commit_that_cannot_be_checked_out_is_skipped_and_said(tmp_path: Path, git_repo) -> None:
    """A clone can lack an object an old commit needs (a mirror without a large binary): that
    commit is skipped with a warning, and the others are evaluated. Here the newest commit's
    parent is the broken one, so the scratch worktree's first ``add`` fails and is made again."""
    root = git_repo({"a.py": "def one():\n    return 1\n", "b.py": "def two():\n    return one()\n"})
    (root / "a.py").write_text("def one():\n    return 11\n")
    (root / "b.py").write_text("def two():\n    return one() + 1\n")
    _commit(root, "first change")
    (root / "blob.bin").write_bytes(b"\x00lost object " * 64)
    _commit(root, "a binary the clone will lose")
    (root / "a.py").write_text("def one():\n    return 111\n")
    (root / "b.py").write_text("def two():\n    return one() + 2\n")
    _commit(root, "second change (its parent has the binary)")
    found = subprocess.run(["git", "rev-parse", "HEAD:blob.bin"], cwd=root, capture_output=True, text=True)
    blob = found.stdout.strip()
    (root / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # the loose object is gone
    proc = run_cli("eval", str(root), "--commits", "2", "--modes", "static", "--tokens", "256", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [c["subject"] for c in data["commits"]] == ["first change"], data["commits"]
    assert len(data["unavailable"]) == 1 and "failed" in data["unavailable"][0], data["unavailable"]
    assert "skipped a commit that cannot be checked out" in proc.stderr
    assert worktrees(root) == [str(root)]
