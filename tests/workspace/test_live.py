"""A live map for a live agent: session events, budgets, what changed, refresh policies, watch.

Real files and real git repositories throughout; the watch tests edit files on disk and wait
for the real inotify watch; the server test drives ty through a watched edit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hybridmap import AsyncRepoMap, RepoMap
from hybridmap.pipeline.budget import budget_for, conversation_budget
from hybridmap.settings import Settings
from hybridmap.workspace.live import LiveEvent

from ..conftest import committed_copy, write_files
from ..helpers import LSP_FIXTURES as FIXTURES
from ..helpers import require, run_cli

# A hub (util.py) everything uses, and three leaves that nothing links to one another.
FILES = {
    "util.py": "def shared_helper(x):\n    return x\n",
    "alpha.py": "from util import shared_helper\n\ndef alpha_entry():\n    return shared_helper(1)\n",
    "beta.py": "from util import shared_helper\n\ndef beta_entry():\n    return shared_helper(2)\n",
    "gamma.py": "from util import shared_helper\n\ndef gamma_entry():\n    return shared_helper(3)\n",
}


def _repo(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "repo"
    write_files(root, files or FILES)
    return root


def _overrides(tmp_path: Path, **more: object) -> dict[str, object]:
    return {"cache_dir": str(tmp_path / "cache"), **more}


def _rank_of(result, path: str) -> int:
    order = [f.path for f in result.files]
    return order.index(path) if path in order else len(order)


# --- budgets ---------------------------------------------------------------------------------


def test_budget_curve_multiplier_and_explicit_budget() -> None:
    settings = Settings()
    assert [conversation_budget(n, settings) for n in (0, 49_999, 50_000, 99_999, 100_000, 10**7)] == [
        2_500,
        2_500,
        2_000,
        2_000,
        1_500,
        1_500,
    ]
    assert budget_for(700, 200_000, False, settings) == 700  # an explicit budget always wins
    assert budget_for(None, None, True, settings) == settings.map_tokens
    assert budget_for(None, None, False, settings) == 8_192  # 1,024 x 8, at the cap
    # A conversation's length decides alone: no multiplier gives back what the curve took away.
    assert budget_for(None, 60_000, False, settings) == 2_000
    assert budget_for(None, 60_000, True, settings) == 2_000
    assert budget_for(None, 120_000, False, settings) == 1_500
    no_multiplier = settings.replace(no_chat_budget_multiplier=1.0)
    assert budget_for(None, None, False, no_multiplier) == settings.map_tokens


def test_map_budget_follows_the_conversation(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        assert repo.map(mode="static", chat_files=["util.py"], conversation_tokens=0).budget == 2_500
        assert repo.map(mode="static", chat_files=["util.py"], conversation_tokens=75_000).budget == 2_000
        assert repo.map(mode="static", chat_files=["util.py"], conversation_tokens=150_000).budget == 1_500
        assert repo.map(mode="static", conversation_tokens=150_000).budget == 1_500  # no chat file
        assert repo.map(mode="static").budget == 8_192  # no chat file, no length: 1,024 x 8
        assert repo.map(mode="static", tokens=300, conversation_tokens=150_000).budget == 300


# --- session events ----------------------------------------------------------------------------


def test_session_events_lift_the_files_the_agent_touched(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        before = repo.map(mode="static", tokens=2_000)
        assert _rank_of(before, "gamma.py") > 0  # the hub ranks first without events
        repo.file_edited("gamma.py")
        after = repo.map(mode="static", tokens=2_000)
        gamma = next(f for f in after.files if f.path == "gamma.py")
        assert "edited in this session" in gamma.why
        assert _rank_of(after, "gamma.py") < _rank_of(before, "gamma.py")
        assert gamma.file_rank > next(f for f in before.files if f.path == "gamma.py").file_rank
        # Read and active files weigh too, each with its own reason.
        repo.file_read(str(root / "beta.py"))  # an absolute path inside the root is accepted
        repo.active_file("alpha.py")
        why = {f.path: f.why for f in repo.map(mode="static", tokens=2_000).files}
        assert "read in this session" in why["beta.py"] and "active file" in why["alpha.py"]
        repo.forget_session()
        fresh = repo.map(mode="static", tokens=2_000)
        why = {f.path: f.why for f in fresh.files}
        assert not any("session" in w or w == "active file" for ws in why.values() for w in ws)
        assert fresh.changes.first  # a new conversation has seen no map: nothing is [NEW] to it
        # The same events for one map only.
        one = repo.map(mode="static", tokens=2_000, edited_files=["beta.py"], active_file="gamma.py")
        why = {f.path: f.why for f in one.files}
        assert "edited in this session" in why["beta.py"] and "active file" in why["gamma.py"]


def test_events_outside_the_root_are_refused(tmp_path: Path) -> None:
    from hybridmap.errors import RequestError

    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        for call in (repo.file_edited, repo.file_read, repo.active_file):
            with pytest.raises(RequestError, match="outside the root"):
                call("../elsewhere.py")
        with pytest.raises(RequestError, match="outside the root"):
            repo.map(edited_files=[str(tmp_path / "other.py")])


def test_message_text_names_files_and_identifiers_in_any_style(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        result = repo.map(mode="static", tokens=2_000, message="Why does SharedHelper() fail when beta.py calls it?")
        assert result.mentions[:2] == ("beta.py", "shared_helper")  # the repository's spelling
        beta = next(f for f in result.files if f.path == "beta.py")
        assert "mentioned file" in beta.why
        assert result.to_json()["mentions"][:2] == ["beta.py", "shared_helper"]
        plain = repo.map(mode="static", tokens=2_000, message="nothing here names the code")
        assert "shared_helper" not in plain.mentions


def test_a_mention_in_another_style_finds_the_definition(tmp_path: Path) -> None:
    """``--mention SHARED_HELPER`` as a message's word would: the repository's ``shared_helper``
    ranks as mentioned (on 93cd2d1 a mention matched only as spelled, and this one found nothing)."""
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        for spelled in ("SHARED_HELPER", "sharedHelper"):
            result = repo.map(mode="static", tokens=2_000, chat_files=["alpha.py"], mentioned_idents=[spelled])
            assert "shared_helper" in result.mentions, (spelled, result.mentions)
            util = next(f for f in result.files if f.path == "util.py")
            assert "defines mentioned 'shared_helper'" in util.why, (spelled, util.why)


def test_a_typo_in_a_message_finds_the_definition(tmp_path: Path) -> None:
    """``shared_hepler`` in a message is ``shared_helper`` (the symbol search found it; the map's
    reading of the message found nothing before message_typo_min_chars)."""
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        result = repo.map(mode="static", tokens=2_000, message="Why does shared_hepler() fail?")
        assert "shared_helper" in result.mentions, result.mentions
        util = next(f for f in result.files if f.path == "util.py")
        assert "defines mentioned 'shared_helper'" in util.why, util.why
        assert repo.search_symbols("shared_hepler").matches[0].name == "shared_helper"


# --- what changed --------------------------------------------------------------------------------


def test_changes_since_the_previous_map_and_new_marks(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        first = repo.map(mode="static", tokens=2_000)
        assert first.changes.first and not first.changes
        assert "[NEW]" not in first.text
        write_files(root, {"delta.py": "from util import shared_helper\n\ndef delta_entry():\n    pass\n"})
        (root / "beta.py").write_text(FILES["beta.py"] + "\ndef beta_more():\n    pass\n")
        (root / "gamma.py").unlink()
        second = repo.map(mode="static", tokens=2_000)
        assert (second.changes.new, second.changes.gone, second.changes.changed) == (
            ("delta.py",),
            ("gamma.py",),
            ("beta.py",),
        )
        assert "delta.py: [NEW]\n" in second.text and "beta.py: [NEW]" not in second.text
        assert second.tokens <= second.budget
        assert second.to_json()["changes"] == {
            "first": False,
            "new": ["delta.py"],
            "gone": ["gamma.py"],
            "changed": ["beta.py"],
        }
        third = repo.map(mode="static", tokens=2_000)
        assert not third.changes and not third.changes.first and "[NEW]" not in third.text


# --- refresh policies ------------------------------------------------------------------------------


def test_manual_policy_reads_only_on_refresh(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path, refresh="manual")) as repo:
        repo.map(mode="static", tokens=2_000)
        write_files(root, {"delta.py": "def delta_entry():\n    pass\n"})
        assert "delta.py" not in repo.map(mode="static", tokens=2_000).text
        repo.file_edited("delta.py")  # events do not read under manual
        assert "delta.py" not in repo.map(mode="static", tokens=2_000).text
        changes = repo.refresh()
        assert changes.new == ("delta.py",)
        assert "delta.py" in repo.map(mode="static", tokens=2_000).text


def test_files_policy_reads_when_the_request_or_an_event_says_so(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path, refresh="files")) as repo:
        repo.map(mode="static", tokens=2_000, chat_files=["util.py"])
        write_files(root, {"delta.py": "def delta_entry():\n    pass\n"})
        same = repo.map(mode="static", tokens=2_000, chat_files=["util.py"])
        assert "delta.py" not in same.text  # same chat files, no event: no re-read
        other = repo.map(mode="static", tokens=2_000, chat_files=["alpha.py"])
        assert "delta.py" in other.text and other.changes.new == ("delta.py",)
        write_files(root, {"epsilon.py": "def epsilon_entry():\n    pass\n"})
        repo.file_edited("epsilon.py")
        assert "epsilon.py" in repo.map(mode="static", tokens=2_000, chat_files=["alpha.py"]).text


def test_auto_reuses_an_unchanged_map_and_always_does_not(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    for policy, reused in (("auto", True), ("always", False)):
        with RepoMap(root, overrides=_overrides(tmp_path, refresh=policy)) as repo:
            first = repo.map(mode="static", tokens=2_000)
            again = repo.map(mode="static", tokens=2_000)
            assert again.text == first.text
            # A reused map is said in its counters, and has no build timings.
            assert (again.stats.get("map_reused") == 1.0) is reused, (policy, again.stats)
            assert ("rank" not in again.timings) is reused, (policy, again.timings)
            write_files(root, {f"{policy}.py": "def fresh_entry():\n    pass\n"})
            assert f"{policy}.py" in repo.map(mode="static", tokens=2_000).text


def test_a_map_that_may_wait_is_never_the_reused_one(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with RepoMap(root, overrides=_overrides(tmp_path)) as repo:
        repo.map(mode="static", tokens=2_000)
        assert repo.map(mode="static", tokens=2_000).stats.get("map_reused") == 1.0
        waited = repo.map(mode="static", tokens=2_000, server_wait=0.1)
        assert "map_reused" not in waited.stats and "rank" in waited.timings


def test_refresh_setting_is_range_checked() -> None:
    from hybridmap.errors import ConfigError

    with pytest.raises(ConfigError, match="one of `auto`, `always`, `files`, `manual`"):
        Settings().replace(refresh="sometimes")


# --- watch mode ----------------------------------------------------------------------------------


async def _next_event(events, kind: str, timeout: float = 20.0) -> LiveEvent:
    async def find() -> LiveEvent:
        async for event in events:
            if event.kind == kind:
                return event
        raise AssertionError("event stream ended")

    return await asyncio.wait_for(find(), timeout)


@pytest.mark.asyncio
async def test_watch_rereads_saved_edits_and_tells_listeners(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=200)) as repo:
        await repo.map(mode="static", tokens=2_000)
        heard: list[LiveEvent] = []
        remove = repo.on_event(heard.append)
        events = repo.events()
        await repo.watch()
        assert repo.watching
        # A save in several writes is one batch after the debounce.
        target = root / "alpha.py"
        for part in ("\ndef alpha_two():\n", "    return 2\n"):
            with target.open("a") as handle:
                handle.write(part)
        write_files(root, {"pkg/new_module.py": "def brand_new():\n    pass\n"})
        event = await _next_event(events, "files_changed")
        assert {"alpha.py", "pkg/new_module.py"} <= set(event.paths), event
        assert any(e.kind == "files_changed" for e in heard)
        # The watch already re-read: the next map has the edit, says what changed, and marks NEW.
        result = await repo.map(mode="static", tokens=2_000)
        assert "alpha_two" in result.text or "alpha.py" in result.changes.changed
        assert "pkg/new_module.py" in result.changes.new and "pkg/new_module.py: [NEW]" in result.text
        # (Whether this map re-read: a new directory has the watch set up again, and a map meanwhile
        # lists the tree itself; test_an_edit_just_before_a_watched_map... checks the synced case.)
        remove()
        await repo.unwatch()
        assert not repo.watching


@pytest.mark.asyncio
async def test_watched_edit_reaches_the_language_server(tmp_path: Path) -> None:
    """A saved edit under watch: the server hears of it (didChangeWatchedFiles / didChange), its
    answers for the changed file are dropped, and the next hybrid map resolves the new code."""
    require("ty")
    root = committed_copy(FIXTURES / "python", tmp_path / "python")
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=200)) as repo:
        await repo.map(mode="hybrid", server_wait=60, tokens=512)
        graph = repo.graph()
        assert graph is not None
        before = {(u, v, k): d["provenance"] for u, v, k, d in graph.to_networkx().edges(keys=True, data=True)}
        assert before.get(("app.py", "store/disk.py", "load")) == "lsp"
        events = repo.events()
        await repo.watch()
        app = root / "app.py"
        app.write_text(app.read_text().replace("from store.disk import load", "from store.memory import load"))
        await _next_event(events, "files_changed")
        await repo.map(mode="hybrid", server_wait=60, tokens=512)
        after = edges_of(repo)
    assert after.get(("app.py", "store/memory.py", "load")) == "lsp"
    assert ("app.py", "store/disk.py", "load") not in after


def edges_of(repo: AsyncRepoMap) -> dict[tuple[str, str, str], str]:
    graph = repo.graph()
    assert graph is not None
    return {(u, v, k): d["provenance"] for u, v, k, d in graph.to_networkx().edges(keys=True, data=True)}


@pytest.mark.asyncio
async def test_answers_improved_is_said_after_a_map_that_did_not_wait(tmp_path: Path) -> None:
    require("ty")
    root = committed_copy(FIXTURES / "python", tmp_path / "python")
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, live_poll_ms=100)) as repo:
        events = repo.events()
        first = await repo.map(mode="hybrid", tokens=512)  # servers start; nothing resolved yet
        assert first.edges.get("lsp", 0) == 0
        event = await _next_event(events, "answers_improved", timeout=90)
        assert event.sources == ("lsp",)
        later = await repo.map(mode="hybrid", tokens=512, server_wait=60)
        assert later.edges.get("lsp", 0) >= 1


async def _next_map_with(repo: AsyncRepoMap, events, check, what: str, timeout: float = 20.0):
    """The first map after a ``files_changed`` event for which ``check(result)`` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = deadline - asyncio.get_running_loop().time()
        assert left > 0, f"never in a map: {what}"
        await _next_event(events, "files_changed", timeout=left)
        result = await repo.map(mode="static", tokens=4_000)
        if check(result):
            return result


@pytest.mark.asyncio
@pytest.mark.parametrize("order", ["watch_then_map", "map_then_watch"])
async def test_every_change_under_watch_reaches_the_next_map(tmp_path: Path, order: str) -> None:
    """Created in an existing directory, edited, renamed, deleted, and created in a directory
    made after the watch started: each is in the next map. ``watch_then_map`` is the MCP
    server's order; there, on 48637be, a file created in ``pkg/`` never reached a map (the
    watch covered only the root, the one directory of the empty listing it started on)."""
    root = _repo(tmp_path, {**FILES, "pkg/base.py": "def base_entry():\n    pass\n"})
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=100)) as repo:
        events = repo.events()
        if order == "watch_then_map":
            await repo.watch()
            await repo.map(mode="static", tokens=4_000)
        else:
            await repo.map(mode="static", tokens=4_000)
            await repo.watch()

        write_files(root, {"pkg/created.py": "def created_entry():\n    pass\n"})
        result = await _next_map_with(repo, events, lambda r: "pkg/created.py" in r.changes.new, "created")
        assert "created_entry" in result.text

        (root / "pkg" / "created.py").write_text("def edited_entry():\n    pass\n")
        result = await _next_map_with(repo, events, lambda r: "edited_entry" in r.text, "edited")
        assert "created_entry" not in result.text

        (root / "pkg" / "created.py").rename(root / "pkg" / "renamed.py")
        result = await _next_map_with(repo, events, lambda r: "pkg/renamed.py" in r.changes.new, "renamed")
        assert "pkg/created.py" in result.changes.gone and "pkg/created.py" not in result.text

        (root / "pkg" / "renamed.py").unlink()
        result = await _next_map_with(repo, events, lambda r: "pkg/renamed.py" in r.changes.gone, "deleted")
        assert "edited_entry" not in result.text

        write_files(root, {"later/deep/made.py": "def made_entry():\n    pass\n"})
        await _next_map_with(repo, events, lambda r: "later/deep/made.py" in r.changes.new, "new directory")
        # The new directory is watched from then on: a second file in it is seen too.
        write_files(root, {"later/deep/second.py": "def second_entry():\n    pass\n"})
        await _next_map_with(repo, events, lambda r: "later/deep/second.py" in r.changes.new, "second file")


# keep the sync facade honest too: events from another thread's map
def test_sync_facade_watch_and_callback(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    import threading

    seen = threading.Event()
    with RepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=100)) as repo:
        repo.map(mode="static", tokens=2_000)
        repo.on_event(lambda event: seen.set() if event.kind == "files_changed" else None)
        repo.watch()
        write_files(root, {"late.py": "def late_entry():\n    pass\n"})
        assert seen.wait(20)
        assert "late.py" in repo.map(mode="static", tokens=2_000).changes.new


# --- the CLI -------------------------------------------------------------------------------------


def test_cli_session_options(tmp_path: Path) -> None:
    import json

    root = _repo(tmp_path)
    base = ["map", str(root), "--mode", "static", "--format", "json", "--cache-dir", str(tmp_path / "c")]
    proc = run_cli(*base, "--chat", "util.py", "--conversation-tokens", "120000", "--edited", "gamma.py")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["budget"] == 1_500 and document["changes"]["first"] is True
    assert "edited in this session" in next(f for f in document["files"] if f["path"] == "gamma.py")["why"]
    refused = run_cli(*base, "--read", "../outside.py")
    assert refused.returncode != 0 and "outside the root" in refused.stderr
    # Without --chat too, a long conversation's budget wins over the no-chat multiplier (8,192 on
    # e3cb94e), and the help says the rule the budget follows.
    no_chat = run_cli(*base, "--conversation-tokens", "120000")
    assert no_chat.returncode == 0, no_chat.stderr
    assert json.loads(no_chat.stdout)["budget"] == 1_500
    assert json.loads(run_cli(*base).stdout)["budget"] == 8_192
    said = " ".join(run_cli("map", "--help").stdout.split())
    assert "times 8 up to 8192 when no --chat file is given" in said
    assert "without --tokens it sets the budget" in said and "with or without --chat" in said


def test_cli_watch_reprints_on_save_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    root = _repo(tmp_path, {**FILES, "pkg/base.py": "def base_entry():\n    pass\n"})
    config = tmp_path / "xdg" / "hybridmap" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("watch_debounce_ms = 100\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "hybridmap", "map", str(root), "--watch", "--mode", "static"),
            *("--format", "json", "--cache-dir", str(tmp_path / "c"), "--tokens", "2000"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = json.loads(proc.stdout.readline())
        assert first["changes"]["first"] is True
        while "watching" not in proc.stderr.readline():
            pass
        write_files(root, {"omega.py": "def omega_entry():\n    pass\n"})
        second = json.loads(proc.stdout.readline())
        assert second["changes"]["new"] == ["omega.py"] and "omega.py: [NEW]" in second["text"]
        assert "omega.py changed: new map" in proc.stderr.readline()
        # In a directory that existed before the watch, then renamed, then deleted.
        write_files(root, {"pkg/inner.py": "def inner_entry():\n    pass\n"})
        third = json.loads(proc.stdout.readline())
        assert third["changes"]["new"] == ["pkg/inner.py"] and "inner_entry" in third["text"]
        (root / "pkg" / "inner.py").rename(root / "pkg" / "moved.py")
        fourth = json.loads(proc.stdout.readline())
        assert fourth["changes"]["new"] == ["pkg/moved.py"] and fourth["changes"]["gone"] == ["pkg/inner.py"]
        (root / "pkg" / "moved.py").unlink()
        fifth = json.loads(proc.stdout.readline())
        assert fifth["changes"]["gone"] == ["pkg/moved.py"] and "pkg/moved.py" not in fifth["text"]
        # An edit of a file the first map read, then a file in directories made after the watch.
        write_files(root, {"pkg/base.py": "def base_renamed():\n    pass\n"})
        sixth = json.loads(proc.stdout.readline())
        assert sixth["changes"]["changed"] == ["pkg/base.py"] and "base_renamed" in sixth["text"]
        assert "base_entry" not in sixth["text"]
        write_files(root, {"later/deep/made.py": "def made_later():\n    pass\n"})
        seventh = json.loads(proc.stdout.readline())
        assert seventh["changes"]["new"] == ["later/deep/made.py"] and "made_later" in seventh["text"]
        proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.returncode == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.mark.asyncio
async def test_watch_never_follows_a_symlink_out_of_the_repository(tmp_path: Path) -> None:
    """A symlink to / in a repository: a recursive watch would walk the whole file system (it
    hung the process). The watch covers the listed files' real directories only; it is in place
    at once, sees edits, and a file under the symlink is never reported."""
    root = _repo(tmp_path)
    (root / "rootlink").symlink_to("/", target_is_directory=True)
    write_files(root, {"pkg/inner.py": "def inner_entry():\n    pass\n"})
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=100)) as repo:
        await repo.map(mode="static", tokens=2_000)
        events = repo.events()
        await asyncio.wait_for(repo.watch(), 20)
        (root / "pkg" / "inner.py").write_text("def inner_entry():\n    return 2\n")
        write_files(root, {"pkg/sub/deeper.py": "def deeper_entry():\n    pass\n"})
        event = await _next_event(events, "files_changed")
        assert "pkg/inner.py" in event.paths
        assert not any(p.startswith("rootlink") for p in event.paths)
        result = await repo.map(mode="static", tokens=2_000)
        assert "pkg/sub/deeper.py" in result.changes.new  # a new directory's file, by the re-read
        # The new directory is watched from then on.
        (root / "pkg" / "sub" / "deeper.py").write_text("def deeper_entry():\n    return 3\n")
        again = await _next_event(events, "files_changed")
        assert "pkg/sub/deeper.py" in again.paths


def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


@pytest.mark.asyncio
@pytest.mark.parametrize("sync_ms", [1_000, 0])
async def test_an_edit_just_before_a_watched_map_is_in_it_without_a_listing(tmp_path: Path, sync_ms: int) -> None:
    """The watch's debounce is a minute here: only the sync (a marker outside the repository,
    seen after every earlier event) puts an edit made just before a map into it. With the sync
    (the default) the map has the edit, a new file in an existing directory and a removal, and
    did not list the tree; with ``watch_sync_ms`` 0 it is the old map, as before this change."""
    root = _repo(tmp_path, {**FILES, "pkg/base.py": "def base_entry():\n    pass\n"})
    overrides = _overrides(tmp_path, watch_debounce_ms=60_000, watch_sync_ms=sync_ms)
    async with AsyncRepoMap(root, overrides=overrides) as repo:
        await repo.map(mode="static", tokens=4_000)
        await asyncio.wait_for(repo.watch(), 20)
        await repo.map(mode="static", tokens=4_000)
        before = _tree(root)
        (root / "alpha.py").write_text("def alpha_renamed_entry():\n    return 1\n")
        write_files(root, {"pkg/fresh.py": "def fresh_entry():\n    pass\n"})
        (root / "gamma.py").unlink()
        result = await repo.map(mode="static", tokens=4_000)
        # A lookup syncs too: a definition written just before it is found.
        write_files(root, {"pkg/later.py": "def later_entry():\n    pass\n"})
        expected = _tree(root)
        found = await repo.search_symbols("later_entry", mode="static")
        assert _tree(root) == expected and set(before) - {"gamma.py"} <= set(expected)  # nothing written here
    if sync_ms:
        assert "alpha_renamed_entry" in result.text and "alpha_entry" not in result.text
        assert "pkg/fresh.py" in result.changes.new and "gamma.py" in result.changes.gone
        assert result.stats["map_refreshed"] == 0  # the watch's batch read the three files; no listing
        assert [match.path for match in found.matches if match.name == "later_entry"] == ["pkg/later.py"]
    else:
        assert "alpha_entry" in result.text and "alpha_renamed_entry" not in result.text
        assert not result.changes.new and not result.changes.gone
        assert not [match for match in found.matches if match.name == "later_entry"]


@pytest.mark.asyncio
async def test_an_edit_before_the_watch_was_in_place_is_in_the_next_map(tmp_path: Path) -> None:
    """An edit made after the last read and before a new watch was in place raised no event:
    the watch reads the tree once when it is in place (the daemon starts its watch after a call,
    and a client may edit at once), and the maps after it trust the watch."""
    root = _repo(tmp_path)
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=60_000)) as repo:
        await repo.map(mode="static", tokens=4_000)
        (root / "alpha.py").write_text("def alpha_before_the_watch():\n    return 1\n")
        await asyncio.wait_for(repo.watch(), 20)
        first = await repo.map(mode="static", tokens=4_000)
        assert "alpha_before_the_watch" in first.text and "alpha_entry" not in first.text
        assert first.stats["map_refreshed"] == 0
        second = await repo.map(mode="static", tokens=4_000, chat_files=["beta.py"])
        assert second.stats["map_refreshed"] == 0


@pytest.mark.asyncio
async def test_watch_sync_markers_live_outside_the_root_and_go_at_close(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path)) as repo:
        await repo.map(mode="static", tokens=2_000)
        await asyncio.wait_for(repo.watch(), 20)
        watcher = repo._live._watcher  # the test reaches in: nothing public says where markers go
        assert watcher is not None and watcher._mark_dir is not None
        mark_dir = Path(watcher._mark_dir)
        assert root not in mark_dir.parents
        assert _directory(mark_dir) == (0o700, [])
        for _ in range(3):
            assert await watcher.sync(5.0)
        assert _directory(mark_dir) == (0o700, [])  # each marker is removed once seen
    assert _directory(mark_dir) is None


def _directory(path: Path) -> tuple[int, list[str]] | None:
    """A directory's permission bits and names; None when it is not there."""
    if not path.is_dir():
        return None
    return path.stat().st_mode & 0o777, sorted(p.name for p in path.iterdir())


@pytest.mark.asyncio
async def test_a_watched_edit_is_read_path_by_path(tmp_path: Path) -> None:
    """Under a watch, an edit, a new file in an existing directory and a removal are re-read by
    asking git about those paths alone: the map's stats say how many were named, and the map is
    the one a fresh process makes of the same tree."""
    root = _repo(tmp_path, {**FILES, "pkg/base.py": "def base_entry():\n    pass\n"})
    from ..conftest import git

    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path, watch_debounce_ms=60_000)) as repo:
        await repo.map(mode="static", tokens=4_000)
        await asyncio.wait_for(repo.watch(), 20)
        (root / "alpha.py").write_text("def alpha_renamed_entry():\n    return 1\n")
        write_files(root, {"pkg/fresh.py": "def fresh_entry():\n    pass\n"})
        (root / "gamma.py").unlink()
        result = await repo.map(mode="static", tokens=4_000, chat_files=["beta.py"])
    assert result.stats["map_refreshed"] == 0 and result.stats["files_named"] == 3, result.stats
    assert "pkg/fresh.py" in result.changes.new and "gamma.py" in result.changes.gone
    async with AsyncRepoMap(root, overrides=_overrides(tmp_path)) as fresh:
        again = await fresh.map(mode="static", tokens=4_000, chat_files=["beta.py"])
    assert again.text == result.text.replace(" [NEW]", "")
