"""Drive ``hybridmap mcp`` the way an agent host does: the MCP SDK's client over stdio.

    python examples/mcp_client.py ROOT [--wait SECONDS]

Starts ``python -m hybridmap mcp ROOT`` (``hybridmap mcp ROOT`` once installed), lists the tools,
asks for a map, searches a symbol and asks who uses it. Needs the MCP SDK beside hybridmap
(``pip install '/path/to/hybridmap[mcp]'`` from a checkout, or ``pip install 'mcp>=2.3,<3'``).
"""

from __future__ import annotations

import argparse
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def main(root: str, wait: float) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "hybridmap", "mcp", root])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        print("tools:", ", ".join(tool.name for tool in tools))

        result = await session.call_tool(
            "repo_map", {"chat_files": ["app.py"], "message": "who calls load?", "tokens": 512, "server_wait": wait}
        )
        summary = result.structured_content or {}
        print(text_of(result))  # the map text
        print(
            "map:",
            summary.get("tokens"),
            "/",
            summary.get("budget"),
            "tokens; edges",
            summary.get("edges"),
            "; servers",
            {k: v["state"] for k, v in summary.get("servers", {}).items()},
        )

        found = await session.call_tool("search_symbols", {"query": "load", "limit": 5})
        for match in (found.structured_content or {}).get("matches", []):
            print(f"symbol: {match['name']} {match['kind']} {match['path']}:{match['line']}")

        info = await session.call_tool("symbol_info", {"name": "load", "path": "store/disk.py"})
        if info.is_error:  # tool errors are one line, for the model to read
            print("error:", text_of(info))
        else:
            data = info.structured_content or {}
            for ref in data["definitions"][0]["references"]:
                print(f"used by: {ref['path']} lines {ref['lines']} ({ref['source']})")
            print("answered by:", data["source"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--wait", type=float, default=30.0, help="seconds repo_map may wait for servers")
    args = parser.parse_args()
    anyio.run(main, args.root, args.wait)
