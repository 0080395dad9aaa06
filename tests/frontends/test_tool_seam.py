"""One declaration of a tool's result (issue 26): a feature's JSON document is declared once, in
the feature, beside its ``to_json()``; the MCP tools return it as their structured result (and
output schema), never a copy of its type written again in a front end."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import anyio
import pytest

from hybridmap.features.agents_md import AgentNotesJson
from hybridmap.features.clones import ClonesJson
from hybridmap.features.dead_code import DeadCodeJson
from hybridmap.features.file_search import FileSearchJson
from hybridmap.features.search import SymbolSearchJson

from ..helpers import PROJECT, connect, fixture_repo

PACKAGE = PROJECT / "hybridmap"


def typed_dicts(package: Path, paths: list[Path]) -> dict[str, frozenset[str]]:
    """``module.Class`` -> its field names, for every TypedDict class in ``paths``."""
    out = {}
    for path in paths:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and b.id == "TypedDict" for b in node.bases
            ):
                fields = {
                    s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
                out[f"{path.relative_to(package)}:{node.name}"] = frozenset(fields)
    return out


def redeclared(package: Path) -> list[str]:
    """Front-end TypedDicts with exactly the fields of a feature's or the model's."""
    owned = typed_dicts(package, [*package.glob("features/*.py"), package / "model.py"])
    front = typed_dicts(package, list(package.glob("frontends/**/*.py")))
    by_fields = {fields: name for name, fields in owned.items()}
    return sorted(f"{name} = {by_fields[fields]}" for name, fields in front.items() if fields in by_fields)


def test_no_front_end_declares_a_features_type_again() -> None:
    assert redeclared(PACKAGE) == []


def test_the_check_finds_a_copy(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    (tmp_path / "frontends" / "mcp").mkdir(parents=True)
    (tmp_path / "model.py").write_text("")
    (tmp_path / "features" / "clones.py").write_text(
        "class CloneMemberJson(TypedDict):\n    path: str\n    name: str\n    line: int\n"
    )
    (tmp_path / "frontends" / "mcp" / "tools.py").write_text(
        "class Member(TypedDict):\n    path: str\n    name: str\n    line: int\n"
    )
    package = tmp_path
    assert redeclared(package) == ["frontends/mcp/tools.py:Member = features/clones.py:CloneMemberJson"]


def test_the_mcp_tools_return_the_features_documents(tmp_path: Path) -> None:
    """A real MCP client, with output schemas listed (it validates each structured result
    against its tool's schema): each lookup tool's result is the feature's document."""
    pytest.importorskip("mcp")

    root = fixture_repo(tmp_path, "python")
    calls: dict[str, tuple[dict[str, Any], type]] = {
        "search_symbols": ({"query": "load"}, SymbolSearchJson),
        "find_files": ({"query": "disk"}, FileSearchJson),
        "agent_notes": ({}, AgentNotesJson),
        "dead_code": ({"limit": 1}, DeadCodeJson),
        "find_clones": ({}, ClonesJson),
    }
    seen: dict[str, dict[str, Any]] = {}

    async def main() -> None:
        async with connect(root, tmp_path, output_schemas=True) as session:
            for tool, (arguments, _) in calls.items():
                result = await session.call_tool(tool, arguments)
                assert not result.is_error and result.structured_content is not None, tool
                seen[tool] = result.structured_content

    anyio.run(main)
    for tool, (_, document) in calls.items():
        assert set(seen[tool]) == set(document.__annotations__), tool
    assert seen["search_symbols"]["matches"][0]["match"]  # fields only the feature's document had
    assert seen["find_files"]["matches"][0]["positions"]
    assert len(seen["dead_code"]["definitions"]) <= 1 and seen["dead_code"]["checked"] > 0
