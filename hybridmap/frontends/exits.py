"""How the front ends (``hybridmap map``/``compare``/``servers``/``eval``/``mcp``) end: the exit
codes of the contract (``docs/configuration.md``) and the one line that says why."""

from __future__ import annotations

import sys
from typing import NoReturn

from ..infra.sanitize import safe_line

EXIT_NO_MAP = 1
"""No map could be made: an empty map (nothing to show, or a budget too small for one entry) or
a failure while making it; stderr says why in one line."""
EXIT_USAGE = 2
"""What the user gave is wrong: arguments, root, settings, a chat path outside the root."""
EXIT_INTERRUPTED = 130
"""128 + SIGINT, what shells report for a program stopped by Ctrl-C."""


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``hybridmap: error: MESSAGE`` on stderr and exit. The message is made safe: it can
    name paths the user gave and text a repository controls."""
    sys.stderr.write(f"hybridmap: error: {safe_line(message)}\n")
    sys.stderr.flush()
    sys.exit(code)
