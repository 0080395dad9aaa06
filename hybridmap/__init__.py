"""hybridmap: a ranked, token-budgeted repository map for LLM coding agents."""

from .api import AsyncRepoMap, RepoMap
from .errors import ConfigError, HybridMapError, RequestError, RootError, ServerError
from .model import (
    Diagnostic,
    FileStatus,
    MapRequest,
    MapResult,
    Provenance,
    RankedFile,
    RankedSymbol,
    ServerReport,
    ServerState,
)
from .settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "AsyncRepoMap",
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
    "ServerError",
    "ServerReport",
    "ServerState",
    "Settings",
    "load_settings",
]
