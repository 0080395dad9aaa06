"""hybridmap: a ranked, token-budgeted repository map for LLM coding agents."""

from typing import TYPE_CHECKING, Any

# Public names are imported lazily (PEP 562): parse workers import
# hybridmap.sources.* and must not pay for pygls, scipy and networkx.
_EXPORTS = {
    "AsyncRepoMap": "api.repo",
    "AsyncRootsMap": "api.roots",
    "RepoMap": "api.sync",
    "Comparison": "features.compare",
    "ConfigError": "errors",
    "HybridMapError": "errors",
    "RequestError": "errors",
    "RootError": "errors",
    "ServerError": "errors",
    "Diagnostic": "model",
    "FileStatus": "model",
    "MapRequest": "model",
    "MapResult": "model",
    "Provenance": "model",
    "RankedFile": "model",
    "RankedSymbol": "model",
    "RunningServer": "model",
    "ServerReport": "model",
    "ServerState": "model",
    "Settings": "settings",
    "load_settings": "settings",
}

if TYPE_CHECKING:
    from .api.repo import AsyncRepoMap
    from .api.roots import AsyncRootsMap
    from .api.sync import RepoMap
    from .errors import ConfigError, HybridMapError, RequestError, RootError, ServerError
    from .features.compare import Comparison
    from .model import (
        Diagnostic,
        FileStatus,
        MapRequest,
        MapResult,
        Provenance,
        RankedFile,
        RankedSymbol,
        RunningServer,
        ServerReport,
        ServerState,
    )
    from .settings import Settings, load_settings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hybridmap' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "AsyncRepoMap",
    "AsyncRootsMap",
    "Comparison",
    "ConfigError",
    "Diagnostic",
    "FileStatus",
    "HybridMapError",
    "MapRequest",
    "MapResult",
    "Provenance",
    "RankedFile",
    "RankedSymbol",
    "RepoMap",
    "RequestError",
    "RootError",
    "RunningServer",
    "ServerError",
    "ServerReport",
    "ServerState",
    "Settings",
    "load_settings",
]
