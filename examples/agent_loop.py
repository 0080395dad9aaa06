"""An async agent loop with one warm map per repository.

    python examples/agent_loop.py ROOT [--tokens N]

The map object lives as long as the agent: the first map indexes the repository and starts the
language servers in the background (it never waits for them); every later turn re-reads only
changed files and, once a server is ready, ranks with the edges it resolved. Each turn asks for
the map of *this* turn: the files being edited and what the user wrote. Replace ``call_model``
with your LLM client.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from hybridmap import AsyncRepoMap, MapResult

#: A scripted conversation: (user message, files the agent has in the chat).
TURNS = [
    ("Why does main() return the wrong count?", ["app.py"]),
    ("Show me where load is defined and who calls Runner.run", ["app.py"]),
    ("Now make store/memory.py cache misses", ["store/memory.py"]),
]


def mentions(message: str) -> list[str]:
    """Identifier- and path-shaped words: the map boosts those it knows and ignores the rest."""
    return re.findall(r"[A-Za-z_][\w./]*\w", message)


async def call_model(prompt: str) -> str:
    """Stand-in for the LLM call: the prompt is what matters here."""
    await asyncio.sleep(0)
    return f"(model saw {len(prompt)} characters)"


def prompt_for(message: str, result: MapResult) -> str:
    return f"Repository map:\n{result.text}\nUser: {message}\n"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()
    async with AsyncRepoMap(args.root) as repo:  # closing stops every language server it started
        for turn, (message, chat) in enumerate(TURNS, 1):
            result = await repo.map(chat_files=chat, mentioned_idents=mentions(message), tokens=args.tokens)
            reply = await call_model(prompt_for(message, result))
            servers = ", ".join(f"{k}: {v.state}" for k, v in result.servers.items()) or "none"
            print(
                f"turn {turn}: {len(result.files)} files, {result.tokens}/{result.budget} tokens, "
                f"edges {result.edges}, servers {servers} -> {reply}"
            )
            print("  files:", ", ".join(f.path for f in result.files[:5]))
            await asyncio.sleep(1.0)  # the model thinking: servers work in the background meanwhile


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
