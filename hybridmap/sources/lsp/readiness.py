"""Is the server ready, and how is it doing? Its state, its readiness signal, its troubles.

:class:`Readiness` moves a server through STARTING → INDEXING → READY (or FAILED/MISSING) on
the signal its config names (``ready = "initialized"``, ``"progress"``, ``"first-answer"`` or
``"log:PATTERN"``), tracking ``$/progress`` reports for ``"progress"``. :class:`Health` counts
what went wrong without stopping the server (timeouts, unreadable messages, stdout noise,
replies to ids never asked) and gives up on a server that is hung or speaks garbage.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from ...model import ServerState
from ...settings import Settings
from .config import ServerConfig

_LIVE_STATES = (ServerState.STARTING, ServerState.INDEXING, ServerState.READY)


class Readiness:
    PROGRESS_START_GRACE = 5.0
    """With ``ready = "progress"``: a server that starts no progress this long after
    its first opened file is taken as ready (some servers report nothing for small projects)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.state = ServerState.STARTING
        self.detail = ""
        self.events: list[str] = []
        self.started_at = 0.0
        self.ready_at: float | None = None
        self.failed_at: float | None = None
        self._ready = asyncio.Event()
        self._progress_open: set[str] = set()
        self._progress_seen = False
        self._first_open_at: float | None = None
        self.degraded_reason = ""
        """The server's own words that it cannot load the project ("" while none came)."""

    @property
    def alive(self) -> bool:
        return self.state in _LIVE_STATES

    def note(self, event: str) -> None:
        self.events.append(event)
        del self.events[:-50]

    def initialized(self) -> None:
        """The server answered initialize: indexing until its readiness signal."""
        if self.state is ServerState.STARTING:
            self.state = ServerState.INDEXING
        if self.config.ready == "initialized":
            self.mark_ready("initialized")

    def mark_ready(self, why: str) -> None:
        if self.state in (ServerState.STARTING, ServerState.INDEXING):
            self.state = ServerState.READY
            self.ready_at = time.monotonic()
            self.note(f"ready ({why})")
            self._ready.set()

    def fail(self, detail: str) -> None:
        if self.state is not ServerState.FAILED:
            self.state = ServerState.FAILED
            self.detail = detail
            self.failed_at = time.monotonic()
            self.note(f"failed: {detail}")
        self._ready.set()  # wake waiters: the answer is "not ready"

    def missing(self, detail: str) -> None:
        self.state = ServerState.MISSING
        self.detail = detail
        self._ready.set()

    def closed(self) -> None:
        if self.state not in (ServerState.FAILED, ServerState.MISSING, ServerState.READY):
            self.state = ServerState.DISABLED

    # --- the signals ------------------------------------------------------------------

    def on_progress(self, token: str, kind: str | None) -> None:
        if kind == "begin":
            self._progress_seen = True
            self._progress_open.add(token)
        elif kind == "end":
            self._progress_open.discard(token)
            if self.config.ready == "progress" and self._progress_seen and not self._progress_open:
                self.mark_ready("progress ended")

    def on_message(self, message: str) -> None:
        pattern = self.config.ready_log_pattern
        if pattern is not None and pattern.search(message):
            self.mark_ready("log matched")
        self.check_degraded(message)

    def check_degraded(self, message: str, where: str = "") -> None:
        """A message matching one of the config's ``degraded`` patterns: the server is up but
        cannot load the project. The first one is kept, as the server said it (one line)."""
        if self.degraded_reason or not self.config.degraded:
            return
        for pattern in self.config.degraded:
            match = pattern.search(message)
            if match is None:
                continue
            text = " ".join((match.group(1) if match.groups() and match.group(1) else match.group(0)).split())
            self.degraded_reason = (f"{where}: " if where else "") + text[:300]
            hint = self.config.degraded_hint
            self.note(f"degraded: {self.degraded_reason}")
            if hint:
                self.degraded_reason += f" ({hint})"
            return

    @property
    def reported_state(self) -> ServerState:
        """:attr:`state`, except that a live server that said it cannot load the project is
        ``degraded`` (its answers are still used: they may cover what did load)."""
        if self.degraded_reason and self.state in (ServerState.READY, ServerState.INDEXING):
            return ServerState.DEGRADED
        return self.state

    def on_status(self, quiescent: bool, health: str, message: str) -> None:
        """rust-analyzer's ``experimental/serverStatus``: ready when quiescent; a health of
        "warning"/"error" is its reason for not loading (matched against ``degraded``)."""
        if health in ("warning", "error") and message:
            self.check_degraded(message)
        if quiescent and self.config.ready == "server-status":
            self.mark_ready("server status quiescent")

    def on_answer(self, non_empty: bool) -> None:
        if non_empty and self.config.ready == "first-answer":
            self.mark_ready("first non-empty answer")

    def on_first_open(self) -> None:
        if self._first_open_at is None:
            self._first_open_at = time.monotonic()

    def _check_progress_grace(self) -> None:
        if (
            self.config.ready == "progress"
            and not self._progress_seen
            and self._first_open_at is not None
            and time.monotonic() - self._first_open_at > self.PROGRESS_START_GRACE
        ):
            self.mark_ready("no progress reported")

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the readiness signal."""
        deadline = time.monotonic() + max(0.0, timeout)
        while self.state is not ServerState.READY and self.alive:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._check_progress_grace()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._ready.wait(), min(remaining, 0.25))
        self._check_progress_grace()
        return self.state is ServerState.READY

    def waiting_notes(self) -> list[str]:
        """Why a live server is not ready yet, if it is not."""
        waited = time.monotonic() - self.started_at
        limit = self.config.ready_timeout
        if self.state is ServerState.STARTING and self.started_at:
            return [f"waiting for its answer to initialize ({waited:.0f}s so far, ready-timeout {limit:g}s)"]
        if self.degraded_reason and self.alive:
            return [f"cannot load the project: {self.degraded_reason}"]
        if self.state is not ServerState.INDEXING:
            return []
        open_ = len(self._progress_open)
        if waited <= limit:
            return [
                f"waiting for its readiness signal (ready = {self.config.ready}"
                + (f", {open_} progress report(s) open)" if open_ else ")")
            ]
        if not self.started_at:
            return []
        why = f"{open_} progress report(s) never ended" if open_ else "no readiness signal"
        return [f"not ready after {waited:.0f}s ({why}); answers are used but not cached"]


class Health:
    """Trouble that does not stop a server, the latest of each kind in :attr:`troubles`; and the
    two rules that do: too many unreadable messages, and silence while being asked."""

    NOISE_SHOWN = 20

    def __init__(
        self,
        settings: Settings,
        note: Callable[[str], None],
        show: Callable[[str], None],
        give_up: Callable[[str], None],
    ) -> None:
        self._settings = settings
        self._note = note
        self._show = show
        self._give_up = give_up
        self.troubles: dict[str, str] = {}
        self._bad_messages = 0
        self._noise_lines = 0
        self._unknown_replies = 0
        self._timeouts = 0
        self._in_flight = 0
        self._busy_since = 0.0
        self.last_message_at = 0.0

    def heard(self) -> None:
        self.last_message_at = time.monotonic()

    def asking(self) -> None:
        if self._in_flight == 0:
            self._busy_since = time.monotonic()
        self._in_flight += 1

    def answered(self) -> None:
        self._in_flight -= 1

    def discarded(self, size: int) -> str:
        limit = self._settings.server_max_message_bytes
        what = f"discarded a {size / 2**20:.1f} MiB message (over server_max_message_bytes = {limit / 2**20:g} MiB)"
        self.troubles["discarded"] = what
        self._note(what)
        return what

    def bad_message(self, what: str) -> None:
        self._bad_messages += 1
        self.troubles["bad"] = f"{self._bad_messages} unreadable message(s), last: {what}"
        self._note(self.troubles["bad"])
        limit = self._settings.server_max_bad_messages
        if limit and self._bad_messages >= limit:
            self._give_up(
                f"protocol error: {self._bad_messages} unreadable messages "
                f"(server_max_bad_messages = {limit}); last: {what}"
            )

    def noise(self, data: bytes) -> None:
        self._noise_lines += 1
        self.troubles["noise"] = f"{self._noise_lines} line(s) on stdout that are not LSP headers, last: {data[:80]!r}"
        if self._noise_lines <= self.NOISE_SHOWN:  # a banner is worth seeing; an endless stream is not
            self._show(f"stdout: {data[:200].decode('utf-8', 'replace')}")

    def unknown_reply(self, message_id: object) -> None:
        self._unknown_replies += 1  # JSON-RPC says ignore
        self.troubles["unknown"] = f"{self._unknown_replies} replies to ids never asked ignored, last: {message_id!r}"

    def timed_out(self, method: str, limit: float, partial: tuple[int, int] | None) -> None:
        """Note a timeout; a server silent for ``server_silence_limit`` while asked is hung or deaf."""
        self._timeouts += 1
        self.troubles["timeouts"] = f"{self._timeouts} request(s) timed out, last: {method} after {limit:g}s"
        silence_limit = self._settings.server_silence_limit
        silent = time.monotonic() - max(self.last_message_at, self._busy_since)
        if silence_limit <= 0 or silent < silence_limit:
            return
        where = ""
        if partial is not None:
            got, size = partial
            where = f"; stuck inside a message: {got} of the {size} bytes its Content-Length announced"
        self._give_up(
            f"unresponsive: requests time out and nothing came from the server for "
            f"{silent:.1f}s (server_silence_limit = {silence_limit:g}s){where}"
        )
