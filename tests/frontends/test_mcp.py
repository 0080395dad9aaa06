"""``hybridmap mcp``, end to end: the SDK's own client spawns the real server process on a real
repository, with the real ty language server behind it, and calls every tool."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import psutil  # type: ignore[import-untyped]
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import CallToolResult

from hybridmap.frontends.mcp.tools import ToolFailure, relative_path
from hybridmap.infra.sanitize import safe_line

from ..conftest import committed_copy
from ..helpers import LSP_FIXTURES, connect, error, fixture_repo, ok, require, run, text

T = TypeVar("T")
TOOLS = {
    "repo_map",
    "search_symbols",
    "symbol_info",
    "file_outline",
    "server_status",
    "compare_maps",
    "record_activity",
    "find_files",
    "agent_notes",
    "dead_code",
    "find_clones",
}


def server_process() -> psutil.Process:
    (proc,) = [p for p in psutil.Process().children() if "mcp" in p.cmdline()]
    return proc


def test_every_tool_end_to_end_with_warm_servers(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.title and tool.description and tool.output_schema is None  # --output-schemas lists them
            assert tool.annotations is not None and tool.annotations.open_world_hint is False
            # Only record_activity changes anything: the session's weights, never a file.
            assert tool.annotations.read_only_hint is (tool.name != "record_activity")
            if tool.name == "record_activity":
                assert tool.annotations.destructive_hint is False and tool.annotations.idempotent_hint is True
            assert tool.input_schema["type"] == "object"
        props = listed["repo_map"].input_schema["properties"]
        assert {"chat_files", "mentioned_files", "mentioned_idents", "message", "tokens", "mode", "server_wait"} <= set(
            props
        )
        assert props["mode"]["enum"] == ["static", "hybrid"] and props["tokens"]["minimum"] == 1
        assert listed["search_symbols"].input_schema["required"] == ["query"]

        first_text, first = await ok(
            session, "repo_map", chat_files=["app.py"], message="Why does load() fail in store/disk.py?"
        )
        assert "store/disk.py:" in first_text and "def load(path: str)" in first_text
        assert first["tokens"] <= first["budget"] == 1024 and first["files"][0]["rank"] > 0
        assert {"store/disk.py", "load"} <= set(first["mentions"]) and first["diagnostics"] == 0
        assert first["servers"]["python"]["state"] in ("starting", "indexing", "ready")
        # A second map waits for ty: resolved edges, and the same ty process serves later calls.
        _, second = await ok(session, "repo_map", chat_files=["app.py"], server_wait=60)
        assert second["servers"]["python"]["state"] == "ready", second["servers"]
        assert second["edges"]["lsp"] >= 3 and second["edges"]["name-match"] == 0
        ty = [p.pid for p in server_process().children(recursive=True) if "ty" in p.name()]
        assert ty
        seen["ty"] = ty

        _, found = await ok(session, "search_symbols", query="RUNNER")
        assert [(m["name"], m["path"]) for m in found["matches"][:2]] == [
            ("Runner", "store/disk.py"),
            ("Runner", "store/memory.py"),
        ]
        _, found = await ok(session, "search_symbols", query="ld", kind="function", path="store/memory.py")
        assert [(m["name"], m["line"]) for m in found["matches"]] == [("load", 6)]
        _, found = await ok(session, "search_symbols", query="laod")  # a typo
        assert found["matches"][0]["name"] == "load"
        notes_text, notes = await ok(session, "agent_notes", cwd="store")
        assert notes["files"] == [] and notes_text.startswith("(no AGENTS.md")
        _, dead = await ok(session, "dead_code")
        assert dead["checked"] > 0 and all(d["provenance"] == "name-match" for d in dead["definitions"])
        _, clones = await ok(session, "find_clones", similarity=0.9)
        assert clones["total"] == len(clones["groups"])
        _, files = await ok(session, "find_files", query="stdisk", limit=1)
        assert files["matches"][0]["path"] == "store/disk.py" and files["total"] == 1 and files["truncated"] is False

        _, info = await ok(session, "symbol_info", name="load", path="store/disk.py")
        (load,) = info["definitions"]
        assert (load["path"], load["line"], load["kind"]) == ("store/disk.py", 4, "function")
        assert load["signature"] == "def load(path: str) -> list[str]:"
        assert [(r["path"], r["source"]) for r in load["references"]] == [
            ("app.py", "language server"),
            ("store/disk.py", "same file"),
        ]
        assert 6 in load["references"][0]["lines"]
        assert info["source"] == "language server" and info["server"]["server"] == "ty"
        # store/memory.py's load is not what app.py calls: the server removed that guess.
        _, other = await ok(session, "symbol_info", name="load", path="store/memory.py")
        assert [(r["path"], r["source"]) for r in other["definitions"][0]["references"]] == [
            ("store/memory.py", "same file")
        ]

        _, outline = await ok(session, "file_outline", path="store/memory.py")
        assert outline["language"] == "python"
        assert [(s["name"], s["kind"], s["line"], s["container"]) for s in outline["symbols"]] == [
            ("RECORDS", "constant", 3, None),
            ("load", "function", 6, None),
            ("Runner", "class", 10, None),
            ("run", "method", 11, "Runner"),
        ]

        _, status = await ok(session, "server_status")
        assert status["servers"]["python"]["state"] == "ready"
        assert status["servers"]["python"]["seconds_to_ready"] >= 0

        compare_text, compared = await ok(session, "compare_maps", chat_files=["app.py"])
        assert compared["resolved"] >= 3 and compared["removed"] >= 3 and compared["servers_ready"]
        assert {"src": "app.py", "dst": "store/disk.py", "ident": "load"} in compared["resolved_first"]
        assert json.loads(compare_text) == compared
        assert [p.pid for p in server_process().children(recursive=True) if "ty" in p.name()] == ty

    run(root, tmp_path, body)
    for pid in seen["ty"]:  # the server stopped ty before it exited
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_paths_outside_the_root_are_tool_errors(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret_outside():\n    pass\n")
    root = fixture_repo(tmp_path, "python")
    os.symlink(outside, root / "linked")

    async def body(session: ClientSession) -> None:
        for path in (
            "../outside/secret.py",
            str(outside / "secret.py"),
            "linked/secret.py",
            "~/x.py",
            "store/../../outside/secret.py",
        ):
            for tool, args in (
                ("file_outline", {"path": path}),
                ("symbol_info", {"name": "x", "path": path}),
                ("search_symbols", {"query": "x", "path": path}),
                ("repo_map", {"chat_files": [path]}),
                ("compare_maps", {"chat_files": [path]}),
            ):
                message = await error(session, tool, **args)
                assert "relative to the repository root" in message or "outside" in message, message
        assert "not a source file" in await error(session, "file_outline", path="README.md")
        assert "no definition named" in await error(session, "symbol_info", name="nothing_here")
        assert "token" in (await error(session, "repo_map", tokens=0)).lower()
        # A path in the free text is never looked up when it leaves the root.
        map_text, summary = await ok(session, "repo_map", message="see ../outside/secret.py", mode="static")
        assert "secret" not in map_text and "../outside/secret.py" not in summary["mentions"]
        _, found = await ok(session, "search_symbols", query="secret_outside")
        assert found["total"] == 0

    started = time.monotonic()
    run(root, tmp_path, body)
    assert time.monotonic() - started < 60


def test_repository_strings_are_sanitized_in_results(git_repo: Any, tmp_path: Path) -> None:
    bidi, esc = "\u202e", "\x1b]0;pwned\x07"
    root = git_repo(
        {
            f"evil{bidi}name.py": f"def trap{bidi}():  # {esc}\n    pass\n",
            "ok.py": f"def fine(x: str = '{esc}') -> None:\n    pass\n",
        }
    )

    async def body(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("repo_map", {"mode": "static"}),
            await session.call_tool("search_symbols", {"query": "fine"}),
            await session.call_tool("search_symbols", {"query": "trap"}),
            await session.call_tool("file_outline", {"path": "ok.py"}),
        ]

    results = run(root, tmp_path, body)
    for result in results:
        assert not result.is_error, text(result)
        out = text(result) + json.dumps(result.structured_content, ensure_ascii=False)
        assert bidi not in out and "\x1b" not in out and "\x07" not in out, out
    assert "evil\\u202ename.py" in text(results[0])


def test_process_exits_on_close_and_stops_its_servers(tmp_path: Path) -> None:
    require("ty")
    root = fixture_repo(tmp_path, "python")
    children: list[psutil.Process] = []

    async def main() -> None:
        async with connect(root, tmp_path) as session:
            await ok(session, "repo_map", server_wait=60)  # ty is up
            proc = server_process()
            children.extend([proc, *proc.children(recursive=True)])

    anyio.run(main)
    log = (tmp_path / "server.log").read_text()
    # It saw the end of stdin and shut down itself (a SIGTERM from the client would not log this).
    assert "the client closed the connection: stopping" in log and "closed: every language server" in log
    assert len(children) >= 2
    for child in children:  # ty was a grandchild: the orphan check would not see it reparented
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE, child


def test_missing_sdk_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        f"from hybridmap.frontends.cli.main import main\nmain(['mcp', {str(tmp_path)!r}])"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'mcp>=2.3,<3'" in proc.stderr and proc.stdout == ""  # hybridmap[mcp] is not on PyPI


def test_initialize_is_answered_before_the_first_map(tmp_path: Path) -> None:
    """A host waits for ``initialize`` before it shows the tools: it is answered before any
    heavy work (the warm-up map of 3,000 files is still running), and within a gross bound (5.4 s
    on e3cb94e; the 0.5 s goal is a benchmark's, docs/benchmarks.md). The root is no project
    (no git, no project file) and has more than ``not_a_project_files``: the log says so once,
    while that map still runs (it said so only when the map ended, a minute on site-packages)."""
    root = tmp_path / "repo"
    for i in range(3_000):
        module = root / f"pkg{i // 100}" / f"mod{i}.py"
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(f"def entry_{i}(x):\n    return helper_{i % 7}(x)\n\n\ndef helper_{i}(y):\n    return y\n")
    log = tmp_path / "server.log"

    async def main() -> float:
        params = _configured_server(root, tmp_path, "not_a_project_files = 1000\n")
        with open(log, "a") as errlog:  # noqa: ASYNC230 (the child's stderr, once)
            started = time.monotonic()
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                answered = time.monotonic() - started
                assert "warm:" not in log.read_text(), log.read_text()
                with anyio.fail_after(120):
                    await _logged(log, "does not look like a project", every=0.02)
                assert "warm:" not in log.read_text(), log.read_text()  # said while the map runs
                with anyio.fail_after(120):
                    await _logged(log, "warm:")
                assert "warm: 3000 files indexed" in log.read_text(), log.read_text()
                await session.call_tool("repo_map", {"tokens": 256})  # a second listing: not said again
                assert log.read_text().count("does not look like a project") == 1, log.read_text()
                return answered

    assert anyio.run(main) < 4.0


#: A warm ``repo_map`` through MCP slower than this, as the median of a session's calls, fails:
#: 1.8-3.3 s on e3cb94e (the server logged 2 ms for each map; the loop was held by the servers'
#: start), 8-40 ms since (docs/benchmarks.md); the bound is for gross stalls only.
WARM_CALL_GROSS_SECONDS = 1.0


def test_warm_repo_maps_are_answered_while_four_servers_start(tmp_path: Path) -> None:
    """An agent's calls right after the first map, while four real servers start, initialize
    and answer (ty, gopls, tsgo, rust-analyzer): each warm ``repo_map`` through the SDK's client
    is answered in a fraction of a second end to end, not after the servers' start-up."""
    for command in ("ty", "gopls", "tsgo", "rust-analyzer"):
        require(command)
    source = tmp_path / "source"
    for language in ("python", "go", "typescript", "rust"):
        shutil.copytree(LSP_FIXTURES / language, source / language)
    root = committed_copy(source, tmp_path / "repo")
    chats = ["python/app.py", "go/main.go", "python/store/disk.py", "rust/src/main.rs", "go/disk/disk.go"]
    chats = [c for c in chats if (root / c).is_file()]
    assert len(chats) >= 4, chats

    async def body(session: ClientSession) -> tuple[list[float], dict[str, Any]]:
        _, first = await ok(session, "repo_map", chat_files=["python/app.py"], mode="hybrid", server_wait=0)
        seconds = []
        for chat in chats:
            started = time.monotonic()
            _, warm = await ok(session, "repo_map", chat_files=[chat], mode="hybrid", server_wait=0)
            seconds.append(time.monotonic() - started)
            assert warm["files"] and 0 < warm["tokens"] <= warm["budget"], warm
        return seconds, first["servers"]

    seconds, servers = run(root, tmp_path, body)
    assert set(servers) == {"python", "go", "typescript", "rust"}, servers
    assert statistics.median(seconds) < WARM_CALL_GROSS_SECONDS, [round(s, 3) for s in seconds]


async def _logged(log: Path, words: str, every: float = 0.2) -> None:
    """Until the server's log holds ``words`` (looked at ``every`` seconds)."""
    while True:
        if _says(log, words):
            return
        await anyio.sleep(every)


def _says(log: Path, words: str) -> bool:
    return words in log.read_text()


def test_bad_root_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "hybridmap", "mcp", str(tmp_path / "nowhere")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("hybridmap: error:"), proc.stderr


def test_a_map_never_imports_the_sdk(git_repo: Any) -> None:
    root = git_repo({"a.py": "def f():\n    pass\n"})
    code = (
        "import sys\nfrom hybridmap.frontends.cli.main import main\n"
        f"main(['map', {str(root)!r}, '--mode', 'static'], standalone_mode=False)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'hybridmap.frontends.mcp')"
        " or m.startswith('hybridmap.frontends.mcp')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("[]"), proc.stdout


def test_the_server_is_built_without_the_sdk_logging_setup(git_repo: Any, tmp_path: Path) -> None:
    """MCPServer() would import rich (0.18 s of initialize) for a handler logging.basicConfig then
    drops: the server is built without it, logs through our plain handler, and the SDK's function
    is back in place afterwards."""
    root = git_repo({"a.py": "def f():\n    pass\n"})
    code = (
        "import asyncio, logging, sys\n"
        "from mcp.server.mcpserver import server as sdk\n"
        "from hybridmap.api.repo import AsyncRepoMap\n"
        "from hybridmap.frontends.mcp.server import build_server\n"
        "from hybridmap.frontends.mcp.tools import State\n"
        "original = sdk.configure_logging\n"
        "async def main():\n"
        f"    async with AsyncRepoMap({str(root)!r}, overrides={{'cache_dir': {str(tmp_path / 'c')!r}}}) as repo:\n"
        "        build_server(State(repo))\n"
        "asyncio.run(main())\n"
        "print('rich' in sys.modules, sdk.configure_logging is original,"
        " [h.formatter._fmt for h in logging.getLogger().handlers])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rich_loaded, restored, formats = proc.stdout.strip().split(" ", 2)
    assert (rich_loaded, restored) == ("False", "True")
    assert "hybridmap mcp" in formats


# --- the pure parts ------------------------------------------------------------------------------


def test_relative_path_refuses_every_way_out(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    os.symlink("/", tmp_path / "pkg" / "up")
    assert relative_path(tmp_path, "./pkg//a.py") == "pkg/a.py"
    for bad in ("", "/etc/passwd", "~root/x", "..", "pkg/../../x", "pkg/up/etc/passwd", "a\x00b"):
        with pytest.raises(ToolFailure):
            relative_path(tmp_path, bad)


def test_safe_line_makes_bidi_visible() -> None:
    assert safe_line("a\u202eb") != "a\u202eb"


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_session_activity_watch_and_map_updated_notifications(tmp_path: Path) -> None:
    """The agent records what it did; a saved edit is watched, re-read, and the client is told
    (``notifications/resources/updated`` for hybridmap://map); the next map says what changed."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "util.py").write_text("def shared_helper(x):\n    return x\n")
    (root / "alpha.py").write_text(
        "from util import shared_helper\n\ndef alpha_entry():\n    return shared_helper(1)\n"
    )
    (root / "beta.py").write_text("from util import shared_helper\n\ndef beta_entry():\n    return shared_helper(2)\n")
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            assert message.params.uri == "hybridmap://map"
            updated.set()

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "cache")],
        )
        with open(tmp_path / "server.log", "a") as errlog:  # noqa: ASYNC230
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                await session.initialize()
                await session.subscribe_resource("hybridmap://map")
                _, first = await ok(session, "repo_map", mode="static", tokens=2000)
                assert first["changes"]["first"] is True
                _, activity = await ok(session, "record_activity", edited=["beta.py"], active="alpha.py")
                assert activity == {"edited": ["beta.py"], "read": [], "active": "alpha.py"}
                bad = await error(session, "record_activity", edited=["../outside.py"])
                assert "'..'" in bad
                (root / "gamma.py").write_text("def gamma_entry():\n    pass\n")
                with anyio.fail_after(30):
                    await updated.wait()
                text_out, summary = await ok(session, "repo_map", mode="static", tokens=2000, conversation_tokens=10)
                assert summary["changes"]["new"] == ["gamma.py"] and "gamma.py: [NEW]" in text_out
                assert summary["budget"] == 2000  # explicit budget wins over the conversation curve
                resource = await session.read_resource("hybridmap://map")
                assert "util.py" in resource.contents[0].text

    anyio.run(main)


# --- the protocol: subscriptions, strict arguments, a small tool list, progress ----------------

RUBY = {
    "lib/shapes.rb": "class Shape\n  def area\n    0\n  end\nend\n",
    "lib/circle.rb": "class Circle < Shape\n  def area\n    3\n  end\nend\n",
}


def _ruby_repo(tmp_path: Path) -> Path:
    """Ruby: no language server configured, so nothing but the watch changes the map (no
    ``answers_improved`` while the test counts notifications)."""
    root = tmp_path / "repo"
    for rel, body in RUBY.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    return root


def _quick_watch_server(root: Path, tmp_path: Path) -> StdioServerParameters:
    """``hybridmap mcp ROOT`` with a 100 ms watch debounce."""
    return _configured_server(root, tmp_path, "watch_debounce_ms = 100\n")


def _configured_server(root: Path, tmp_path: Path, config_toml: str) -> StdioServerParameters:
    """``hybridmap mcp ROOT`` with ``config_toml`` as the user's config (under ``tmp_path``)."""
    config = tmp_path / "xdg" / "hybridmap" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(config_toml)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "hybridmap", "mcp", str(root), "--cache-dir", str(tmp_path / "cache")],
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")},
    )


async def _map_until(session: ClientSession, check: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    with anyio.fail_after(30):
        while True:
            _, summary = await ok(session, "repo_map", mode="static", tokens=4000)
            if check(summary):
                return summary
            await anyio.sleep(0.3)


# The session negotiates 2025-11-25 (the SDK's handshake), where resources/subscribe is the way;
# the client warns that 2026-07-28 replaced it by subscriptions/listen.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_subscribers_alone_are_told_once_per_change_and_every_change_is_mapped(tmp_path: Path) -> None:
    """resources/subscribe is advertised and served; a client that never subscribed hears
    nothing; a subscriber hears one notification per change (on 48637be: "Method not found",
    and one unsolicited notification per request the session had made); a file created in an
    existing directory, renamed, deleted, or in a new directory reaches the next map (on
    48637be a file created in an existing directory never did under the server's watch)."""
    root = _ruby_repo(tmp_path)
    heard: list[float] = []
    arrived = [anyio.Event()]

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            heard.append(time.monotonic())
            arrived[0].set()

    async def quiet_then_count(before: int) -> int:
        await anyio.sleep(2.0)  # debounce 100 ms: any second notification would be here by now
        return len(heard) - before

    async def main() -> None:
        params = _quick_watch_server(root, tmp_path)
        with open(tmp_path / "server.log", "a") as errlog:  # noqa: ASYNC230
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                init = await session.initialize()
                assert init.capabilities.resources is not None and init.capabilities.resources.subscribe is True
                for _ in range(3):  # several requests: none may turn into a notification
                    await ok(session, "repo_map", mode="static", tokens=4000)
                (root / "lib" / "square.rb").write_text("class Square < Shape\nend\n")
                await _map_until(session, lambda m: "lib/square.rb" in m["changes"]["new"], "unsubscribed")
                assert await quiet_then_count(0) == 0, "a client that never subscribed was notified"

                await session.subscribe_resource("hybridmap://map")
                steps: list[tuple[Callable[[], object], Callable[[dict[str, Any]], bool]]] = [
                    (
                        lambda: (root / "lib" / "hexagon.rb").write_text("class Hexagon < Shape\nend\n"),
                        lambda m: "lib/hexagon.rb" in m["changes"]["new"],
                    ),
                    (
                        lambda: (root / "lib" / "hexagon.rb").rename(root / "lib" / "hex.rb"),
                        lambda m: "lib/hex.rb" in m["changes"]["new"] and "lib/hexagon.rb" in m["changes"]["gone"],
                    ),
                    (lambda: (root / "lib" / "hex.rb").unlink(), lambda m: "lib/hex.rb" in m["changes"]["gone"]),
                    (
                        lambda: (
                            (root / "app" / "models").mkdir(parents=True)
                            or (root / "app" / "models" / "user.rb").write_text("class User\nend\n")
                        ),
                        lambda m: "app/models/user.rb" in m["changes"]["new"],
                    ),
                ]
                for change, seen in steps:
                    before = len(heard)
                    arrived[0] = anyio.Event()
                    change()
                    with anyio.fail_after(30):
                        await arrived[0].wait()
                    assert await quiet_then_count(before) == 1, "one change, one notification"
                    await _map_until(session, seen, "subscribed")

                await session.unsubscribe_resource("hybridmap://map")
                before = len(heard)
                (root / "lib" / "circle.rb").write_text("class Circle < Shape\n  def radius\n  end\nend\n")
                await _map_until(session, lambda m: "lib/circle.rb" in m["changes"]["changed"], "unsubscribed")
                assert await quiet_then_count(before) == 0, "notified after unsubscribing"

    anyio.run(main)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_with_a_real_server_each_change_is_told_once(tmp_path: Path) -> None:
    """With ty running, a save changes the map, and so may the server's better answers after
    it: each such change is told once to a subscriber, however many requests the session made
    (on 48637be every change was told once per request: 11 calls, 13-14 per save). Each
    notification is one "map changed" the server logged, and a save is at least one."""
    require("ty")
    root = fixture_repo(tmp_path, "python")
    log = tmp_path / "server.log"
    before_heard = 1_000_000  # set when the save is made
    heard: list[float] = []
    heard_more = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/resources/updated":
            heard.append(time.monotonic())
            if len(heard) > before_heard:
                heard_more.set()

    def told() -> int:
        return log.read_text().count("map changed: ")

    async def settled() -> None:  # nothing told for 3 s: the server's answers have settled too
        last = (len(heard), told())
        while True:
            await anyio.sleep(3.0)
            if (len(heard), told()) == last:
                return
            last = (len(heard), told())

    async def main() -> None:
        params = _quick_watch_server(root, tmp_path)
        with open(log, "a") as errlog:  # noqa: ASYNC230
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                await session.initialize()
                await session.subscribe_resource("hybridmap://map")
                _, first = await ok(session, "repo_map", tokens=4000, server_wait=60)
                assert first["servers"]["python"]["state"] == "ready", first["servers"]
                for _ in range(8):  # requests of every kind: none may multiply what is told
                    await ok(session, "repo_map", tokens=4000, chat_files=["app.py"])
                    await ok(session, "search_symbols", query="app")
                with anyio.fail_after(60):
                    await settled()
                nonlocal before_heard
                before_heard, before_told = len(heard), told()
                app = root / "app.py"
                app.write_text(app.read_text() + "\n\ndef saved_later():\n    return 1\n")
                with anyio.fail_after(60):
                    await heard_more.wait()
                    await settled()
                changes = told() - before_told
                assert changes >= 1 and len(heard) - before_heard == changes, (len(heard) - before_heard, changes)
                _, after = await ok(session, "repo_map", tokens=4000)
                assert after["changes"]["changed"] == ["app.py"], after["changes"]

    anyio.run(main)


def test_tool_list_is_small_and_arguments_are_strict(tmp_path: Path) -> None:
    """The whole tool list a host puts in every conversation, in cl100k tokens (7,634 on
    48637be); every input schema is closed, and an unknown argument is a one-line tool error
    naming it (on 48637be ``tokenz`` was silently dropped and a default map came back)."""
    from hybridmap.pipeline.pack.tokens import make_counter

    root = _ruby_repo(tmp_path)
    count = make_counter("cl100k_base").count

    async def body(session: ClientSession) -> None:
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        document = {"tools": [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]}
        tokens = count(json.dumps(document))
        assert tokens <= 2_500, tokens
        for tool in listed.tools:
            assert tool.input_schema.get("additionalProperties") is False, tool.name
            assert tool.description and "\n" not in tool.description and "  " not in tool.description
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert "title" not in prop and "anyOf" not in prop, (tool.name, name, prop)
        message = await error(session, "repo_map", tokenz=500)
        assert "unknown argument 'tokenz'" in message and "tokens" in message
        plain, good = await ok(session, "repo_map", mode="static", tokens=500)
        assert good["budget"] == 500 and " # " not in plain
        said, _ = await ok(session, "repo_map", mode="static", tokens=500, chat_files=["lib/circle.rb"], reasons=True)
        assert ": # " in said  # each file's reasons after its path

    run(root, tmp_path, body)

    async def with_schemas() -> None:
        async with connect(root, tmp_path, output_schemas=True) as session:
            listed = (await session.list_tools()).tools
            assert all(tool.output_schema for tool in listed)
            _, summary = await ok(session, "repo_map", mode="static", tokens=500)  # validated by the client
            assert summary["budget"] == 500

    anyio.run(with_schemas)


def test_dead_code_sends_progress_as_servers_are_asked(tmp_path: Path) -> None:
    """dead_code asks a ready server for each candidate's references: a client with a progress
    token hears each answer, in order, and one without hears nothing."""
    require("ty")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for i in range(6):
        (root / f"m{i}.py").write_text("".join(f"def unused_{i}_{j}(x):\n    return x\n\n" for j in range(3)))
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def body(session: ClientSession) -> None:
        result = await session.call_tool("dead_code", {"server_wait": 60}, progress_callback=on_progress)
        assert not result.is_error, text(result)
        found = result.structured_content
        assert found is not None and len(found["definitions"]) == 18, found
        assert len(seen) >= 2, seen
        values = [p for p, _, _ in seen]
        assert values == sorted(values) and seen[-1][0] == seen[-1][1], seen
        assert all(m and m.startswith("references: ") for _, _, m in seen), seen
        before = len(seen)
        plain = await session.call_tool("dead_code", {})  # no token: no progress
        assert not plain.is_error and len(seen) == before

    run(root, tmp_path, body)


def test_long_tools_send_progress_when_asked(tmp_path: Path) -> None:
    """find_clones reads every file again: a client that sends a progress token hears how far
    it is, in order, before the result (on 48637be: nothing for ~20 s on a large repository)."""
    root = _ruby_repo(tmp_path)
    body_text = "".join(f"  x{i} = {i} + a * b - c\n" for i in range(8))
    for i in range(12):
        (root / "lib" / f"twin{i}.rb").write_text(f"def twin{i}(a, b, c)\n{body_text}  x0\nend\n")
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def body(session: ClientSession) -> None:
        result = await session.call_tool("find_clones", {"limit": 5}, progress_callback=on_progress)
        assert not result.is_error, text(result)
        assert result.structured_content is not None and result.structured_content["total"] >= 1
        assert seen, "no progress notification"
        values = [p for p, _, _ in seen]
        assert values == sorted(values) and seen[-1][0] == seen[-1][1], seen
        assert all(m and m.startswith("clones: ") for _, _, m in seen), seen
        plain = await session.call_tool("find_clones", {"limit": 5})  # no token: no progress
        assert not plain.is_error

    run(root, tmp_path, body)
