"""``hybridmap mcp [ROOT]``: the map of one repository served to agents over MCP (stdio).

:mod:`.tools` holds the tools as plain functions over a warm :class:`~hybridmap.api.repo.AsyncRepoMap`
(no SDK import: testable and reusable); :mod:`.server` registers them on the official ``mcp``
SDK's ``MCPServer``. Nothing here is imported by ``hybridmap map``: the CLI imports this
package only when the ``mcp`` command runs, and this module imports the SDK only in :func:`main`.
"""

from __future__ import annotations

from typing import Any

from ..exits import fail


def main(
    root: str,
    overrides: dict[str, Any],
    watch: bool = True,
    output_schemas: bool = False,
    more_roots: tuple[str, ...] = (),
) -> None:
    """Serve ROOT on stdin/stdout until the client closes; one-line errors on stderr, exit 2."""
    try:
        from .server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "pydantic"):
            raise
        # Not on PyPI yet: the extra is installed from a checkout (scripts/map does it in its .venv).
        fail(
            "the MCP SDK is not installed: pip install 'mcp>=2.3,<3' into this environment "
            "(or, in a checkout: pip install '.[mcp]')"
        )
    serve(root, overrides, watch, output_schemas, more_roots)
