"""The process's entry point (the ``hybridmap`` script, ``python -m hybridmap``): the command,
then an exit that does not free the heap object by object.

When a command returns, everything it opened is closed (its map's ``with`` block: servers
stopped, the cache and the files' states written). What is left is the interpreter's own
teardown: freeing every object a large index made. After a one-shot map of 100,000 files that
was 5.4 s of a 40.7 s process (``docs/benchmarks.md``, "The cycle collector and the end of a
one-shot process"), spent on memory the kernel takes back at once. So: what Python's exit does
first is done here the same way (wait for threads that are not daemons, run the exit hooks: our
servers' leftover kill, logging's flush, temporary directories' cleanup), the standard streams
are flushed, and the process ends with ``os._exit``.

Only the process's entry point does this. ``main`` itself stays an ordinary click command: the
daemon and tests run it in their own long-lived processes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn

#: The exit status Python itself gives when flushing standard output at exit fails (a reader that
#: closed the pipe).
EXIT_FLUSH_FAILED = 120


def run() -> NoReturn:
    """Run the command line, then :func:`leave` with its status."""
    from .main import main

    try:
        main()
        status: object = 0
    except SystemExit as exc:
        status = exc.code
    leave(status)


def leave(status: object) -> NoReturn:
    """End the process as ``sys.exit(status)`` would, without the interpreter's teardown."""
    if status is None:
        code = 0
    elif isinstance(status, int):
        code = status
    else:  # sys.exit("message"): the message on standard error, status 1
        print(status, file=sys.stderr)
        code = 1
    current = threading.current_thread()
    for thread in threading.enumerate():  # what Python's exit waits for first
        if thread is not current and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # then its exit hooks, in their order
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        code = code or EXIT_FLUSH_FAILED
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)
