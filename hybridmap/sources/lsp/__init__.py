"""Language servers as a symbol source (see docs/language-servers.md)."""

import pygls.client  # noqa: F401  (pygls' module loggers must exist before they are guarded)
import pygls.protocol  # noqa: F401

from ...logs import guard_library_logging

guard_library_logging()
