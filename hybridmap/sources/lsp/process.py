"""One server process and everything it starts: spawn, stderr, exit, memory, and the kill.

No pygls here. The process leads its own session (``start_new_session``), gets
``PR_SET_PDEATHSIG`` so it dies with us, and carries a token in its environment
(:data:`~.launch.TOKEN_VARIABLE`) that every process it starts inherits: at stop, its process
group, its descendants and whatever carries the token are killed (wrappers such as
``basedpyright-langserver`` leave node children behind, and a daemon may double-fork and call
``setsid``). What is left of any server at interpreter exit is killed too (``_LIVE``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil

from ...infra.sandbox import Policy, confined
from ...infra.sandbox.landlock import Support
from .launch import TOKEN_VARIABLE


class SandboxRefused(OSError):
    """The sandbox a process must run in cannot be had here."""


class ServerProcess:
    """A spawned server: its pipes, its stderr as lines, its exit, its whole process tree.

    ``on_line`` gets each stderr line (drained in chunks: a single 4 MiB line would make
    ``readline()`` raise, the drain would stop and the server would block on a full pipe).
    ``on_exit`` gets the return code as soon as the process exits. The exit is polled every
    0.1 s, not awaited with ``process.wait()``: in Python 3.11 that also waits until every pipe
    is closed, so a child that still holds stdout would hide the server's death.
    """

    def __init__(self, token: str, on_line: Callable[[str], None]) -> None:
        self.token = token
        self._on_line = on_line
        self.process: asyncio.subprocess.Process | None = None
        self.exited = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._readers: list[asyncio.Task[Any]] = []

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def spawn(
        self,
        executable: str,
        args: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        policy: Policy,
        *,
        kernel: Support | None = None,
        require_sandbox: bool = True,
    ) -> str:
        """Start the server inside ``policy`` (raises OSError: not executable, exec format
        error...; :class:`SandboxRefused` when the sandbox is required and cannot be had).
        Returns how it is confined (``landlock ABI N``, or why it is not)."""
        with confined(policy, die_with_parent=True, kernel=kernel) as start:
            if require_sandbox and not start.enforced:
                raise SandboxRefused(f"no OS sandbox: {start.reason}")
            _LIVE.add(self)  # from here on something may run: killed at exit even without close
            process = await asyncio.create_subprocess_exec(
                executable,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
                preexec_fn=start.preexec,
            )
        self.process = process
        if process.stdin is None or process.stdout is None or process.stderr is None:  # all asked as PIPE
            raise RuntimeError("the server process has no stdin/stdout/stderr pipe")
        self.add_task(asyncio.create_task(self._drain_stderr(process.stderr)), reads_output=True)
        return start.label

    @property
    def stdout(self) -> asyncio.StreamReader:
        if self.process is None or self.process.stdout is None:
            raise RuntimeError("the server is not running")
        return self.process.stdout

    def write(self, data: bytes) -> None:
        """Write to the server's stdin. Writes after it exited are dropped: asyncio would log
        "pipe closed by peer" on stderr (the agent's terminal) for each of them."""
        process = self.process
        stdin = process.stdin if process is not None else None
        if process is not None and process.returncode is None and stdin is not None and not stdin.is_closing():
            stdin.write(data)

    def watch(
        self, on_exit: Callable[[int | None], None], memory_limit_mb: float, on_memory: Callable[[str], None]
    ) -> None:
        """Call ``on_exit`` when the process exits, ``on_memory`` when its tree outgrows the limit."""
        self._tasks.append(asyncio.create_task(self._watch_exit(on_exit)))
        if memory_limit_mb > 0:
            self._tasks.append(asyncio.create_task(self._watch_memory(memory_limit_mb, on_memory)))

    def add_task(self, task: asyncio.Task[Any], *, reads_output: bool = False) -> None:
        """A task that lives as long as the process (cancelled at :meth:`close`). One that
        ``reads_output`` ends by itself at the end of stdout or stderr: close waits for it."""
        self._tasks.append(task)
        if reads_output:
            self._readers.append(task)

    async def _watch_exit(self, on_exit: Callable[[int | None], None]) -> None:
        process = self.process
        if process is None:
            return
        while process.returncode is None:  # noqa: ASYNC110 - polled on purpose, see the class docstring
            await asyncio.sleep(0.1)
        self.exited.set()
        on_exit(process.returncode)

    async def _watch_memory(self, limit_mb: float, on_memory: Callable[[str], None]) -> None:
        while self.running and self.process is not None:
            await asyncio.sleep(2.0)
            rss = tree_rss_mb(self.process.pid)
            if rss > limit_mb:
                on_memory(f"memory ceiling exceeded: {rss:.0f} MB > {limit_mb:.0f} MB")
                return

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        pending = b""
        with contextlib.suppress(Exception):
            while True:
                chunk = await stream.read(1 << 16)
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-4096:]  # keep a bounded piece of an endless line
                for line in lines:
                    self._on_line(line.decode("utf-8", "replace").rstrip())
        if pending:
            self._on_line(pending.decode("utf-8", "replace").rstrip())

    async def wait_exit(self, grace: float) -> bool:
        """Wait up to ``grace`` seconds for the process to exit (polled, see the class docstring)."""
        process = self.process
        deadline = time.monotonic() + grace
        while process is not None and process.returncode is None and time.monotonic() < deadline:  # noqa: ASYNC110 - see above
            await asyncio.sleep(0.05)
        return process is None or process.returncode is not None

    async def kill_tree(self) -> None:
        """SIGTERM, then SIGKILL after 1 s, to the group, the descendants and the token carriers."""
        process = self.process
        if process is None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = await asyncio.to_thread(self._tree, process.pid)
            _signal_all(process.pid, pids, sig)
            # Not process.wait(): it also waits for the pipes, which a surviving child holds.
            deadline = time.monotonic() + 1.0
            while True:
                gone = (
                    process.returncode is not None and not group_alive(process.pid) and not any(_alive(p) for p in pids)
                )
                if gone or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            if gone:
                break

    def _tree(self, pid: int) -> set[int]:
        """Every process this server started: its descendants, its session and group (a child
        that left the group keeps the session), and whatever carries our token (a daemon that
        double-forked and called setsid keeps only that)."""
        return set(descendants(pid)) | processes_of(pid, self.token)

    def kill_now(self) -> None:
        """At interpreter exit (no loop to wait on): SIGKILL everything this server started."""
        if self.process is not None:
            _signal_all(self.process.pid, self._tree(self.process.pid), signal.SIGKILL)
        else:
            _signal_all(None, processes_of(None, self.token), signal.SIGKILL)

    async def close(self) -> None:
        """Kill the tree, then stop every task that watched it. Idempotent."""
        await self.kill_tree()
        _LIVE.discard(self)
        process = self.process
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            # Let stdout and stderr be read to their end so the transport closes on this loop,
            # not in __del__ once the loop is gone ("Event loop is closed"); process.wait() does
            # not wait for the pipes in 3.11. Bounded: everything that could hold them was killed.
            if self._readers:
                await asyncio.wait(self._readers, timeout=1.0)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task


#: Processes that may have something running; what is left of them is killed at exit.
_LIVE: set[ServerProcess] = set()


@atexit.register
def _kill_leftovers() -> None:
    # A caller that never closed its map (or was interrupted) still leaves nothing behind:
    # PR_SET_PDEATHSIG covers the server itself, not the daemons it started.
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.kill_now()


def _alive(pid: int) -> bool:
    try:
        zombie: str = psutil.STATUS_ZOMBIE  # psutil ships no types
        return bool(psutil.Process(pid).status() != zombie)
    except psutil.Error:
        return False


def group_alive(pgid: int) -> bool:
    """Is a live (non-zombie) process left in process group ``pgid``?"""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for proc in psutil.process_iter(["status"]):
        if proc.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        with contextlib.suppress(ProcessLookupError, psutil.Error):
            if os.getpgid(proc.pid) == pgid:
                return True
    return False


def _signal_all(leader: int | None, pids: set[int] | list[int], sig: int) -> None:
    if leader is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, sig)  # the server leads its own session/group
    for pid in pids:
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def processes_of(leader: int | None, token: str) -> set[int]:
    """Pids in session or group ``leader``, or whose environment holds ``token`` (a /proc scan:
    only our own user's processes are readable, which is all a server can start)."""
    found: set[int] = set()
    needle = f"{TOKEN_VARIABLE}={token}".encode() + b"\0"
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        pid = int(entry.name)
        try:
            if leader is not None and leader in (os.getsid(pid), os.getpgid(pid)):
                found.add(pid)
                continue
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if needle in fh.read() + b"\0":
                    found.add(pid)
        except (OSError, ValueError):
            continue  # gone, or not ours
    return found


def descendants(pid: int) -> list[int]:
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def tree_rss_mb(pid: int) -> float:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total / 2**20
