"""What the libraries we drive may log: never a file's content, never a message body.

pygls logs every JSON-RPC message it sends at INFO ("Sending data: <body>": a
``didOpen`` carries the whole file) and echoes unexpected messages in warnings. A
host that configures logging at INFO (the MCP SDK and many agent frameworks do)
would receive the source of every file we open. :func:`guard_library_logging`:

* gives pygls' logger a level of WARNING unless the host chose one for it, so its
  per-message chatter never reaches an INFO root;
* adds :class:`RedactArguments` to every pygls logger, at every level: a record's
  arguments (bodies, params, results) are replaced by their type and size, and a
  traceback's text is dropped (its exception message can quote a body); the format
  string, which is pygls' own, stays.

With no logging configured, Python would print pygls' warnings on stderr, the
agent's terminal: a NullHandler keeps them quiet. Idempotent.
"""

from __future__ import annotations

import logging

#: Logger hierarchies of dependencies that see message bodies or file contents.
GUARDED = ("pygls",)


def _summary(value: object) -> str:
    size = len(value) if isinstance(value, (str, bytes, bytearray, dict, list, tuple)) else None
    kind = type(value).__name__
    return f"<{kind}>" if size is None else f"<{kind} of {size}>"


class RedactArguments(logging.Filter):
    """Keep the record, drop what it quotes: arguments become ``<type of size>``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.msg = str(record.msg)
            record.args = tuple(_summary(a) if not isinstance(a, (int, float)) else a for a in args)
            try:
                record.getMessage()
            except (TypeError, ValueError):  # a mapping-style format: keep only the format string
                record.args = None
        if record.exc_info:
            exc = record.exc_info[1]
            record.msg = f"{record.msg} [{type(exc).__name__ if exc else 'error'}; details withheld]"
            record.exc_info = None
            record.exc_text = None
        return True


_FILTER = RedactArguments()


def guard_library_logging() -> None:
    """Install the guard on every logger of :data:`GUARDED` that exists now (call it after
    importing the library: its module loggers exist by then)."""
    for name in GUARDED:
        top = logging.getLogger(name)
        if top.level == logging.NOTSET:
            top.setLevel(logging.WARNING)
        if not any(isinstance(h, logging.NullHandler) for h in top.handlers):
            top.addHandler(logging.NullHandler())
        loggers = [top] + [
            logger
            for key, logger in logging.root.manager.loggerDict.items()
            if key.startswith(name + ".") and isinstance(logger, logging.Logger)
        ]
        for logger in loggers:
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
