"""Every way a language server can misbehave, as a real process speaking real JSON-RPC.

Each case is configured like any server (a user ``lsp_configs/python.toml``) and checked the
same way: the map comes back within its server wait + :data:`MARGIN`, keeps its static
symbols, reports the server's state and what happened (in ``servers`` and, when the server is
out of service, in ``diagnostics``); a server that failed is dead by the time the map returns;
the **next** map works too (restarted after the backoff, or reported again by policy); and
after ``close()`` no process of any server tree is left (checked by pid and process group).

The elapsed times of one run are in ``docs/reliability.md`` (run this file with
``HYBRIDMAP_FAULT_TIMES=path.json`` to write them).
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from hybridmap import MapResult, RepoMap, ServerState
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry

from ..helpers import FAULT_SERVER, TIMEOUT, alive, fixture_repo, read_pids, user_registry

MARGIN = 3.0
"""Seconds a map may take beyond its server wait."""
BACKOFF = 0.2
"""server_restart_backoff for these tests: the first restart is allowed this long after a failure."""

_TIMES: dict[str, dict[str, float]] = {}


@dataclass(frozen=True)
class Case:
    """What one misbehaviour must look like to the user."""

    mode: str
    state: ServerState
    detail: str
    """Regex the report's detail must match after the first map."""
    next_state: ServerState | None = None
    """State after the second map (default: ``state``)."""
    next_detail: str | None = None
    lsp_edges: bool | None = None
    """True: the session keeps working (the first map already has ``lsp`` edges from it);
    False: nothing was resolved and the static (name-matched) edges stay."""
    wait: float = 4.0
    settings: dict[str, Any] = field(default_factory=dict)
    ready: str = "initialized"
    close_within: float = 4.0
    command: str | None = None
    """Run this instead of ``python fault_server.py MODE`` (missing or broken commands)."""
    child: bool = False
    """The server first starts a grandchild that holds its pipes (and must die with it)."""


RESTARTED = r"\(restarted 1x\)"
CASES = [
    Case("exit-now", ServerState.FAILED, r"^fault: .*(exited with|return) code:? 3", next_detail=RESTARTED),
    Case(
        "crash-on-initialize", ServerState.FAILED, r"^fault: .*code:? 4.*crashing in initialize", next_detail=RESTARTED
    ),
    Case("crash-on-request", ServerState.FAILED, r"^fault: .*exited with code 7", next_detail=RESTARTED),
    # The grandchild keeps the pipes open: the crash must still be seen at once, and the child killed.
    Case("crash-on-request", ServerState.FAILED, r"^fault: .*exited with code 7", next_detail=RESTARTED, child=True),
    Case("crash-mid-reply", ServerState.FAILED, r"^fault: .*exited with code 8", next_detail=RESTARTED),
    # A hung server under the default policy: every request times out, the server stays.
    Case("hang", ServerState.READY, r"request\(s\) timed out, last: textDocument/\w+ after 1s", lsp_edges=False),
    # ...and once it was silent longer than server_silence_limit: killed, restarted, killed.
    Case(
        "hang",
        ServerState.FAILED,
        r"^fault: unresponsive: .*nothing came from the server",
        next_detail=RESTARTED,
        settings={"server_silence_limit": 0.5},
        lsp_edges=False,
    ),
    Case("hang-shutdown", ServerState.READY, r"^fault hang-shutdown$", lsp_edges=True, close_within=2.0 + 1.0 + 2.0),
    Case(
        "progress-forever",
        ServerState.INDEXING,
        r"not ready after \d+s \(1 progress report\(s\) never ended\)",
        ready="progress",
        wait=3.0,
    ),
    Case("flood-stderr", ServerState.READY, r"^fault flood-stderr$", lsp_edges=True),
    Case("flood-stderr-line", ServerState.READY, r"^fault flood-stderr-line$", lsp_edges=True),
    Case(
        "invalid-json",
        ServerState.FAILED,
        r"^fault: protocol error: 3 unreadable messages \(server_max_bad_messages = 3\); last: not JSON",
        next_detail=RESTARTED,
    ),
    Case("short-length", ServerState.READY, r"1 unreadable message\(s\), last: not JSON", lsp_edges=True),
    Case(
        "long-length",
        ServerState.FAILED,
        r"^fault: unresponsive: .*stuck inside a message: \d+ of the \d+ bytes its Content-Length announced",
        next_detail=RESTARTED,
        settings={"server_silence_limit": 0.5},
    ),
    Case(
        "huge-response",
        ServerState.READY,
        r"discarded a 40\.0 MiB message \(over server_max_message_bytes = 16 MiB\)",
        lsp_edges=True,
    ),
    Case(
        "unknown-ids", ServerState.READY, r"^fault unknown-ids; \d+ replies to ids never asked ignored", lsp_edges=True
    ),
    Case("unknown-request", ServerState.READY, r"^fault unknown-request$", lsp_edges=True),
    Case("stdout-noise", ServerState.READY, r"line\(s\) on stdout that are not LSP headers", lsp_edges=True),
    Case("spawn-child", ServerState.READY, r"^fault spawn-child$", lsp_edges=True),
    Case(
        "no-such-path",
        ServerState.MISSING,
        r"^fault: '/nonexistent/hybridmap-fault' does not exist",
        command="/nonexistent/hybridmap-fault",
    ),
    Case(
        "no-such-name",
        ServerState.MISSING,
        r"^fault: 'hybridmap-no-such-server' not installed",
        command="hybridmap-no-such-server",
    ),
    Case(
        "not-executable",
        ServerState.MISSING,
        r"^fault: '.*/fault-server' is not executable",
        command="{tmp}/fault-server",
    ),
    Case("directory", ServerState.MISSING, r"^fault: '.*/fault-dir' is a directory", command="{tmp}/fault-dir"),
    Case(
        "not-a-program",
        ServerState.FAILED,
        r"^fault: cannot start '.*/garbage': Exec format error",
        next_detail=RESTARTED,
        command="{tmp}/garbage",
    ),
]


def case_id(case: Case) -> str:
    return (
        case.mode
        + ("-silence-limit" if "server_silence_limit" in case.settings else "")
        + ("-with-child" if case.child else "")
    )


def broken_commands(tmp_path: Path) -> None:
    """The commands of the cases that cannot be started."""
    script = tmp_path / "fault-server"
    script.write_text(f"#!{sys.executable}\n")
    script.chmod(0o644)  # no +x
    (tmp_path / "fault-dir").mkdir()
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x00\x01\x02 not a program\n")
    garbage.chmod(garbage.stat().st_mode | stat.S_IXUSR)


def timed_map(repo: RepoMap, wait: float) -> tuple[MapResult, float]:
    start = time.monotonic()
    result = repo.map(mode="hybrid", server_wait=wait, tokens=256)
    return result, time.monotonic() - start


def group_alive(pgid: int) -> bool:
    """Is any live process still in process group ``pgid`` (a server leads its own group)?"""
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.info["pid"]) == pgid:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def assert_trees_gone(pids: list[int], within: float = 3.0) -> None:
    deadline = time.monotonic() + within
    while True:
        left = [pid for pid in pids if alive(pid) or group_alive(pid)]
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"server processes (or their groups) survive: {left}")
        time.sleep(0.05)


def check_report(case: Case, result: MapResult, state: ServerState, detail: str) -> None:
    report = result.servers["python"]
    assert report.state is state, f"{case.mode}: {report}"
    assert re.search(detail, report.detail), f"{case.mode}: {report.detail!r} !~ {detail!r}"
    assert "def load" in result.text, "the static symbols are always in the map"
    failing = [d for d in result.diagnostics if d.path == "python" and d.kind.startswith("server_")]
    if state in (ServerState.FAILED, ServerState.MISSING, ServerState.UNTRUSTED):
        # What the user sees beside the map: kind = state, message = the same detail, naming the server.
        assert [d.kind for d in failing] == [f"server_{state}"], result.diagnostics
        assert failing[0].message == report.detail and failing[0].message.startswith("fault: ")
    elif report.detail != f"fault {case.mode}":
        # Alive, but troubled (timeouts, unreadable or unasked-for messages): said beside the map too.
        assert [d.kind for d in failing] == ["server_degraded"], result.diagnostics
        assert failing[0].message.startswith("fault: ")
        assert failing[0].message[len("fault: ") :] in report.detail
    else:
        assert failing == [], result.diagnostics


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_misbehaving_server(case: Case, tmp_path: Path) -> None:
    root = fixture_repo(tmp_path, "python")
    pid_file = tmp_path / "pids"
    broken_commands(tmp_path)
    if case.command is None:
        command, args = sys.executable, [str(FAULT_SERVER), case.mode, "--pid-file", str(pid_file)]
        args += ["--child"] if case.child else []
    else:
        command, args = case.command.format(tmp=tmp_path), []
    registry = user_registry(tmp_path, command, args, ready=case.ready)
    overrides = {"cache_dir": str(tmp_path / "cache"), "server_restart_backoff": BACKOFF, **case.settings}
    repo = RepoMap(root, registry=registry, overrides=overrides)
    try:
        first, first_elapsed = timed_map(repo, case.wait)
        assert first_elapsed <= case.wait + MARGIN, f"{case.mode}: first map took {first_elapsed:.2f}s"
        check_report(case, first, case.state, case.detail)
        if case.lsp_edges:
            assert first.edges.get("lsp", 0) > 0, f"{case.mode}: the session stopped working: {first.edges}"
        elif case.lsp_edges is False:
            assert first.edges.get("lsp", 0) == 0 and first.edges["name-match"] > 0, first.edges
        if case.state is ServerState.FAILED:
            assert_trees_gone(read_pids(pid_file))  # killed when it failed, not at close
        time.sleep(BACKOFF + 0.1)
        second, second_elapsed = timed_map(repo, case.wait)
        assert second_elapsed <= case.wait + MARGIN, f"{case.mode}: next map took {second_elapsed:.2f}s"
        check_report(case, second, case.next_state or case.state, case.next_detail or case.detail)
        if case.lsp_edges:
            assert second.edges.get("lsp", 0) > 0, second.edges
    finally:
        start = time.monotonic()
        repo.close()
        close_elapsed = time.monotonic() - start
    assert close_elapsed <= case.close_within, f"{case.mode}: close took {close_elapsed:.2f}s"
    pids = read_pids(pid_file)
    if case.command is None:
        starts = 2 if (case.next_detail or "").startswith(r"\(restarted") else 1
        assert len(pids) >= starts, f"{case.mode}: expected {starts} server start(s), pid file has {pids}"
    assert_trees_gone(pids)
    _TIMES[case_id(case)] = {
        "first": round(first_elapsed, 2),
        "next": round(second_elapsed, 2),
        "close": round(close_elapsed, 2),
        "wait": case.wait,
    }


def test_huge_response_is_never_buffered(tmp_path: Path) -> None:
    """A 40 MiB reply costs streaming memory only (not the 40 MiB body, nor ~10x that parsed)."""
    root = fixture_repo(tmp_path, "python")
    registry = user_registry(tmp_path, sys.executable, [str(FAULT_SERVER), "huge-response"])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        repo.map(mode="static", tokens=256)  # index first: only the server's share is measured
        tracemalloc.start()
        try:
            result = repo.map(mode="hybrid", server_wait=4, tokens=256)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert "discarded a 40.0 MiB message" in result.servers["python"].detail
    assert peak < 8 * 2**20, f"peak traced allocation {peak / 2**20:.1f} MiB while a 40 MiB reply streamed by"


def test_unknown_request_gets_method_not_found(tmp_path: Path) -> None:
    """The server asked something we have no handler for: we answered with an error, not silence."""
    root = fixture_repo(tmp_path, "python")
    log = tmp_path / "log"
    registry = user_registry(tmp_path, sys.executable, [str(FAULT_SERVER), "unknown-request", "--log", str(log)])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=4, tokens=256)
    assert "reply:srv-unknown:error" in log.read_text().split()
    assert result.edges.get("lsp", 0) > 0  # definitions were held until that answer came


def test_hang_on_document_symbol(tmp_path: Path) -> None:
    """documentSymbol never answered (definition is): maps come back, the requests time out."""
    root = fixture_repo(tmp_path, "python")
    log = tmp_path / "log"
    pid_file = tmp_path / "pids"
    registry = user_registry(
        tmp_path, sys.executable, [str(FAULT_SERVER), "hang-symbols", "--log", str(log), "--pid-file", str(pid_file)]
    )
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        first, elapsed = timed_map(repo, 4.0)
        assert elapsed <= 4.0 + MARGIN and "def load" in first.text
        time.sleep(TIMEOUT + 0.2)  # symbol requests still in flight when the map returned have timed out
        second, elapsed = timed_map(repo, 4.0)
        assert elapsed <= 4.0 + MARGIN and "def load" in second.text
    asked = log.read_text().split()
    assert_trees_gone(read_pids(pid_file))
    if "textDocument/documentSymbol" not in asked:
        pytest.skip("the map does not ask documentSymbol (hang on definition is covered by 'hang')")
    report = second.servers["python"]
    assert report.state is ServerState.READY
    assert re.search(r"request\(s\) timed out, last: textDocument/documentSymbol after 1s", report.detail), report
    assert second.edges.get("lsp", 0) > 0  # definitions still work


@pytest.fixture(scope="module", autouse=True)
def _write_times() -> Any:
    yield
    target = os.environ.get("HYBRIDMAP_FAULT_TIMES")
    if target and _TIMES:
        Path(target).write_text(json.dumps(_TIMES, indent=1, sort_keys=True))


QUIET_SCRIPT = """
import sys
from pathlib import Path
from hybridmap import RepoMap
from hybridmap.languages.registry import BUILTIN_CONFIG_DIR, BUILTIN_QUERY_DIR, LanguageRegistry
root, configs, cache = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for user in sorted(configs.iterdir()):
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    with RepoMap(root, registry=registry, overrides={"cache_dir": cache}) as repo:
        for _ in range(2):
            print(user.name, repo.map(mode="hybrid", server_wait=4, tokens=256).servers["python"].state)
"""


def test_misbehaving_servers_leave_the_terminal_alone(tmp_path: Path) -> None:
    """Nothing on our stderr (the agent's terminal) for quirks the report already names:
    pygls' warnings about unknown ids or methods, asyncio's about writes to a dead server."""
    root = fixture_repo(tmp_path, "python")
    configs = tmp_path / "configs"
    modes = ["unknown-ids", "unknown-request", "crash-mid-reply", "stdout-noise", "invalid-json"]
    for mode in modes:
        (configs / mode).mkdir(parents=True)
        user_registry(configs / mode, sys.executable, [str(FAULT_SERVER), mode])
        (configs / mode / "user_configs" / "python.toml").rename(configs / mode / "python.toml")
        (configs / mode / "user_configs").rmdir()
    proc = subprocess.run(
        [sys.executable, "-c", QUIET_SCRIPT, str(root), str(configs), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 2 * len(modes), proc.stdout
    assert proc.stderr == ""


def test_a_server_that_never_initializes_does_not_hold_back_the_others(tmp_path: Path) -> None:
    """Real ty for the Python files, and for a Go file a real process that never answers
    initialize: the map that waits must still get ty's resolved edges (work starts for each
    server as it gets ready), and say the other server is not ready."""
    from ..helpers import require

    require("ty")
    root = fixture_repo(tmp_path, "python")
    (root / "tool.go").write_text("package main\n\nfunc main() {}\n")
    user = tmp_path / "user_configs"
    user.mkdir()
    (user / "go.toml").write_text(f"""
[language]
name = "go"
grammar = "go"
file-types = ["go"]
language-servers = ["stuck"]

[language-server.stuck]
command = {json.dumps(sys.executable)}
args = {json.dumps([str(FAULT_SERVER), "never-initialize"])}
ready-timeout = 120
""")
    registry = LanguageRegistry.load([BUILTIN_CONFIG_DIR, user], [BUILTIN_QUERY_DIR])
    with RepoMap(root, registry=registry, overrides={"cache_dir": str(tmp_path / "cache")}) as repo:
        result = repo.map(mode="hybrid", server_wait=20, tokens=512)
    assert result.servers["python"].state is ServerState.READY
    assert result.edges["lsp"] >= 3, result.edges
    assert result.servers["go"].state is not ServerState.READY
