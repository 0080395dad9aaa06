"""A one-line progress bar for the eval on a terminal (stderr); silent when stderr is piped."""

from __future__ import annotations

from typing import TextIO

WIDTH = 24


class ProgressBar:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._enabled = stream.isatty()
        self._shown = False

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self._enabled:
            return
        filled = WIDTH * done // total if total else WIDTH
        self._stream.write(
            f"\r\033[Khybridmap eval [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} commits  {label}"
        )
        self._stream.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self._stream.write("\r\033[K")
            self._stream.flush()
            self._shown = False
