"""One map over several roots: real repositories, each with its own ignore rules and settings,
through the API, the CLI, a real MCP client and a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hybridmap.api.roots import AsyncRootsMap, root_names
from hybridmap.errors import RequestError
from hybridmap.model import MapResult, ServerState

from ..conftest import git, write_files
from ..helpers import connect, error, fixture_repo, ok, require, run_cli

CLIENT = {
    "client/api.py": (
        "def fetch_orders(customer_id):\n"
        '    """Orders of one customer."""\n'
        "    return []\n\n\n"
        "def cancel_order(order_id):\n    return True\n"
    ),
    "client/internal/secret.py": "def internal_helper():\n    return 1\n",
    "generated/stub.py": "def generated_stub():\n    return 1\n",
    ".gitignore": "generated/\n",
    # A repository may set ranking keys only: not what is listed, not its own trust.
    "hybridmap.toml": 'exclude = ["client/internal/**"]\nallow_servers_running_repository_code = true\n',
}
SERVICE = {
    "app/handlers.py": (
        "from client.api import fetch_orders\n\n\n"
        "def order_page(customer_id):\n    return len(fetch_orders(customer_id))\n"
    ),
    "app/internal/tools.py": "def internal_tool():\n    return 2\n",
    "app/other.py": "def unrelated():\n    return 1\n",
}


def _repo(path: Path, files: dict[str, str]) -> Path:
    write_files(path, files)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def _roots(tmp_path: Path) -> tuple[Path, Path]:
    return _repo(tmp_path / "service", SERVICE), _repo(tmp_path / "client", CLIENT)


def _map(roots: tuple[Path, ...], tmp_path: Path, **request: Any) -> MapResult:
    async def run() -> MapResult:
        overrides = {"cache_dir": str(tmp_path / "cache")}
        async with AsyncRootsMap(roots, overrides=overrides, start_servers=request.get("mode") == "hybrid") as joined:
            return await joined.map(**request)

    return asyncio.run(run())


def test_one_map_of_two_roots_links_them_and_keeps_each_roots_rules(tmp_path: Path) -> None:
    service, client = _roots(tmp_path)
    result = _map((service, client), tmp_path, chat_files=["service/app/handlers.py"], mode="static", tokens=400)
    paths = [f.path for f in result.files]
    assert paths[0] == "client/client/api.py", result.text  # what the chat file uses, in the other root
    assert "def fetch_orders(customer_id):" in result.text and "client/client/api.py:" in result.text
    assert "service/app/other.py" in paths and "service/app/handlers.py" not in paths  # the chat file
    assert "client/generated/stub.py" not in paths  # client's .gitignore
    assert "client/client/internal/secret.py" in paths  # its hybridmap.toml may not exclude files...
    notes = {(d.path, d.message.split("'")[1]) for d in result.diagnostics if d.kind == "repository_config"}
    assert notes == {  # ... nor trust itself: both said, under the root's name
        ("client/hybridmap.toml", "exclude"),
        ("client/hybridmap.toml", "allow_servers_running_repository_code"),
    }


def test_paths_must_name_a_root(tmp_path: Path) -> None:
    service, client = _roots(tmp_path)
    bad_paths = ("app/handlers.py", "service/../client/client/api.py", "service/app/../../x.py", "/etc/passwd")
    for bad in (*bad_paths, "service"):
        with pytest.raises(RequestError):
            _map((service, client), tmp_path, chat_files=[bad], mode="static")
    absolute = _map((service, client), tmp_path, chat_files=[str(service / "app" / "handlers.py")], mode="static")
    assert "service/app/handlers.py" not in [f.path for f in absolute.files]


def test_roots_of_the_same_name_are_told_apart(tmp_path: Path) -> None:
    assert root_names([Path("/a/lib"), Path("/b/lib"), Path("/c/app"), Path("/d/lib")]) == [
        "lib",
        "lib-2",
        "app",
        "lib-3",
    ]


def test_each_root_has_its_own_server(tmp_path: Path) -> None:
    require("ty")
    python = fixture_repo(tmp_path, "python")
    _, client = _roots(tmp_path)
    result = _map((python, client), tmp_path, chat_files=["python/app.py"], mode="hybrid", server_wait=60, tokens=512)
    assert result.servers["python/python"].state is ServerState.READY  # started in its own root
    assert result.edges.get("lsp", 0) >= 1
    assert "python/store/disk.py" in [f.path for f in result.files]


def test_cli_and_mcp(tmp_path: Path) -> None:
    service, client = _roots(tmp_path)
    cache = str(tmp_path / "cache")
    proc = run_cli("map", str(service), "--root", str(client), "--chat", "service/app/handlers.py",
                   "--mode", "static", "--cache-dir", cache)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Project files:") or proc.stdout.startswith("client/client/api.py:")
    assert "client/client/api.py:" in proc.stdout
    refused = run_cli("map", str(service), "--root", str(client), "--diff", "--cache-dir", cache)
    assert refused.returncode == 2 and "not with --root" in refused.stderr

    pytest.importorskip("mcp")
    import anyio

    async def body() -> tuple[str, dict[str, Any], str]:
        async with connect(service, tmp_path, extra=("--root", str(client))) as session:
            text, structured = await ok(
                session, "repo_map", chat_files=["service/app/handlers.py"], mode="static", tokens=400
            )
            refused = await error(session, "repo_map", chat_files=["service/app/handlers.py"], diff="")
            return text, structured, refused

    text, structured, refused = anyio.run(body)
    assert "client/client/api.py:" in text
    assert structured["files"][0]["path"] == "client/client/api.py"
    assert "maps one root" in refused
