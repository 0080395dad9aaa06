"""The one exception tree of hybridmap.

::

    HybridMapError                 anything hybridmap raises on purpose
    ├── ConfigError                a settings file, language config or query is wrong
    ├── RootError                  the repository root does not exist / is not a directory
    ├── RequestError               a map request is invalid (bad budget, chat file outside root)
    └── ServerError                a language server misbehaved (only seen by server code;
                                   the map turns it into a diagnostic)

Problems with individual files, caches or servers are not exceptions for the
caller: they become :class:`hybridmap.model.Diagnostic` records on the result,
and the map is still made. Only a request that cannot produce any map raises.
"""

from __future__ import annotations


class HybridMapError(Exception):
    """Base class: ``str(err)`` is a one-line message naming what to fix."""


class ConfigError(HybridMapError):
    pass


class RootError(HybridMapError):
    pass


class RequestError(HybridMapError):
    pass


class ServerError(HybridMapError):
    pass
